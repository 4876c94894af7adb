//! `quarry gc SNAPSHOT`: removes old versions and the segments only they named.

use std::process::ExitCode;
use std::time::Duration;

use quarry_indexer::snapshot::{collect_garbage, GcOptions};

use super::{runtime, StoreArgs};

#[derive(clap::Args, Debug)]
pub struct GcArgs {
    /// Snapshot root (folder or s3://bucket/prefix).
    pub snapshot: String,
    /// Versions to keep, LATEST's included (at least 1).
    #[arg(long, env = "QUARRY_GC_KEEP", default_value_t = 3)]
    pub keep: usize,
    /// Never remove objects younger than this (a run may still be writing them): 0, 90s, 30m, 6h, 2d.
    #[arg(long, env = "QUARRY_GC_MIN_AGE", default_value = "1h", value_parser = parse_age)]
    pub min_age: Duration,
    /// Only report what would be removed.
    #[arg(long)]
    pub dry_run: bool,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub store: StoreArgs,
}

fn parse_age(value: &str) -> Result<Duration, String> {
    let value = value.trim();
    let split = value.find(|c: char| !c.is_ascii_digit()).unwrap_or(value.len());
    let (number, unit) = value.split_at(split);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("`{value}` is not an age such as 0, 90s, 30m, 6h or 2d"))?;
    let seconds = match unit {
        "" if number == 0 => 0,
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return Err(format!("`{value}` is not an age such as 0, 90s, 30m, 6h or 2d")),
    };
    Ok(Duration::from_secs(number * seconds))
}

pub fn run(args: GcArgs) -> anyhow::Result<ExitCode> {
    let options = GcOptions {
        keep: args.keep,
        min_age: args.min_age,
        dry_run: args.dry_run,
    };
    let report = runtime()?.block_on(collect_garbage(&args.snapshot, &args.store.options(), &options))?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(ExitCode::SUCCESS);
    }
    let verb = if report.dry_run { "would remove" } else { "removed" };
    println!("snapshot   {} (LATEST {})", args.snapshot, report.latest);
    println!(
        "kept       {} versions, {} segments",
        report.versions_kept.len(),
        report.segments_kept
    );
    println!(
        "{verb:<10} {} versions, {} segments: {} files, {:.1} MiB",
        report.versions_removed.len(),
        report.segments_removed.len(),
        report.files_removed,
        report.bytes_removed as f64 / (1 << 20) as f64
    );
    if report.segments_of_pending_runs > 0 {
        println!(
            "kept       {} segments of sharded runs not yet published",
            report.segments_of_pending_runs
        );
    }
    if !report.runs_removed.is_empty() {
        println!(
            "{verb:<10} the records of sharded runs {}",
            report.runs_removed.join(", ")
        );
    }
    if report.too_young > 0 {
        println!(
            "left       {} unreferenced segments younger than {:?}",
            report.too_young, args.min_age
        );
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::parse_age;
    use std::time::Duration;

    #[test]
    fn ages_parse_with_units() {
        assert_eq!(parse_age("0"), Ok(Duration::ZERO));
        assert_eq!(parse_age("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_age("2d"), Ok(Duration::from_secs(172_800)));
        assert!(parse_age("5").is_err());
        assert!(parse_age("1w").is_err());
        assert!(parse_age("h").is_err());
    }
}
