//! `quarry versions SNAPSHOT`: every version of a root, which one LATEST names, which ones a
//! rollback left, and whether each one's files are all there.

use std::process::ExitCode;

use quarry_indexer::snapshot::{list_versions, VersionState};

use super::{runtime, StoreArgs};

#[derive(clap::Args, Debug)]
pub struct VersionsArgs {
    /// Snapshot root (folder or s3://bucket/prefix).
    pub snapshot: String,
    /// Print the list as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub store: StoreArgs,
}

pub fn run(args: VersionsArgs) -> anyhow::Result<ExitCode> {
    let listing = runtime()?.block_on(list_versions(&args.snapshot, &args.store.options()))?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&listing)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{:<26} {:<20} {:<11} {:>10} {:>11} {:>9} {:>10}  {:<40}  files",
        "version",
        "created (UTC)",
        "state",
        "documents",
        "chunks",
        "segments",
        "tombstones",
        "run: written / removed / failed / warned"
    );
    for v in &listing.versions {
        let state = match v.state {
            VersionState::Latest => "LATEST",
            VersionState::Earlier => "earlier",
            VersionState::Pending => "pending",
            VersionState::RolledBack => "rolled back",
        };
        let files = if v.missing_files.is_empty() {
            "all there".to_string()
        } else {
            format!("{} missing or of another size", v.missing_files.len())
        };
        let segments = format!("{} (+{})", v.segments, v.new_segments);
        let run = match &v.run {
            Some(run) => format!(
                "{} / {} / {} / {}",
                run.documents_written,
                run.documents_removed.map_or("-".to_string(), |n| n.to_string()),
                run.documents_failed,
                run.documents_warned
            ),
            None => "no run report".to_string(),
        };
        println!(
            "{:<26} {:<20} {:<11} {:>10} {:>11} {:>9} {:>10}  {run:<40}  {files}",
            v.version,
            v.created_at.format("%Y-%m-%d %H:%M:%S"),
            state,
            v.documents,
            v.chunks,
            segments,
            v.tombstones
        );
    }
    Ok(ExitCode::SUCCESS)
}
