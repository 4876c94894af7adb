//! `quarry publish SNAPSHOT --run-id ID --shards N`: publishes a sharded run once every shard
//! has recorded its part (see `quarry index --shards`).

use std::process::ExitCode;

use quarry_indexer::pipeline::{publish_shards, ShardPublishReport};

use super::{at_least_one, runtime, StoreArgs};

#[derive(clap::Args, Debug)]
pub struct PublishArgs {
    /// Snapshot root the shards wrote into (folder or s3://bucket/prefix).
    pub snapshot: String,
    /// The run's id, as its shards were given it.
    #[arg(long, env = "QUARRY_RUN_ID")]
    pub run_id: String,
    /// How many shards the run has.
    #[arg(long, env = "QUARRY_SHARDS", value_parser = at_least_one::<usize>)]
    pub shards: usize,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub store: StoreArgs,
}

pub fn run(args: PublishArgs) -> anyhow::Result<ExitCode> {
    let report = runtime()?.block_on(publish_shards(
        &args.snapshot,
        &args.store.options(),
        &args.run_id,
        args.shards,
    ))?;
    print_publish(&report, args.json)?;
    Ok(ExitCode::SUCCESS)
}

/// The publish report on stdout: JSON, or lines.
pub fn print_publish(report: &ShardPublishReport, json: bool) -> anyhow::Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(report)?);
        return Ok(());
    }
    if report.already_published {
        println!(
            "published  {} (run {} was already published: nothing written now)",
            report.version, report.run_id
        );
        return Ok(());
    }
    let built = match &report.delta_base {
        Some(base) => format!("a delta on {base}"),
        None => "a full version".into(),
    };
    println!(
        "published  {} (run {}, {} shards, {built})",
        report.version, report.run_id, report.shards
    );
    println!(
        "documents  {} served: {} written, {} removed, {} failed, {} read in part",
        report.documents,
        report.documents_written,
        report.documents_removed,
        report.documents_failed,
        report.documents_warned
    );
    if report.documents_failed + report.documents_warned > 0 {
        println!(
            "           each listed in the version's run report (reports/{}.json)",
            report.version
        );
    }
    println!(
        "segments   {} added, {} in the version; tombstones {} added, {} lifted; {} files",
        report.segments_added, report.segments, report.tombstones_added, report.tombstones_lifted, report.files
    );
    for (shard, summary) in report.shard_summaries.iter().enumerate() {
        let first = summary
            .first_failure
            .as_ref()
            .map(|f| format!("; first failure: {f}"))
            .unwrap_or_default();
        let warned = summary
            .first_warning
            .as_ref()
            .map(|w| format!("; first read in part: {w}"))
            .unwrap_or_default();
        println!(
            "shard {shard:<4} {} files, {} documents ({} written, {} failed, {} read in part) in {:.1} s{first}{warned}",
            summary.files_listed,
            summary.documents_indexed,
            summary.documents_written,
            summary.documents_failed,
            summary.documents_warned,
            summary.wall_secs
        );
    }
    println!("publish    {:.2} s", report.publish_secs);
    Ok(())
}
