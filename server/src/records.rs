//! The seed-000 knowledge-layer records, field for field: CollectionInfo, FileInfo,
//! FileProgress, IngestionJobStatus, with their state enums.

use chrono::{DateTime, Utc};
use quarry_indexer::snapshot::DocumentRecord;
use serde::{Deserialize, Serialize};

type Map = serde_json::Map<String, serde_json::Value>;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct CollectionInfo {
    pub name: String,
    pub description: Option<String>,
    pub file_count: usize,
    pub chunk_count: usize,
    pub created_at: Option<DateTime<Utc>>,
    pub updated_at: Option<DateTime<Utc>>,
    pub backend: String,
    pub metadata: Map,
}

/// File lifecycle: UPLOADING -> INGESTING -> SUCCESS | FAILED.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FileStatus {
    Uploading,
    Ingesting,
    Success,
    Failed,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct FileInfo {
    pub file_id: String,
    pub file_name: String,
    pub collection_name: String,
    pub status: FileStatus,
    pub file_size: Option<u64>,
    pub chunk_count: usize,
    pub uploaded_at: Option<DateTime<Utc>>,
    pub ingested_at: Option<DateTime<Utc>>,
    pub expiration_date: Option<DateTime<Utc>>,
    pub error_message: Option<String>,
    pub metadata: Map,
}

/// Warnings a file's record keeps, at most (then how many more there were).
pub const MAX_FILE_WARNINGS: usize = 16;

/// The warnings of one file's document `records` as its file record lists them: a document
/// inside the file (an archive's member, a mailbox's message) named before its own; at most
/// [`MAX_FILE_WARNINGS`], then how many more.
pub fn file_warnings_of<'a>(records: impl IntoIterator<Item = &'a DocumentRecord>) -> Vec<String> {
    let (mut kept, mut more) = (Vec::new(), 0usize);
    for record in records {
        let inside = record.uri.split_once('#').map(|(_, part)| part);
        for warning in &record.warnings {
            if kept.len() == MAX_FILE_WARNINGS {
                more += 1;
            } else {
                kept.push(match inside {
                    Some(part) => format!("{part}: {warning}"),
                    None => warning.clone(),
                });
            }
        }
    }
    if more > 0 {
        kept.push(format!("and {more} more"));
    }
    kept
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct FileProgress {
    pub file_id: String,
    pub file_name: String,
    pub status: FileStatus,
    pub progress_percent: f64,
    pub error_message: Option<String>,
    pub chunks_created: usize,
}

/// Job lifecycle: PENDING -> PROCESSING -> COMPLETED | FAILED (FAILED when every file failed).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum JobState {
    Pending,
    Processing,
    Completed,
    Failed,
}

impl JobState {
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Processing => "processing",
            Self::Completed => "completed",
            Self::Failed => "failed",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct IngestionJobStatus {
    pub job_id: String,
    pub status: JobState,
    pub submitted_at: DateTime<Utc>,
    pub started_at: Option<DateTime<Utc>>,
    pub completed_at: Option<DateTime<Utc>>,
    pub total_files: usize,
    pub processed_files: usize,
    pub file_details: Vec<FileProgress>,
    pub collection_name: String,
    pub backend: String,
    pub error_message: Option<String>,
    pub metadata: Map,
    /// processed_files / total_files × 100 (the seed's computed property, serialized).
    pub progress_percent: f64,
    /// status is completed or failed.
    pub is_terminal: bool,
}

impl IngestionJobStatus {
    /// Recomputes the derived fields after a change.
    pub fn refresh(&mut self) {
        self.processed_files = self
            .file_details
            .iter()
            .filter(|f| matches!(f.status, FileStatus::Success | FileStatus::Failed))
            .count();
        self.progress_percent = if self.total_files == 0 {
            0.0
        } else {
            self.processed_files as f64 * 100.0 / self.total_files as f64
        };
        self.is_terminal = self.status.is_terminal();
    }
}
