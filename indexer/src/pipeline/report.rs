//! The run report: what was seen, indexed, failed (with reasons) and skipped, and how
//! fast each stage went. Printed as a table and written as JSON.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use super::delta::DeltaReport;
use super::model_reading::language_name;
use super::reuse::ReuseReport;
use crate::parse::file_uri_of;
use crate::snapshot::LanguageReading;
use crate::source::{FollowedLink, Skipped};

/// The files with a failure (a failure names a file, or an item inside one).
pub fn failed_files(failures: &[Failure]) -> HashSet<String> {
    failures.iter().map(|f| file_uri_of(&f.uri).to_string()).collect()
}

/// The files that are no document (a picture, an empty file), by URI, with the reason: those
/// whose every failure is the file's own and says so ([`Failure::no_document`]).
pub fn no_document_files(failures: &[Failure]) -> HashMap<String, String> {
    let mut files = HashMap::new();
    let mut other_failures = HashSet::new();
    for failure in failures {
        let file = file_uri_of(&failure.uri);
        if failure.no_document && file == failure.uri {
            files.insert(file.to_string(), failure.reason.clone());
        } else {
            other_failures.insert(file);
        }
    }
    files.retain(|file, _| !other_failures.contains(file.as_str()));
    files
}

/// A document (or file) that failed, at which stage, and why.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Failure {
    pub uri: String,
    pub stage: &'static str,
    /// What a user reads (seed 004's classified messages where one applies).
    pub reason: String,
    /// What the reason leaves out: what was found wrong, the counts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The file is no document (binary, unsupported, empty, no text): the same bytes fail the
    /// same way under the same build, so a later run does not fetch it again while unchanged.
    #[serde(skip)]
    pub no_document: bool,
    /// Set where the file was not read again: the version it is unchanged since, which
    /// reported the same failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unchanged_since: Option<String>,
}

/// Characters of a failure's reason kept: a reason quotes what it failed on (a CSV header, a
/// JSON value), which a hostile file can make as long as itself.
pub const MAX_REASON_CHARS: usize = 600;

impl Failure {
    /// A failure whose reason is cut at [`MAX_REASON_CHARS`], saying how much was left out.
    pub fn new(uri: &str, stage: &'static str, reason: String) -> Self {
        Self {
            uri: uri.to_string(),
            stage,
            reason: shortened(reason),
            detail: None,
            no_document: false,
            unchanged_since: None,
        }
    }

    /// A failure of `error`: its message as the reason, its detail apart.
    pub fn of(uri: &str, stage: &'static str, error: &crate::parse::ParseError) -> Self {
        Self {
            detail: error.detail().map(shortened),
            no_document: error.is_no_document(),
            ..Self::new(uri, stage, error.to_string())
        }
    }

    /// The reason with its detail, for a log line or a one-line message.
    pub fn reason_with_detail(&self) -> String {
        let reason = match &self.detail {
            Some(detail) => format!("{} ({detail})", self.reason),
            None => self.reason.clone(),
        };
        match &self.unchanged_since {
            Some(version) => format!("{reason} (unchanged since version {version}: not read again)"),
            None => reason,
        }
    }
}

fn shortened(reason: String) -> String {
    match reason.char_indices().nth(MAX_REASON_CHARS) {
        None => reason,
        Some((cut, _)) => format!("{}… ({} more bytes left out)", &reason[..cut], reason.len() - cut),
    }
}

/// What a document's parser read less than whole, though the document was indexed: a
/// damaged styles part, a PDF's page whose text could not be extracted.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Warning {
    pub uri: String,
    pub warning: String,
}

/// The documents `warnings` name, each counted once.
pub fn warned_documents(warnings: &[Warning]) -> usize {
    warnings.iter().map(|w| w.uri.as_str()).collect::<HashSet<_>>().len()
}

/// Time and throughput of one stage. Stages overlap, so `busy_secs` is the time the
/// stage itself spent working, and `per_sec` is measured against it.
#[derive(Debug, Clone, Serialize)]
pub struct StageReport {
    pub stage: &'static str,
    pub busy_secs: f64,
    pub items: u64,
    pub unit: &'static str,
    pub per_sec: f64,
}

impl StageReport {
    pub fn new(stage: &'static str, busy_secs: f64, items: u64, unit: &'static str) -> Self {
        let per_sec = if busy_secs > 0.0 { items as f64 / busy_secs } else { 0.0 };
        Self {
            stage,
            busy_secs,
            items,
            unit,
            per_sec,
        }
    }
}

#[derive(Debug, Clone, Serialize, Default)]
pub struct RunReport {
    pub source: String,
    pub out: String,
    /// The published version, if the run published.
    pub version: Option<String>,
    pub device: String,
    /// How the published version's vectors were computed (the manifest's `model.precisions`).
    pub precisions: Vec<String>,
    pub index: String,
    pub files_listed: usize,
    pub documents_seen: usize,
    pub documents_indexed: usize,
    pub documents_failed: usize,
    /// Documents indexed though read in part (those with a warning).
    pub documents_warned: usize,
    pub failures: Vec<Failure>,
    /// Documents indexed from files read less than whole, and what was not read (the
    /// documents this run parsed; by URI).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<Warning>,
    pub skipped: Vec<Skipped>,
    /// Symlinks out of a local source folder that `--follow-symlinks` followed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub followed_links: Vec<FollowedLink>,
    pub chunks: usize,
    pub tokens: u64,
    /// Embeddings taken from the previous version (the embed stage's tokens exclude them).
    pub reuse: ReuseReport,
    /// Set when the run published a delta over the previous version (then `documents_indexed`,
    /// `chunks` and `tokens` count what the whole version serves, not only the new segment).
    pub delta: Option<DeltaReport>,
    /// ANN recall@10 against exact search (publish-time check).
    pub recall_at_10: Option<f64>,
    pub wall_secs: f64,
    pub stages: Vec<StageReport>,
    /// Peak resident memory of the process when the last chunk was embedded, MiB (Linux).
    pub embed_peak_rss_mib: Option<f64>,
    /// Peak resident memory of the process over the whole run, publishing included, MiB
    /// (Linux): what a machine running this corpus needs.
    pub peak_rss_mib: Option<f64>,
    /// The published version's chunks by detected language, with how the model reads them.
    pub languages: Vec<LanguageReading>,
    /// Set when the model reads little of the version's words (vector search will be weak).
    pub model_reading_warning: Option<String>,
    /// What failed after the version was published (LATEST had moved: the version serves),
    /// such as storing this report; `quarry index` then exits with status 3.
    pub failed_after_publishing: Option<String>,
    /// Set when the run was one shard of a sharded run (it recorded its part; `version` is none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<super::ShardRun>,
}

/// The first languages of `readings` with their chunks and the share of their words the model reads whole.
pub fn languages_line(readings: &[LanguageReading]) -> String {
    let mut parts: Vec<String> = readings
        .iter()
        .take(4)
        .map(|r| {
            format!(
                "{} {} chunk{} (model reads {:.0}% of its words whole)",
                language_name(&r.language),
                r.chunks,
                if r.chunks == 1 { "" } else { "s" },
                r.reading.whole_share() * 100.0
            )
        })
        .collect();
    if readings.len() > 4 {
        parts.push(format!("{} more", readings.len() - 4));
    }
    parts.join(", ")
}

impl RunReport {
    /// Adds stages measured once per segment: a stage already reported adds its time and items.
    pub(super) fn add_stages(&mut self, stages: Vec<StageReport>) {
        for stage in stages {
            match self.stages.iter_mut().find(|s| s.stage == stage.stage) {
                Some(known) => {
                    *known = StageReport::new(
                        stage.stage,
                        known.busy_secs + stage.busy_secs,
                        known.items + stage.items,
                        stage.unit,
                    )
                }
                None => self.stages.push(stage),
            }
        }
    }

    /// A human-readable summary table.
    pub fn render_table(&self) -> String {
        let mut out = String::new();
        let line = |out: &mut String, k: &str, v: String| out.push_str(&format!("  {k:<20} {v}\n"));
        out.push_str("quarry index — run report\n");
        line(&mut out, "source", self.source.clone());
        line(&mut out, "snapshot", self.out.clone());
        line(
            &mut out,
            "version",
            self.version.clone().unwrap_or_else(|| "(not published)".into()),
        );
        line(&mut out, "device / index", format!("{} / {}", self.device, self.index));
        line(&mut out, "vectors computed as", self.precisions.join(", "));
        line(&mut out, "files listed", self.files_listed.to_string());
        line(&mut out, "documents seen", self.documents_seen.to_string());
        line(&mut out, "documents indexed", self.documents_indexed.to_string());
        line(&mut out, "documents failed", self.documents_failed.to_string());
        if self.documents_warned > 0 {
            line(
                &mut out,
                "documents warned",
                format!("{} (read in part; listed below)", self.documents_warned),
            );
        }
        line(&mut out, "files skipped", self.skipped.len().to_string());
        if !self.followed_links.is_empty() {
            line(
                &mut out,
                "links followed out",
                format!(
                    "{} (--follow-symlinks; listed in the JSON report)",
                    self.followed_links.len()
                ),
            );
        }
        line(&mut out, "chunks", self.chunks.to_string());
        line(&mut out, "tokens", self.tokens.to_string());
        let reused = match &self.reuse.from_version {
            Some(version) => format!(
                "{} documents, {} chunks from version {version}",
                self.reuse.documents, self.reuse.chunks
            ),
            None => "none (full run)".to_string(),
        };
        line(&mut out, "reused embeddings", reused);
        let changed = &self.reuse.changed_documents;
        if changed.documents > 0 {
            line(
                &mut out,
                "changed documents",
                format!(
                    "{} kept the stored vectors of {} unchanged chunks",
                    changed.documents, changed.chunks
                ),
            );
        }
        if !self.reuse.kept_after_failure.is_empty() {
            line(
                &mut out,
                "kept after failure",
                format!(
                    "{} documents (their files failed; last good version kept)",
                    self.reuse.kept_after_failure.len()
                ),
            );
        }
        if let Some(delta) = &self.delta {
            let plural = if delta.segments == 1 { "" } else { "s" };
            line(
                &mut out,
                "published as",
                format!(
                    "delta over {} ({} segment{plural} in all)",
                    delta.base_version, delta.segments
                ),
            );
            line(
                &mut out,
                "files unchanged",
                format!("{} (not fetched)", delta.files_unchanged),
            );
            line(
                &mut out,
                "documents",
                format!(
                    "{} unchanged, {} written ({} chunks), {} removed",
                    delta.documents_unchanged, delta.documents_written, delta.chunks_written, delta.documents_removed
                ),
            );
            line(
                &mut out,
                "tombstones",
                format!("{} added, {} lifted", delta.tombstones_added, delta.tombstones_lifted),
            );
            if let Some(compaction) = &delta.compaction {
                line(
                    &mut out,
                    "compacted",
                    format!(
                        "{} segments into {} ({} chunks kept, {} dropped)",
                        compaction.merged_segments.len(),
                        compaction.new_segments.len(),
                        compaction.chunks_kept,
                        compaction.chunks_dropped
                    ),
                );
            }
        }
        if let Some(recall) = self.recall_at_10 {
            line(&mut out, "ANN recall@10", format!("{recall:.4}"));
        }
        if !self.languages.is_empty() {
            line(&mut out, "languages", languages_line(&self.languages));
        }
        if let Some(warning) = &self.model_reading_warning {
            line(&mut out, "warning", warning.clone());
        }
        line(&mut out, "wall time", format!("{:.2} s", self.wall_secs));
        if let Some(peak) = self.peak_rss_mib {
            let embedded = self
                .embed_peak_rss_mib
                .map(|mib| format!(" ({mib:.0} MiB when embedding ended)"))
                .unwrap_or_default();
            line(&mut out, "peak memory", format!("{peak:.0} MiB{embedded}"));
        }
        out.push_str(&format!(
            "\n  {:<14} {:>10} {:>12} {:>16}\n",
            "stage", "busy s", "items", "throughput"
        ));
        for stage in &self.stages {
            out.push_str(&format!(
                "  {:<14} {:>10.2} {:>12} {:>12.1} {}/s\n",
                stage.stage, stage.busy_secs, stage.items, stage.per_sec, stage.unit
            ));
        }
        for note in &self.reuse.notes {
            out.push_str(&format!("\n  note: {note}"));
        }
        if !self.reuse.notes.is_empty() {
            out.push('\n');
        }
        if !self.failures.is_empty() {
            out.push_str("\n  failed:\n");
            for failure in &self.failures {
                out.push_str(&format!(
                    "    {} [{}]: {}\n",
                    failure.uri,
                    failure.stage,
                    failure.reason_with_detail()
                ));
            }
        }
        if !self.warnings.is_empty() {
            out.push_str("\n  read in part:\n");
            for warning in &self.warnings {
                out.push_str(&format!("    {}: {}\n", warning.uri, warning.warning));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::ParseError;

    #[test]
    fn a_file_is_no_document_only_where_its_every_failure_is_its_own_and_says_so() {
        let binary = ParseError::Binary("PNG image".into());
        let failures = [
            Failure::of("file:///pic.png", "parse", &binary),
            Failure::of("file:///empty.txt", "parse", &ParseError::Empty),
            // An archive's member that is no document is the archive's item, not the file.
            Failure::of("file:///a.zip#member=logo.png", "parse", &binary),
            // A file corrupted, or a file with another failure beside, is read again.
            Failure::of("file:///b.pdf", "parse", &ParseError::Corrupt("xref".into())),
            Failure::of("file:///c.txt", "parse", &ParseError::NoText),
            Failure::new("file:///c.txt", "fetch", "timed out".into()),
        ];
        let files = no_document_files(&failures);
        let mut names: Vec<&str> = files.keys().map(String::as_str).collect();
        names.sort();
        assert_eq!(names, ["file:///empty.txt", "file:///pic.png"]);
        assert_eq!(files["file:///empty.txt"], ParseError::Empty.to_string());
    }

    #[test]
    fn a_failures_reason_is_cut_short() {
        let header = "column,".repeat(10_000);
        let failure = Failure::new("file:///a.csv", "parse", format!("bad header {header}"));
        assert!(
            failure.reason.chars().count() < MAX_REASON_CHARS + 40,
            "{}",
            failure.reason.len()
        );
        assert!(
            failure.reason.starts_with("bad header column,") && failure.reason.ends_with("more bytes left out)"),
            "{}",
            &failure.reason[failure.reason.len() - 40..]
        );
        assert_eq!(Failure::new("u", "parse", "short é".into()).reason, "short é");
    }

    #[test]
    fn documents_read_in_part_are_counted_once_and_each_warning_listed() {
        let warning = |uri: &str, warning: &str| Warning {
            uri: uri.into(),
            warning: warning.into(),
        };
        let mut report = RunReport::default();
        assert!(!report.render_table().contains("read in part"));
        report.warnings = vec![
            warning("file:///a.docx", "styles damaged"),
            warning("file:///a.docx", "numbering damaged"),
            warning("file:///b.pdf", "page 2 of 2 left out"),
        ];
        report.documents_warned = warned_documents(&report.warnings);
        assert_eq!(report.documents_warned, 2);
        let table = report.render_table();
        assert!(
            table.contains("  documents warned     2 (read in part; listed below)\n"),
            "{table}"
        );
        assert!(
            table.ends_with(
                "\n  read in part:\n    file:///a.docx: styles damaged\n    file:///a.docx: numbering damaged\n    file:///b.pdf: page 2 of 2 left out\n"
            ),
            "{table}"
        );
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["warnings"][2]["warning"], "page 2 of 2 left out");
        assert_eq!(json["documents_warned"], 2);
        assert!(serde_json::to_value(RunReport::default())
            .unwrap()
            .get("warnings")
            .is_none());
    }
}
