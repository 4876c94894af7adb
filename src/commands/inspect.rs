//! `quarry inspect SNAPSHOT`: the manifest in human form, and checksum verification.

use std::process::ExitCode;

use quarry_indexer::snapshot::SnapshotReader;
use serde::Serialize;

use super::{runtime, StoreArgs};

#[derive(clap::Args, Debug)]
pub struct InspectArgs {
    /// Snapshot root (folder or s3://bucket/prefix).
    pub snapshot: String,
    /// A version other than LATEST.
    #[arg(long)]
    pub version: Option<String>,
    /// Skip reading every file to verify checksums.
    #[arg(long)]
    pub no_verify: bool,
    /// List the version's documents indexed though read in part, with what was not read (reads
    /// every segment's documents.parquet).
    #[arg(long)]
    pub read_in_part: bool,
    /// Print the manifest and verification as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub store: StoreArgs,
}

pub fn run(args: InspectArgs) -> anyhow::Result<ExitCode> {
    runtime()?.block_on(async {
        let options = args.store.options();
        let reader = match &args.version {
            Some(version) => SnapshotReader::open_version(&args.snapshot, version, &options).await?,
            None => SnapshotReader::open(&args.snapshot, &options).await?,
        };
        let verification = if args.no_verify {
            None
        } else {
            Some(reader.verify().await?)
        };
        let read_in_part = match args.read_in_part {
            true => Some(read_in_part(&reader).await?),
            false => None,
        };
        let m = reader.manifest();
        if args.json {
            let mut value = serde_json::json!({ "manifest": m, "verification": verification });
            if let Some(documents) = &read_in_part {
                value["read_in_part"] = serde_json::to_value(documents)?;
            }
            println!("{}", serde_json::to_string_pretty(&value)?);
        } else {
            println!("snapshot   {}", reader.uri());
            println!(
                "version    {} (format v{}, created {})",
                m.version,
                m.format_version,
                m.created_at.to_rfc3339()
            );
            println!("source     {}", m.source);
            println!(
                "parent     {}",
                m.parent
                    .as_deref()
                    .unwrap_or("none: a full version (or one written before versions named their parent)")
            );
            println!(
                "model      {} ({} dims, {} tokens, {:?} pooling)\n           sha256 {}",
                m.model.name, m.model.dim, m.model.max_tokens, m.model.pooling, m.model.sha256
            );
            let precisions = if m.model.precisions.is_empty() {
                "not recorded".to_string()
            } else {
                m.model.precisions.join(", ")
            };
            println!("           vectors computed as {precisions}");
            println!(
                "chunker    {} tokens, overlap {}, signature {}",
                m.chunker.config.max_tokens, m.chunker.config.overlap_tokens, m.chunker.sig
            );
            println!(
                "index      {} ({}), {} metric, built on {}",
                m.index.kind,
                serde_json::to_string(&m.index.params)?,
                m.index.metric,
                m.index.built_on
            );
            println!("keyword    {} ({})", m.keyword.engine, m.keyword.analyzer);
            let hidden = if m.tombstones.is_empty() {
                String::new()
            } else {
                format!(
                    " (stored rows; {} tombstones hide replaced or deleted ones)",
                    m.tombstones.len()
                )
            };
            println!(
                "counts     {} documents, {} chunks, {} tokens{hidden}",
                m.counts.documents, m.counts.chunks, m.counts.tokens
            );
            let readings = quarry_indexer::pipeline::version_readings(m);
            if readings.is_empty() {
                println!("languages  not measured (written before languages were recorded)");
            } else {
                println!("languages  {}", quarry_indexer::pipeline::languages_line(&readings));
            }
            if let Some(warning) = quarry_indexer::pipeline::weak_reading_warning(&readings) {
                println!("warning    {warning}");
            }
            for segment in &m.segments {
                let index = m.segment_index(segment).factory();
                println!(
                    "segment    {}: {} documents, {} chunks, {index}, {} files",
                    segment.id,
                    segment.documents,
                    segment.chunks,
                    segment.files.len()
                );
            }
            if let Some(documents) = &read_in_part {
                println!("partial    {} documents read in part", documents.len());
                for document in documents {
                    for warning in &document.warnings {
                        println!("           {}: {warning}", document.uri);
                    }
                }
            }
            match &verification {
                None => println!("checksums  not verified (--no-verify)"),
                Some(v) if v.ok() => println!(
                    "checksums  OK: {} files, {} bytes verified",
                    v.files_checked, v.bytes_checked
                ),
                Some(v) => {
                    println!("checksums  FAILED: {} of {} files", v.problems.len(), v.files_checked);
                    for (path, problem) in &v.problems {
                        println!("           {path}: {problem}");
                    }
                }
            }
        }
        Ok(if verification.is_some_and(|v| !v.ok()) {
            ExitCode::FAILURE
        } else {
            ExitCode::SUCCESS
        })
    })
}

/// A live document of the version indexed though read in part.
#[derive(Debug, Serialize)]
struct ReadInPart {
    uri: String,
    warnings: Vec<String>,
}

/// The version's live documents with warnings, by URI.
async fn read_in_part(reader: &SnapshotReader) -> anyhow::Result<Vec<ReadInPart>> {
    let manifest = reader.manifest();
    let tombstones = manifest.tombstone_set();
    let mut documents = Vec::new();
    for segment in &manifest.segments {
        for record in reader.read_segment_documents(&segment.id).await? {
            if !record.warnings.is_empty() && !tombstones.hides_document(&segment.id, &record.doc_id) {
                documents.push(ReadInPart {
                    uri: record.uri,
                    warnings: record.warnings,
                });
            }
        }
    }
    documents.sort_by(|a, b| a.uri.cmp(&b.uri));
    Ok(documents)
}
