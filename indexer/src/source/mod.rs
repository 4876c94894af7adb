//! Sources: where raw documents come from. [`Source`] is the swappable part;
//! [`LocalFolderSource`] serves local folders, [`ObjectStoreSource`] S3 and in-memory
//! stores; [`open_source`] picks one for a URI.

mod local_folder;
mod object_store_source;
mod path_filter;
mod ranged_reader;

pub use local_folder::LocalFolderSource;
pub use object_store_source::ObjectStoreSource;

use std::sync::Arc;

use bytes::Bytes;
use futures::future::BoxFuture;

use crate::error::Result;
use crate::store::StoreOptions;

/// One object found by listing a source, not yet fetched.
#[derive(Debug, Clone)]
pub struct SourceEntry {
    /// Full URI (`file:///...`, `s3://bucket/key`, `memory://name/key`).
    pub uri: String,
    /// Path relative to the listed prefix, `/`-separated.
    pub relative_path: String,
    pub size: u64,
    pub etag: Option<String>,
}

/// The bytes of one object and where they came from.
#[derive(Debug, Clone)]
pub struct RawDocument {
    pub uri: String,
    pub relative_path: String,
    pub bytes: Bytes,
    pub etag: Option<String>,
    pub size: u64,
    /// `file`, `s3` or `memory`.
    pub source: String,
    /// The media type the source gave the file, where it gave one (an S3 object's
    /// `Content-Type`): a `charset` in it is the encoding a text that is not UTF-8 is read in.
    pub content_type: Option<String>,
}

impl RawDocument {
    /// A file inside this one (an archive's file, a mailbox's message, what a compressed file
    /// holds): its own URI, name and bytes; this file's etag and source.
    pub fn inner(&self, uri: String, relative_path: String, bytes: Bytes) -> Self {
        Self {
            uri,
            relative_path,
            size: bytes.len() as u64,
            bytes,
            etag: self.etag.clone(),
            source: self.source.clone(),
            content_type: None,
        }
    }
}

/// A listed object opened to be read in order, whatever its size (the files `parse::RecordStream`
/// reads: JSONL corpora, MediaWiki dumps and Stack Exchange tables past the size limit or
/// compressed): its bytes come as they are read.
pub struct StreamedFile {
    /// The object as fetched, its bytes empty: URI, name, size, etag and source.
    pub file: RawDocument,
    pub bytes: Box<dyn std::io::Read + Send>,
}

/// An object that listing left out, with the reason.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Skipped {
    pub uri: String,
    pub reason: String,
}

/// A symlink out of a local source folder that `--follow-symlinks` followed: the files
/// reached through it are indexed, and the run report lists it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct FollowedLink {
    pub uri: String,
    /// Where it leads (a file, or a folder whose files were listed).
    pub target: String,
}

/// What listing a source found.
#[derive(Debug, Default)]
pub struct Listing {
    pub entries: Vec<SourceEntry>,
    pub skipped: Vec<Skipped>,
    pub followed_links: Vec<FollowedLink>,
}

/// Options for reading a source.
#[derive(Debug, Clone)]
pub struct SourceOptions {
    /// Glob patterns (on the path relative to the prefix); when any are given a file must match one.
    pub include: Vec<String>,
    /// Glob patterns; a matching file is skipped.
    pub exclude: Vec<String>,
    /// Fetches in flight at once.
    pub concurrency: usize,
    /// Files larger than this fail with "file too large".
    pub max_file_bytes: u64,
    pub store: StoreOptions,
    /// Follow symlinks in a local folder that lead out of it (by default they are skipped).
    pub follow_symlinks: bool,
}

impl Default for SourceOptions {
    fn default() -> Self {
        Self {
            include: Vec::new(),
            exclude: Vec::new(),
            concurrency: 16,
            max_file_bytes: 256 * 1024 * 1024,
            store: StoreOptions::default(),
            follow_symlinks: false,
        }
    }
}

/// A place documents are read from.
pub trait Source: Send + Sync {
    /// The location, as a URI, for logs and reports.
    fn uri(&self) -> &str;
    /// `file`, `s3` or `memory`: recorded as each document's `source`.
    fn scheme(&self) -> &str;
    /// Lists every object below the location, recursively, applying globs and skipping hidden files.
    fn list(&self) -> BoxFuture<'_, Result<Listing>>;
    /// Fetches one listed object (transient errors are retried by the store).
    fn fetch<'a>(&'a self, entry: &'a SourceEntry) -> BoxFuture<'a, Result<RawDocument>>;
    /// Opens one listed object to be read in order, at any size; its bytes are read where
    /// the stream is read (a blocking read, off the async runtime).
    fn open<'a>(&'a self, entry: &'a SourceEntry) -> BoxFuture<'a, Result<StreamedFile>>;
}

/// The source for `uri`: a local folder (a path or `file://`) or an object store.
pub fn open_source(uri: &str, options: &SourceOptions) -> Result<Arc<dyn Source>> {
    match uri.contains("://") && !uri.starts_with("file://") {
        true => Ok(Arc::new(ObjectStoreSource::open(uri, options)?)),
        false => Ok(Arc::new(LocalFolderSource::open(uri, options)?)),
    }
}

/// The failure of a file over the size limit.
fn too_large(size: u64, limit: u64) -> crate::error::IndexerError {
    crate::error::IndexerError::FileTooLarge { size, limit }
}
