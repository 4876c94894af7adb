//! Upload jobs: files saved to the data dir, a persisted IngestionJobStatus, a worker pool
//! with a concurrency limit, per-file states UPLOADING -> INGESTING -> SUCCESS | FAILED and
//! job states PENDING -> PROCESSING -> COMPLETED | FAILED. Jobs a stopped server left
//! unfinished resume at the next start.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use chrono::Utc;
use quarry_indexer::parse::ParseError;
use quarry_indexer::pipeline::{Failure, VersionChange};
use quarry_indexer::source::RawDocument;

use super::Ingestion;
use crate::collection::Collection;
use crate::events::{FileRef, IngestionEvent, StageProgress};
use crate::ingest::online::{chunker_for, process_file, publish, FileSettings, StoredVectors, USER_ID_KEY};
use crate::persist::{read_json, write_json};
use crate::records::{FileInfo, FileProgress, FileStatus, IngestionJobStatus, JobState};

/// Every job, in memory and on disk (one JSON file per job).
pub struct JobBook {
    dir: PathBuf,
    jobs: Mutex<HashMap<String, IngestionJobStatus>>,
}

impl JobBook {
    pub fn open(dir: PathBuf) -> std::io::Result<Self> {
        std::fs::create_dir_all(&dir)?;
        let mut jobs = HashMap::new();
        for entry in std::fs::read_dir(&dir)?.flatten() {
            if entry.path().extension().is_some_and(|e| e == "json") {
                if let Some(job) = read_json::<IngestionJobStatus>(&entry.path())? {
                    jobs.insert(job.job_id.clone(), job);
                }
            }
        }
        Ok(Self {
            dir,
            jobs: Mutex::new(jobs),
        })
    }

    pub fn get(&self, job_id: &str) -> Option<IngestionJobStatus> {
        self.jobs.lock().expect("jobs lock").get(job_id).cloned()
    }

    pub fn all(&self) -> Vec<IngestionJobStatus> {
        self.jobs.lock().expect("jobs lock").values().cloned().collect()
    }

    /// Applies a change to a job and persists it.
    pub fn update(&self, job_id: &str, change: impl FnOnce(&mut IngestionJobStatus)) -> Option<IngestionJobStatus> {
        let mut jobs = self.jobs.lock().expect("jobs lock");
        let job = jobs.get_mut(job_id)?;
        change(job);
        job.refresh();
        if let Err(e) = write_json(&self.dir.join(format!("{job_id}.json")), job) {
            tracing::error!("job {job_id}: cannot persist: {e}");
        }
        Some(job.clone())
    }

    /// Applies a change to a job in memory only: for progress within a state, which a restart
    /// starts over anyway (a job's record holds every file, so writing it at each percent of
    /// each file would write a large job's record thousands of times). The next
    /// [`JobBook::update`] persists it with the rest.
    pub fn update_unsaved(&self, job_id: &str, change: impl FnOnce(&mut IngestionJobStatus)) {
        let mut jobs = self.jobs.lock().expect("jobs lock");
        if let Some(job) = jobs.get_mut(job_id) {
            change(job);
            job.refresh();
        }
    }

    /// Records a new job, unless its idempotency key (`metadata.idempotency_key`) is that of
    /// an earlier job of the same collection: then that job is handed back and nothing is
    /// recorded. The check and the insert hold one lock, so two requests with one key make
    /// one job.
    pub fn insert(&self, job: IngestionJobStatus) -> std::io::Result<Result<(), IngestionJobStatus>> {
        let mut jobs = self.jobs.lock().expect("jobs lock");
        if let Some(key) = job.metadata.get(IDEMPOTENCY_KEY).and_then(|k| k.as_str()) {
            let earlier = jobs.values().find(|j| {
                j.collection_name == job.collection_name
                    && j.metadata.get(IDEMPOTENCY_KEY).and_then(|k| k.as_str()) == Some(key)
            });
            if let Some(earlier) = earlier {
                return Ok(Err(earlier.clone()));
            }
        }
        write_json(&self.dir.join(format!("{}.json", job.job_id)), &job)?;
        jobs.insert(job.job_id.clone(), job);
        Ok(Ok(()))
    }

    /// Forgets a job and its record (one whose submission failed half-way).
    fn remove(&self, job_id: &str) {
        self.jobs.lock().expect("jobs lock").remove(job_id);
        let _ = std::fs::remove_file(self.dir.join(format!("{job_id}.json")));
    }
}

/// One uploaded file, saved to disk.
#[derive(Debug, Clone)]
pub struct Upload {
    pub file_id: String,
    pub file_name: String,
    pub path: PathBuf,
    pub size: u64,
    /// Tags its documents get (the upload's `tags` field), for search filters.
    pub tags: Vec<String>,
    /// The user its documents belong to (the upload's `user_id` field; `metadata.user_id`).
    pub user_id: Option<String>,
    /// The media type its multipart part declared (`text/plain; charset=koi8-r`): its `charset`
    /// is the encoding a text that is not UTF-8 is read in, as an S3 object's `Content-Type`.
    pub content_type: Option<String>,
}

pub fn uploads_dir(state: &Ingestion, job_id: &str) -> PathBuf {
    state.uploads_root.join(job_id)
}

/// Where a job keeps the `Idempotency-Key` of the request that submitted it.
pub const IDEMPOTENCY_KEY: &str = "idempotency_key";

/// Where a job records (saved) the file it is parsing and embedding, until that file is done:
/// found at the next start, the process stopped while on that file, which may be why it stopped.
pub const FILE_IN_PROGRESS: &str = "file_in_progress";

/// What a file found in progress at start-up fails with.
pub const STOPPED_WHILE_PARSING: &str = "the server stopped while parsing this file; upload it again to retry";

/// What a submission did.
pub enum Submitted {
    /// A new job, started.
    New(String),
    /// An earlier job submitted with the same idempotency key; the uploads were not taken.
    Earlier(IngestionJobStatus),
}

/// Records a job for saved uploads and starts it, unless `idempotency_key` is an earlier
/// job's. A submission that fails records nothing (no job, no file records).
pub fn submit(
    state: &Arc<Ingestion>,
    collection: &Arc<Collection>,
    job_id: String,
    uploads: Vec<Upload>,
    idempotency_key: Option<String>,
) -> std::io::Result<Submitted> {
    let now = Utc::now();
    let job = IngestionJobStatus {
        job_id: job_id.clone(),
        status: JobState::Pending,
        submitted_at: now,
        started_at: None,
        completed_at: None,
        total_files: uploads.len(),
        processed_files: 0,
        file_details: uploads
            .iter()
            .map(|u| FileProgress {
                file_id: u.file_id.clone(),
                file_name: u.file_name.clone(),
                status: FileStatus::Uploading,
                progress_percent: 0.0,
                error_message: None,
                chunks_created: 0,
            })
            .collect(),
        collection_name: collection.name().to_string(),
        backend: "quarry".into(),
        error_message: None,
        metadata: {
            let mut metadata = serde_json::json!({ "uploads": uploads.iter().map(|u| serde_json::json!({"file_id": u.file_id, "file_name": u.file_name, "size": u.size, "tags": u.tags, "user_id": u.user_id, "content_type": u.content_type})).collect::<Vec<_>>() })
                .as_object()
                .cloned()
                .unwrap_or_default();
            if let Some(key) = idempotency_key {
                metadata.insert(IDEMPOTENCY_KEY.into(), key.into());
            }
            metadata
        },
        progress_percent: 0.0,
        is_terminal: false,
    };
    if let Err(earlier) = state.jobs.insert(job)? {
        return Ok(Submitted::Earlier(earlier));
    }
    {
        // The job book's lock is never taken inside the files' lock ([`set_file`] takes
        // them the other way round).
        let details = state.jobs.get(&job_id).map(|j| j.file_details).unwrap_or_default();
        let mut files = collection.files.lock().expect("files lock");
        for (progress, upload) in details.iter().zip(&uploads) {
            files.push(file_record(collection, &job_id, progress, upload));
        }
    }
    if let Err(e) = state.collections.save_files(collection) {
        // Nothing of the submission stays: the client was told it failed.
        let ids: std::collections::HashSet<&str> = uploads.iter().map(|u| u.file_id.as_str()).collect();
        collection
            .files
            .lock()
            .expect("files lock")
            .retain(|f| !ids.contains(f.file_id.as_str()));
        state.jobs.remove(&job_id);
        return Err(e);
    }
    refresh_job_metrics(state);
    tokio::spawn(run(state.clone(), collection.clone(), job_id.clone(), uploads));
    Ok(Submitted::New(job_id))
}

/// A FileInfo for a file of a job.
fn file_record(collection: &Collection, job_id: &str, progress: &FileProgress, upload: &Upload) -> FileInfo {
    let mut record = scratch_record(collection, job_id, progress);
    record.file_size = Some(upload.size);
    if !upload.tags.is_empty() {
        record.metadata.insert("tags".into(), upload.tags.clone().into());
    }
    if let Some(user_id) = &upload.user_id {
        record.metadata.insert(USER_ID_KEY.into(), user_id.clone().into());
    }
    record
}

/// A FileInfo for a file of a job, with what its progress says only.
fn scratch_record(collection: &Collection, job_id: &str, progress: &FileProgress) -> FileInfo {
    FileInfo {
        file_id: progress.file_id.clone(),
        file_name: progress.file_name.clone(),
        collection_name: collection.name().to_string(),
        status: progress.status,
        file_size: None,
        chunk_count: 0,
        uploaded_at: Some(Utc::now()),
        ingested_at: None,
        expiration_date: None,
        error_message: None,
        metadata: serde_json::json!({ "job_id": job_id })
            .as_object()
            .cloned()
            .unwrap_or_default(),
    }
}

fn refresh_job_metrics(state: &Ingestion) {
    let jobs = state.jobs.all();
    for s in [
        JobState::Pending,
        JobState::Processing,
        JobState::Completed,
        JobState::Failed,
    ] {
        state
            .metrics
            .jobs
            .with_label_values(&[s.as_str()])
            .set(jobs.iter().filter(|j| j.status == s).count() as i64);
    }
}

fn set_file(
    state: &Ingestion,
    collection: &Collection,
    job_id: &str,
    file_id: &str,
    change: impl Fn(&mut FileProgress, &mut FileInfo),
) {
    state.jobs.update(job_id, |job| {
        let mut files = collection.files.lock().expect("files lock");
        let Some(progress) = job.file_details.iter_mut().find(|f| f.file_id == file_id) else {
            return;
        };
        let info_at = files.iter().position(|f| f.file_id == file_id);
        let mut scratch = scratch_record(collection, job_id, progress);
        let info = match info_at {
            Some(at) => &mut files[at],
            None => &mut scratch,
        };
        change(progress, info);
    });
    if let Err(e) = state.collections.save_files(collection) {
        tracing::error!("collection {}: cannot persist files: {e}", collection.name());
    }
}

/// Changes a file's progress in its job only (not its FileInfo), in memory.
fn set_job_file(state: &Ingestion, job_id: &str, file_id: &str, change: impl FnOnce(&mut FileProgress)) {
    state.jobs.update_unsaved(job_id, |job| {
        if let Some(progress) = job.file_details.iter_mut().find(|f| f.file_id == file_id) {
            change(progress);
        }
    });
}

/// Which file of which job `upload` is, for its events.
fn file_ref(collection: &Collection, job_id: &str, upload: &Upload) -> FileRef {
    FileRef {
        collection_name: collection.name().to_string(),
        job_id: job_id.to_string(),
        file_id: upload.file_id.clone(),
        file_name: upload.file_name.clone(),
    }
}

/// A file's progress in its job, and the event that says so.
fn report_progress(state: &Ingestion, file: &FileRef, at: StageProgress) {
    set_job_file(state, &file.job_id, &file.file_id, |progress| {
        progress.progress_percent = at.percent.floor()
    });
    state.events.publish(IngestionEvent::progress(file, at));
}

fn fail_file(state: &Ingestion, collection: &Collection, job_id: &str, upload: &Upload, reason: &str) {
    fail_file_with_detail(state, collection, job_id, upload, reason, None);
}

/// The file failed with `reason` (seed 004's message, for the user); `detail`, what the message
/// leaves out, goes into its FileInfo's `metadata.error_detail` and the event's `error_detail`.
fn fail_file_with_detail(
    state: &Ingestion,
    collection: &Collection,
    job_id: &str,
    upload: &Upload,
    reason: &str,
    detail: Option<&str>,
) {
    set_file(state, collection, job_id, &upload.file_id, |progress, info| {
        progress.status = FileStatus::Failed;
        progress.progress_percent = 100.0;
        progress.error_message = Some(reason.to_string());
        info.status = FileStatus::Failed;
        info.error_message = Some(reason.to_string());
        match detail {
            Some(detail) => info.metadata.insert("error_detail".into(), detail.into()),
            None => info.metadata.remove("error_detail"),
        };
        info.ingested_at = Some(Utc::now());
    });
    state.events.publish(IngestionEvent::failed(
        &file_ref(collection, job_id, upload),
        reason,
        detail,
    ));
}

/// A file of a job that parsed, chunked and embedded, waiting for the job's publish.
struct Succeeded {
    upload: Upload,
    doc_ids: Vec<String>,
    chunks: usize,
    tokens: u64,
    /// What the file was read without (its record's `metadata.warnings`).
    warnings: Vec<String>,
}

/// Runs one job on a worker slot.
async fn run(state: Arc<Ingestion>, collection: Arc<Collection>, job_id: String, uploads: Vec<Upload>) {
    let Ok(_slot) = state.ingest_slots.clone().acquire_owned().await else {
        return;
    };
    state.jobs.update(&job_id, |job| {
        job.status = JobState::Processing;
        job.started_at = Some(Utc::now());
    });
    refresh_job_metrics(&state);
    let chunker = match chunker_for(&state, collection.manifest().as_ref()) {
        Ok(chunker) => chunker,
        Err(e) => return finish(&state, &collection, &job_id, &uploads, Some(e)),
    };
    // Chunks whose text the collection already serves take the stored vector.
    let stored = Arc::new(collection.searcher().map_or(StoredVectors::None, |searcher| {
        StoredVectors::Collection(searcher.snapshot().clone())
    }));
    let mut documents = Vec::new();
    let mut embedded_chunks = 0;
    let mut succeeded: Vec<Succeeded> = Vec::new();
    for upload in &uploads {
        let file = file_ref(&collection, &job_id, upload);
        set_file(&state, &collection, &job_id, &upload.file_id, |progress, info| {
            progress.status = FileStatus::Ingesting;
            info.status = FileStatus::Ingesting;
        });
        state.events.publish(IngestionEvent::started(&file));
        report_progress(&state, &file, StageProgress::started());
        let bytes = match std::fs::read(&upload.path) {
            Ok(bytes) => bytes,
            Err(e) => {
                fail_file(
                    &state,
                    &collection,
                    &job_id,
                    upload,
                    &format!("upload could not be read back: {e}"),
                );
                continue;
            }
        };
        let raw = RawDocument {
            uri: format!("upload://{}/{}/{}", collection.name(), upload.file_id, upload.file_name),
            relative_path: upload.file_name.clone(),
            size: bytes.len() as u64,
            bytes: bytes.into(),
            etag: None,
            source: "upload".into(),
            content_type: upload.content_type.clone(),
        };
        state.jobs.update(&job_id, |job| {
            job.metadata
                .insert(FILE_IN_PROGRESS.into(), upload.file_id.clone().into());
        });
        let (worker_state, worker_chunker, worker_stored, upload_tags, upload_user) = (
            state.clone(),
            chunker.clone(),
            stored.clone(),
            upload.tags.clone(),
            upload.user_id.clone(),
        );
        let progress_file = file.clone();
        let outcome = tokio::task::spawn_blocking(move || {
            // The file's percent in its job changes, and an event goes out, once per whole
            // percent at most.
            let shown = Mutex::new(StageProgress::started().percent);
            let progress = |at: StageProgress| {
                let mut shown = shown.lock().expect("progress lock");
                if at.percent.floor() > shown.floor() {
                    *shown = at.percent;
                    report_progress(&worker_state, &progress_file, at);
                }
            };
            let settings = FileSettings {
                chunker: worker_chunker,
                stored: &worker_stored,
                tags: &upload_tags,
                user_id: upload_user.as_deref(),
                progress: &progress,
            };
            process_file(&worker_state, &raw, settings)
        })
        .await
        .unwrap_or_else(|e| {
            let worker = ParseError::Corrupt(format!("the parse task stopped: {e}"));
            Err(Failure::of(&upload.file_name, "parse", &worker))
        });
        state.jobs.update(&job_id, |job| {
            job.metadata.remove(FILE_IN_PROGRESS);
        });
        match outcome {
            Ok(file) => {
                let docs = file.documents;
                embedded_chunks += file.embedded_chunks;
                let doc_ids = docs.iter().map(|d| d.record.doc_id.clone()).collect();
                let chunks = docs.iter().map(|d| d.chunks.len()).sum();
                let tokens = docs.iter().map(|d| d.tokens()).sum();
                documents.extend(docs);
                succeeded.push(Succeeded {
                    upload: upload.clone(),
                    doc_ids,
                    chunks,
                    tokens,
                    warnings: file.warnings,
                });
            }
            Err(failure) => fail_file_with_detail(
                &state,
                &collection,
                &job_id,
                upload,
                &failure.reason,
                failure.detail.as_deref(),
            ),
        }
    }
    let mut job_error = None;
    if !documents.is_empty() {
        for file in &succeeded {
            report_progress(
                &state,
                &file_ref(&collection, &job_id, &file.upload),
                StageProgress::storing(file.chunks),
            );
        }
        let _guard = collection.publish_lock.lock().await;
        match publish(
            &state,
            &collection,
            VersionChange {
                documents,
                tombstones: Vec::new(),
                embedded_chunks,
            },
        )
        .await
        {
            Ok(manifest) => {
                for file in &succeeded {
                    set_file(&state, &collection, &job_id, &file.upload.file_id, |progress, info| {
                        progress.status = FileStatus::Success;
                        progress.progress_percent = 100.0;
                        progress.chunks_created = file.chunks;
                        info.status = FileStatus::Success;
                        info.chunk_count = file.chunks;
                        info.ingested_at = Some(Utc::now());
                        info.metadata.insert("doc_ids".into(), file.doc_ids.clone().into());
                        info.metadata.insert("token_count".into(), file.tokens.into());
                        info.metadata
                            .insert("snapshot_version".into(), manifest.version.clone().into());
                        if !file.warnings.is_empty() {
                            info.metadata.insert("warnings".into(), file.warnings.clone().into());
                        }
                    });
                    state.events.publish(IngestionEvent::completed(
                        &file_ref(&collection, &job_id, &file.upload),
                        file.chunks,
                        file.tokens,
                    ));
                }
            }
            Err(e) => {
                for file in &succeeded {
                    fail_file(
                        &state,
                        &collection,
                        &job_id,
                        &file.upload,
                        &format!("Publishing failed: {e}"),
                    );
                }
                job_error = Some(e);
            }
        }
    }
    finish(&state, &collection, &job_id, &uploads, job_error);
}

/// Terminal state, and the temporary files removed.
fn finish(state: &Ingestion, collection: &Collection, job_id: &str, uploads: &[Upload], error: Option<String>) {
    if let Some(error) = &error {
        for upload in uploads {
            let pending = state.jobs.get(job_id).is_some_and(|j| {
                j.file_details.iter().any(|f| {
                    f.file_id == upload.file_id && !matches!(f.status, FileStatus::Success | FileStatus::Failed)
                })
            });
            if pending {
                fail_file(state, collection, job_id, upload, error);
            }
        }
    }
    state.jobs.update(job_id, |job| {
        let any_success = job.file_details.iter().any(|f| f.status == FileStatus::Success);
        job.status = if any_success {
            JobState::Completed
        } else {
            JobState::Failed
        };
        job.completed_at = Some(Utc::now());
        if !any_success {
            job.error_message = Some(
                error
                    .clone()
                    .unwrap_or_else(|| format!("all {} file(s) failed", job.total_files)),
            );
        }
    });
    let _ = std::fs::remove_dir_all(uploads_dir(state, job_id));
    refresh_job_metrics(state);
}

/// Restarts the jobs a previous run left pending or processing, from their saved uploads,
/// except the file a job was parsing when the process stopped ([`FILE_IN_PROGRESS`]): that one
/// fails ([`STOPPED_WHILE_PARSING`]), so a file that takes the process down cannot do so again
/// at every start.
pub async fn resume(state: &Arc<Ingestion>) {
    for job in state.jobs.all().into_iter().filter(|j| !j.status.is_terminal()) {
        let Some(collection) = state.collections.get(&job.collection_name) else {
            state.jobs.update(&job.job_id, |j| {
                j.status = JobState::Failed;
                j.error_message = Some(format!("collection '{}' no longer exists", j.collection_name));
                j.completed_at = Some(Utc::now());
            });
            continue;
        };
        let dir = uploads_dir(state, &job.job_id);
        // What the job recorded of an upload: `key` of its entry in `metadata.uploads`.
        let recorded = |file_id: &str, key: &str| -> serde_json::Value {
            let uploads = job.metadata.get("uploads").and_then(|u| u.as_array());
            let upload = uploads.and_then(|uploads| uploads.iter().find(|u| u["file_id"] == file_id));
            upload.map(|u| u[key].clone()).unwrap_or_default()
        };
        let mut uploads: Vec<Upload> = job
            .file_details
            .iter()
            .map(|f| Upload {
                file_id: f.file_id.clone(),
                file_name: f.file_name.clone(),
                path: dir.join(&f.file_id),
                size: std::fs::metadata(dir.join(&f.file_id)).map(|m| m.len()).unwrap_or(0),
                tags: serde_json::from_value(recorded(&f.file_id, "tags")).unwrap_or_default(),
                user_id: serde_json::from_value(recorded(&f.file_id, USER_ID_KEY)).unwrap_or_default(),
                content_type: serde_json::from_value(recorded(&f.file_id, "content_type")).unwrap_or_default(),
            })
            .collect();
        tracing::info!(
            "resuming job {} ({} files) for {}",
            job.job_id,
            uploads.len(),
            job.collection_name
        );
        {
            // A crash between the job record and the file records leaves the latter missing.
            let mut files = collection.files.lock().expect("files lock");
            for (progress, upload) in job.file_details.iter().zip(&uploads) {
                if !files.iter().any(|f| f.file_id == progress.file_id) {
                    files.push(file_record(&collection, &job.job_id, progress, upload));
                }
            }
        }
        if let Err(e) = state.collections.save_files(&collection) {
            tracing::error!("collection {}: cannot persist files: {e}", collection.name());
        }
        let in_progress = job
            .metadata
            .get(FILE_IN_PROGRESS)
            .and_then(|f| f.as_str())
            .map(str::to_string);
        state.jobs.update(&job.job_id, |j| {
            j.status = JobState::Pending;
            j.metadata.remove(FILE_IN_PROGRESS);
            for file in j
                .file_details
                .iter_mut()
                .filter(|f| Some(&f.file_id) != in_progress.as_ref())
            {
                file.status = FileStatus::Uploading;
                file.progress_percent = 0.0;
                file.error_message = None;
            }
        });
        if let Some(position) = uploads.iter().position(|u| Some(&u.file_id) == in_progress.as_ref()) {
            let stopped = uploads.remove(position);
            tracing::warn!(
                "job {}: {} failed: {STOPPED_WHILE_PARSING}",
                job.job_id,
                stopped.file_name
            );
            fail_file(state, &collection, &job.job_id, &stopped, STOPPED_WHILE_PARSING);
            let _ = std::fs::remove_file(&stopped.path);
        }
        tokio::spawn(run(state.clone(), collection, job.job_id.clone(), uploads));
    }
    refresh_job_metrics(state);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(job_id: &str) -> IngestionJobStatus {
        let file = FileProgress {
            file_id: "f".into(),
            file_name: "a.md".into(),
            status: FileStatus::Ingesting,
            progress_percent: 10.0,
            error_message: None,
            chunks_created: 0,
        };
        let now = Utc::now();
        IngestionJobStatus {
            job_id: job_id.into(),
            status: JobState::Processing,
            submitted_at: now,
            started_at: Some(now),
            completed_at: None,
            total_files: 1,
            processed_files: 0,
            file_details: vec![file],
            collection_name: "c".into(),
            backend: "quarry".into(),
            error_message: None,
            metadata: Default::default(),
            progress_percent: 0.0,
            is_terminal: false,
        }
    }

    #[test]
    fn progress_stays_in_memory_until_the_next_saved_change() {
        let dir = tempfile::tempdir().unwrap();
        let book = JobBook::open(dir.path().to_path_buf()).unwrap();
        book.insert(job("j")).unwrap().unwrap();
        book.update_unsaved("j", |job| job.file_details[0].progress_percent = 65.0);
        assert_eq!(book.get("j").unwrap().file_details[0].progress_percent, 65.0);
        let on_disk = || JobBook::open(dir.path().to_path_buf()).unwrap().get("j").unwrap();
        assert_eq!(on_disk().file_details[0].progress_percent, 10.0, "not written");
        book.update("j", |job| job.status = JobState::Completed);
        assert_eq!(
            (on_disk().file_details[0].progress_percent, on_disk().status),
            (65.0, JobState::Completed),
            "written with the next saved change"
        );
        book.update_unsaved("nope", |_| panic!("no such job"));
    }

    #[test]
    fn one_idempotency_key_makes_one_job_per_collection() {
        let dir = tempfile::tempdir().unwrap();
        let book = JobBook::open(dir.path().to_path_buf()).unwrap();
        let keyed = |id: &str, collection: &str| {
            let mut job = job(id);
            job.collection_name = collection.into();
            job.metadata.insert(IDEMPOTENCY_KEY.into(), "retry-1".into());
            job
        };
        book.insert(keyed("first", "c")).unwrap().unwrap();
        assert_eq!(book.insert(keyed("second", "c")).unwrap().unwrap_err().job_id, "first");
        assert!(book.get("second").is_none());
        // The same key in another collection, or no key, is a new job.
        book.insert(keyed("other", "d")).unwrap().unwrap();
        book.insert(job("plain")).unwrap().unwrap();
        book.insert(job("plain-again")).unwrap().unwrap();
        // Known again after a restart.
        let reopened = JobBook::open(dir.path().to_path_buf()).unwrap();
        assert_eq!(
            reopened.insert(keyed("third", "c")).unwrap().unwrap_err().job_id,
            "first"
        );
    }
}
