//! The run's last step: the run report, the new version published (a delta on the previous
//! version, or a full version) through [`Publisher`], and the report stored beside it.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use super::base::Base;
use super::model_reading::{version_readings, weak_reading_warning};
use super::publish::Publisher;
use super::report::{warned_documents, RunReport, StageReport};
use super::run_stages::StageOutcome;
use super::RunOptions;
use crate::chunk::{Chunker, TokenChunker};
use crate::embed::{version_precisions, Embedder};
use crate::error::{IndexerError, Result};
use crate::snapshot::{layout, run_layout, ChunkerManifest, SnapshotWriter};

/// Where the run read and wrote, and what it ran with.
pub(super) struct RunParts<'a> {
    pub options: &'a RunOptions,
    pub source_uri: &'a str,
    pub writer: &'a SnapshotWriter,
    pub embedder: &'a Arc<dyn Embedder>,
    pub chunker: &'a TokenChunker,
    pub parse_sig: String,
    pub started: Instant,
}

/// Publishes what the stages built on `base` and returns the run report.
pub(super) async fn publish_run(parts: RunParts<'_>, base: Base, stages: StageOutcome) -> Result<RunReport> {
    let RunParts {
        options,
        source_uri,
        writer,
        embedder,
        chunker,
        parse_sig,
        started,
    } = parts;
    let Base {
        listing,
        listed,
        files_listed,
        unchanged_files,
        documents_stored,
        delta_base,
        full_base,
        previous_precisions,
        previous_secs,
        reuse,
        ..
    } = base;
    let StageOutcome {
        builder,
        segmenter,
        counters,
        failures,
        warnings,
        files_fetched,
        fetch_secs,
        parse_busy,
        embed_busy,
        embedded_tokens,
        embed_peak_rss_mib,
        unchanged_documents,
        kept_api_documents,
    } = stages;
    let taken = segmenter.documents();
    let mut report = RunReport {
        source: source_uri.to_string(),
        out: writer.uri().to_string(),
        device: embedder.device_name(),
        files_listed,
        // A document kept after its file failed is counted once, as failed.
        documents_seen: taken - reuse.kept_after_failure.len() + failures.len(),
        documents_failed: failures.len(),
        documents_warned: warned_documents(&warnings),
        failures,
        warnings,
        skipped: listing.skipped,
        followed_links: listing.followed_links,
        reuse,
        embed_peak_rss_mib,
        ..Default::default()
    };
    if taken == 0 && delta_base.is_none() && options.shard.is_none() {
        return Err(nothing_to_publish(&report));
    }
    report.stages = vec![
        // The previous version: its documents (overlapping listing), then the rows of the segments the run needs.
        StageReport::new("read previous", previous_secs, documents_stored as u64, "documents"),
        StageReport::new("fetch", fetch_secs, files_fetched as u64, "files"),
        StageReport::new(
            "parse+chunk",
            parse_busy,
            counters.parsed.load(Ordering::Relaxed),
            "files",
        ),
        StageReport::new("embed", embed_busy, embedded_tokens, "tokens"),
    ];
    // A delta serves the previous version's vectors; a full version those it reused or kept.
    let carried = (delta_base.is_some() || report.reuse.chunks > 0 || !report.reuse.kept_after_failure.is_empty())
        .then_some(previous_precisions)
        .flatten();
    report.precisions = version_precisions(
        carried.as_deref(),
        (embedded_tokens > 0).then_some(embedder.info().precisions.as_slice()),
    );
    let publisher = Publisher {
        builder,
        chunker: ChunkerManifest {
            config: chunker.config(),
            sig: chunker.signature(),
        },
        parse_sig,
        listed,
        run_started: started,
    };
    let cut = segmenter.finish().await?;
    let manifest = match delta_base {
        Some(base) => {
            publisher
                .delta(base, cut, &unchanged_documents, &unchanged_files, &mut report)
                .await?
        }
        None => {
            publisher
                .full(
                    cut,
                    full_base.map(|base| (base.manifest, kept_api_documents)),
                    &mut report,
                )
                .await?
        }
    };
    report.shard = options.shard.clone();
    // A shard's part is not a version yet: `quarry publish` makes one of every shard's.
    report.version = options.shard.is_none().then(|| manifest.version.clone());
    report.languages = version_readings(&manifest);
    report.model_reading_warning = weak_reading_warning(&report.languages);
    if let Some(warning) = &report.model_reading_warning {
        tracing::warn!("{warning}");
    }
    report.wall_secs = started.elapsed().as_secs_f64();
    report.peak_rss_mib = crate::process_memory::peak_rss_mib();
    // LATEST has moved (a shard: its record is stored): what fails from here on is told with
    // the report, not as the run's error (which would say nothing was published).
    let report_json = serde_json::to_value(&report).map_err(|e| IndexerError::snapshot("report", e))?;
    let mut failed_after = Vec::new();
    let stored_at = match &options.shard {
        Some(shard) => run_layout::shard_report(&shard.run_id, shard.shard),
        None => layout::report(&manifest.version),
    };
    if let Err(e) = writer.put_json(&stored_at, &report_json).await {
        failed_after.push(format!("the run report could not be stored in the snapshot ({e})"));
    }
    if let Some(path) = &options.report_path {
        if let Err(e) = std::fs::write(path, serde_json::to_vec_pretty(&report_json).unwrap_or_default()) {
            failed_after.push(format!(
                "the run report could not be written to {} ({e})",
                path.display()
            ));
        }
    }
    if !failed_after.is_empty() {
        report.failed_after_publishing = Some(failed_after.join("; "));
    }
    Ok(report)
}

/// The refusal to publish a version without documents (an empty or unreachable listing, every
/// document failing): the previous version stays.
pub(super) fn nothing_to_publish(report: &RunReport) -> IndexerError {
    let first = report
        .failures
        .first()
        .map(|f| format!("; first failure: {} — {}", f.uri, f.reason_with_detail()))
        .unwrap_or_default();
    IndexerError::NothingToPublish(format!(
        "no document could be indexed ({} failed{first})",
        report.documents_failed
    ))
}
