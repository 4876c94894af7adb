//! `quarry rollback SNAPSHOT`: makes an earlier version LATEST again (a bad night undone), after
//! checking its files; records the rollback so `gc` and later rollbacks skip what it abandoned.

use std::process::ExitCode;

use quarry_indexer::snapshot::{roll_back, RollbackOptions, RollbackTarget};

use super::{runtime, StoreArgs};

#[derive(clap::Args, Debug)]
pub struct RollbackArgs {
    /// Snapshot root (folder or s3://bucket/prefix).
    pub snapshot: String,
    /// The version to serve: an id from `quarry versions`, or `previous` (the newest earlier
    /// version no rollback abandoned and whose files are all there).
    #[arg(long, default_value = "previous")]
    pub to: RollbackTarget,
    /// Check only that the target's files are there at their sizes, not their checksums
    /// (which reads every byte; from S3, downloads them).
    #[arg(long)]
    pub no_verify: bool,
    /// Say what would happen; change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub store: StoreArgs,
}

pub fn run(args: RollbackArgs) -> anyhow::Result<ExitCode> {
    let options = RollbackOptions {
        target: args.to,
        verify: !args.no_verify,
        dry_run: args.dry_run,
    };
    let report = runtime()?.block_on(roll_back(&args.snapshot, &args.store.options(), &options))?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(ExitCode::SUCCESS);
    }
    if !report.changed {
        println!("LATEST already is {}: nothing changed", report.to);
        return Ok(ExitCode::SUCCESS);
    }
    let verb = if report.dry_run { "would move" } else { "moved" };
    println!("LATEST     {verb} from {} to {}", report.from, report.to);
    match &report.verification {
        Some(v) => println!(
            "checksums  OK: {} files, {} bytes verified",
            v.files_checked, v.bytes_checked
        ),
        None => println!("checksums  not verified (--no-verify): its files are there at their sizes"),
    }
    println!(
        "abandoned  {} newer versions: {}",
        report.abandoned.len(),
        report.abandoned.join(", ")
    );
    for note in &report.notes {
        println!("note       {note}");
    }
    Ok(ExitCode::SUCCESS)
}
