//! `quarry compact SNAPSHOT`: merges segments from their stored embeddings (into one, or as
//! few as --segment-chunks allows) and drops the rows tombstones hide, as the next version.

use std::process::ExitCode;

use quarry_indexer::pipeline::{compact, segments_to_merge, CompactOptions};
use quarry_indexer::snapshot::{SnapshotReader, SnapshotWriter};

use super::{runtime, StoreArgs};

#[derive(clap::Args, Debug)]
pub struct CompactArgs {
    /// Snapshot root (folder or s3://bucket/prefix).
    pub snapshot: String,
    /// Merge every segment (default: the small ones, once there are more than --max-small).
    #[arg(long)]
    pub all: bool,
    /// Segments with fewer chunks than this count as small.
    #[arg(long, default_value_t = 50_000)]
    pub small_chunks: usize,
    /// Merge the small segments once there are more than this many.
    #[arg(long, default_value_t = 8)]
    pub max_small: usize,
    /// Live chunks per merged segment at most: consecutive segments merge into one until it
    /// would hold more (the memory a compaction needs is about one merged segment's rows).
    #[arg(long, default_value_t = quarry_indexer::pipeline::DEFAULT_SEGMENT_CHUNKS, value_parser = super::at_least_one::<usize>)]
    pub segment_chunks: usize,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub store: StoreArgs,
}

pub fn run(args: CompactArgs) -> anyhow::Result<ExitCode> {
    let store = args.store.options();
    let report = runtime()?.block_on(async {
        let reader = SnapshotReader::open(&args.snapshot, &store).await?;
        let options = CompactOptions {
            small_segment_chunks: args.small_chunks,
            max_small_segments: args.max_small,
            max_segment_chunks: args.segment_chunks,
            ..Default::default()
        };
        let merge = if args.all {
            reader.manifest().segments.iter().map(|s| s.id.clone()).collect()
        } else {
            segments_to_merge(reader.manifest(), &options)
        };
        let writer = SnapshotWriter::open(&args.snapshot, &store)?;
        anyhow::Ok(compact(&reader, &writer, &merge, &options).await?.0)
    })?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else if let Some(version) = &report.version {
        println!("published  {version}");
        let into = if report.new_segments.is_empty() {
            "(none: every row was tombstoned)".to_string()
        } else {
            report.new_segments.join(", ")
        };
        println!("merged     {} segments into {into}", report.merged_segments.len());
        println!(
            "chunks     {} kept, {} dropped; documents {} kept, {} dropped",
            report.chunks_kept, report.chunks_dropped, report.documents_kept, report.documents_dropped
        );
        println!("tombstones {} -> {}", report.tombstones_before, report.tombstones_after);
    } else {
        println!("nothing to compact");
    }
    Ok(ExitCode::SUCCESS)
}
