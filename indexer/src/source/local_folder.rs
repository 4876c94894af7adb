//! [`Source`] over a local folder, walked with the file system's own calls so that each
//! entry is judged alone: a name that is not UTF-8, a symlink loop, a FIFO or a socket, a
//! dangling symlink, a folder that cannot be read are each listed as skipped with the
//! reason, and the run goes on. Names are taken as they are (`café.txt`, `100%.txt`,
//! `a#b.txt`). Symlinks are followed only while they stay inside the source folder, unless
//! `--follow-symlinks` says otherwise (then each one that leaves it is listed in the report):
//! whoever can write into a source folder cannot copy into the index a file the indexer can
//! read elsewhere.
//!
//! A file's URI is `file://` and its path, each name encoded as the object store encodes a
//! key's parts (`%`, `#` and a few others; what a batch run wrote before for the same files),
//! so documents keep their ids.

use std::collections::HashSet;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use bytes::Bytes;
use futures::future::BoxFuture;
use futures::FutureExt;

use super::path_filter::PathFilter;
use super::{FollowedLink, Listing, RawDocument, Skipped, Source, SourceEntry, SourceOptions, StreamedFile};
use crate::error::{IndexerError, Result};

/// Reads documents below one local folder.
pub struct LocalFolderSource {
    inner: std::sync::Arc<Folder>,
}

/// The folder and how it is read (shared with the blocking tasks that walk and read it).
struct Folder {
    /// The folder, canonical (symlinks resolved).
    root: PathBuf,
    uri: String,
    filter: PathFilter,
    max_file_bytes: u64,
    follow_symlinks: bool,
}

impl LocalFolderSource {
    /// Opens the folder `path` (a path, or a `file://` URI).
    pub fn open(path: &str, options: &SourceOptions) -> Result<Self> {
        let raw = path.trim_end_matches('/');
        let raw = raw.strip_prefix("file://").unwrap_or(raw);
        let raw = if raw.is_empty() { "/" } else { raw };
        let root = std::fs::canonicalize(raw).map_err(|e| IndexerError::io(raw, e))?;
        if !root.is_dir() {
            return Err(IndexerError::InvalidUri {
                uri: path.to_string(),
                reason: "not a folder".into(),
            });
        }
        if root.to_str().is_none() {
            return Err(IndexerError::InvalidUri {
                uri: path.to_string(),
                reason: "the folder's path is not valid UTF-8".into(),
            });
        }
        let uri = format!("file://{}", encoded_path(&root));
        let folder = Folder {
            root,
            uri,
            filter: PathFilter::new(&options.include, &options.exclude)?,
            max_file_bytes: options.max_file_bytes,
            follow_symlinks: options.follow_symlinks,
        };
        Ok(Self {
            inner: std::sync::Arc::new(folder),
        })
    }
}

impl Folder {
    fn uri_of(&self, relative: &str) -> String {
        let parts: Vec<String> = relative.split('/').map(encoded_name).collect();
        format!("{}/{}", self.uri.trim_end_matches('/'), parts.join("/"))
    }

    /// Walks the folder with a stack of its own (no recursion, any depth).
    fn walk(&self) -> Result<Listing> {
        let mut listing = Listing::default();
        let mut folders_seen: HashSet<(u64, u64)> = HashSet::new();
        let root_meta = std::fs::metadata(&self.root).map_err(|e| IndexerError::io(&self.root, e))?;
        folders_seen.insert((root_meta.dev(), root_meta.ino()));
        let mut folders = vec![(self.root.clone(), String::new())];
        while let Some((folder, prefix)) = folders.pop() {
            let entries = match std::fs::read_dir(&folder) {
                Ok(entries) => entries,
                Err(e) if prefix.is_empty() => return Err(IndexerError::io(&folder, e)),
                Err(e) => {
                    listing.skipped.push(Skipped {
                        uri: self.uri_of(prefix.trim_end_matches('/')),
                        reason: format!("folder could not be read: {e}"),
                    });
                    continue;
                }
            };
            for entry in entries {
                let entry = match entry {
                    Ok(entry) => entry,
                    Err(e) => {
                        listing.skipped.push(Skipped {
                            uri: self.uri_of(prefix.trim_end_matches('/')),
                            reason: format!("an entry of this folder could not be read: {e}"),
                        });
                        continue;
                    }
                };
                let path = entry.path();
                let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                    let shown = entry.file_name().to_string_lossy().into_owned();
                    let uri = self.uri_of(&format!("{prefix}{shown}"));
                    listing.skipped.push(Skipped { uri, reason: "the file name is not valid UTF-8 (shown with U+FFFD for its bad bytes): rename it to index it".into() });
                    continue;
                };
                let relative = format!("{prefix}{name}");
                let uri = self.uri_of(&relative);
                if let Some(reason) = self.filter.folder_skip_reason(&relative) {
                    listing.skipped.push(Skipped { uri, reason });
                    continue;
                }
                let judged = self.judge(&path);
                if !matches!(judged, Judged::Folder(..)) {
                    if let Some(reason) = self.filter.not_included_reason(&relative) {
                        listing.skipped.push(Skipped { uri, reason });
                        continue;
                    }
                }
                if let Judged::Folder(_, Some(target)) | Judged::File(_, Some(target)) = &judged {
                    listing.followed_links.push(FollowedLink {
                        uri: uri.clone(),
                        target: target.display().to_string(),
                    });
                }
                match judged {
                    Judged::Folder(key, _) => {
                        if folders_seen.insert(key) {
                            folders.push((path, format!("{relative}/")));
                        } else {
                            listing.skipped.push(Skipped {
                                uri,
                                reason: "a folder already walked (a symlink loop)".into(),
                            });
                        }
                    }
                    Judged::File(meta, _) => listing.entries.push(SourceEntry {
                        uri,
                        relative_path: relative,
                        size: meta.len(),
                        etag: Some(etag(&meta)),
                    }),
                    Judged::Skip(reason) => listing.skipped.push(Skipped { uri, reason }),
                }
            }
        }
        listing.entries.sort_by(|a, b| a.relative_path.cmp(&b.relative_path));
        Ok(listing)
    }

    /// What an entry is, symlinks followed where they may be.
    fn judge(&self, path: &Path) -> Judged {
        let own = match std::fs::symlink_metadata(path) {
            Ok(meta) => meta,
            Err(e) => return Judged::Skip(format!("could not be read: {e}")),
        };
        let mut outside = None;
        let meta = if own.file_type().is_symlink() {
            let target = match std::fs::canonicalize(path) {
                Ok(target) => target,
                Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Judged::Skip("a symlink loop".into()),
                Err(_) => {
                    return Judged::Skip(format!(
                        "a symlink to nothing ({})",
                        std::fs::read_link(path)
                            .map(|t| t.display().to_string())
                            .unwrap_or_default()
                    ))
                }
            };
            if !target.starts_with(&self.root) {
                if !self.follow_symlinks {
                    return Judged::Skip(format!(
                        "a symlink to {}, outside the source folder (--follow-symlinks follows it)",
                        target.display()
                    ));
                }
                outside = Some(target);
            }
            match std::fs::metadata(path) {
                Ok(meta) => meta,
                Err(e) => return Judged::Skip(format!("could not be read: {e}")),
            }
        } else {
            own
        };
        let kind = meta.file_type();
        if kind.is_dir() {
            Judged::Folder((meta.dev(), meta.ino()), outside)
        } else if kind.is_file() {
            Judged::File(meta, outside)
        } else {
            let what = if kind.is_fifo() {
                "a FIFO"
            } else if kind.is_socket() {
                "a socket"
            } else if kind.is_block_device() || kind.is_char_device() {
                "a device"
            } else {
                "not a regular file"
            };
            Judged::Skip(format!("{what}, not a file to read"))
        }
    }

    /// Reads one listed file, checking again that it is a regular file inside the folder
    /// (it may have been replaced since the listing) and reading no more than the limit.
    fn read(&self, entry: &SourceEntry) -> Result<RawDocument> {
        let (file, meta, path) = self.open_checked(entry)?;
        if meta.len() > self.max_file_bytes {
            return Err(super::too_large(meta.len(), self.max_file_bytes));
        }
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        file.take(self.max_file_bytes + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| IndexerError::io(&path, e))?;
        if bytes.len() as u64 > self.max_file_bytes {
            return Err(super::too_large(bytes.len() as u64, self.max_file_bytes));
        }
        Ok(RawDocument {
            size: bytes.len() as u64,
            bytes: Bytes::from(bytes),
            ..file_of(entry, &meta)
        })
    }

    /// Opens one listed file to be read in order, whatever its size, with the same checks.
    fn open(&self, entry: &SourceEntry) -> Result<StreamedFile> {
        let (file, meta, _) = self.open_checked(entry)?;
        Ok(StreamedFile {
            file: file_of(entry, &meta),
            bytes: Box::new(file),
        })
    }

    /// One listed file opened, once it is known to still be a regular file inside the folder.
    fn open_checked(&self, entry: &SourceEntry) -> Result<(std::fs::File, std::fs::Metadata, std::path::PathBuf)> {
        let path = self.root.join(&entry.relative_path);
        let fail = |reason: String| IndexerError::SourceFileChanged {
            uri: entry.uri.clone(),
            reason,
        };
        if !self.follow_symlinks {
            let target = std::fs::canonicalize(&path).map_err(|e| IndexerError::io(&path, e))?;
            if !target.starts_with(&self.root) {
                return Err(fail(format!(
                    "now a symlink to {}, outside the source folder",
                    target.display()
                )));
            }
        }
        let file = std::fs::File::open(&path).map_err(|e| IndexerError::io(&path, e))?;
        let meta = file.metadata().map_err(|e| IndexerError::io(&path, e))?;
        if !meta.is_file() {
            return Err(fail("no longer a regular file".into()));
        }
        Ok((file, meta, path))
    }
}

/// A listed file as read (its bytes empty), with its size and etag as it stands.
fn file_of(entry: &SourceEntry, meta: &std::fs::Metadata) -> RawDocument {
    RawDocument {
        uri: entry.uri.clone(),
        relative_path: entry.relative_path.clone(),
        size: meta.len(),
        bytes: Bytes::new(),
        etag: Some(etag(meta)),
        source: "file".into(),
        content_type: None,
    }
}

/// An entry: a folder (its device and inode) or a file to list, each with the target of the
/// symlink out of the folder it was reached by, if any; or skipped, with the reason.
enum Judged {
    Folder((u64, u64), Option<std::path::PathBuf>),
    File(std::fs::Metadata, Option<std::path::PathBuf>),
    Skip(String),
}

/// One name as the object store encodes a key's part.
fn encoded_name(name: &str) -> String {
    object_store::path::PathPart::from(name).as_ref().to_string()
}

/// An absolute path with each name encoded ([`encoded_name`]).
fn encoded_path(path: &Path) -> String {
    let names: Vec<String> = path
        .components()
        .filter_map(|c| c.as_os_str().to_str())
        .filter(|n| *n != "/")
        .map(encoded_name)
        .collect();
    format!("/{}", names.join("/"))
}

/// The object store's ETag of a local file (inode, modification time and size), so runs
/// before and after see the same files as unchanged.
fn etag(meta: &std::fs::Metadata) -> String {
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .unwrap_or_default()
        .as_micros();
    format!("\"{:x}-{mtime:x}-{:x}\"", meta.ino(), meta.len())
}

fn joined<T>(result: std::result::Result<Result<T>, tokio::task::JoinError>) -> Result<T> {
    result.map_err(|e| IndexerError::Config(format!("reading the source folder: {e}")))?
}

impl Source for LocalFolderSource {
    fn uri(&self) -> &str {
        &self.inner.uri
    }

    fn scheme(&self) -> &str {
        "file"
    }

    fn list(&self) -> BoxFuture<'_, Result<Listing>> {
        let folder = self.inner.clone();
        async move { joined(tokio::task::spawn_blocking(move || folder.walk()).await) }.boxed()
    }

    fn fetch<'a>(&'a self, entry: &'a SourceEntry) -> BoxFuture<'a, Result<RawDocument>> {
        let (folder, entry) = (self.inner.clone(), entry.clone());
        async move { joined(tokio::task::spawn_blocking(move || folder.read(&entry)).await) }.boxed()
    }

    fn open<'a>(&'a self, entry: &'a SourceEntry) -> BoxFuture<'a, Result<StreamedFile>> {
        let (folder, entry) = (self.inner.clone(), entry.clone());
        async move { joined(tokio::task::spawn_blocking(move || folder.open(&entry)).await) }.boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::ObjectStoreSource;

    /// Why the listing skipped the entry whose URI ends with `suffix`, if it did.
    fn skip_reason<'a>(listing: &'a Listing, suffix: &str) -> Option<&'a str> {
        listing
            .skipped
            .iter()
            .find(|s| s.uri.ends_with(suffix))
            .map(|s| s.reason.as_str())
    }

    fn write(dir: &Path, relative: &str, text: &str) {
        let path = dir.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn include_globs_reach_files_in_folders_they_do_not_name() {
        let dir = tempfile::tempdir().unwrap();
        for name in [
            "README.md",
            "en/corpus.jsonl",
            "en/queries.jsonl",
            "ja/deep/corpus.jsonl",
            "old/corpus.jsonl",
        ] {
            write(dir.path(), name, "{}");
        }
        let options = SourceOptions {
            include: vec!["**/corpus.jsonl".into()],
            exclude: vec!["old".into()],
            ..Default::default()
        };
        let source = LocalFolderSource::open(dir.path().to_str().unwrap(), &options).unwrap();
        let listing = source.list().await.unwrap();
        let mut names: Vec<&str> = listing.entries.iter().map(|e| e.relative_path.as_str()).collect();
        names.sort_unstable();
        assert_eq!(names, ["en/corpus.jsonl", "ja/deep/corpus.jsonl"]);
        let skipped = |name: &str| skip_reason(&listing, name);
        assert_eq!(skipped("/en/queries.jsonl"), Some("matches no --include pattern"));
        assert_eq!(
            skipped("/old"),
            Some("matches an --exclude pattern"),
            "an excluded folder is not walked"
        );
        assert_eq!(skipped("/en"), None, "{:?}", listing.skipped);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn names_as_they_are_symlinks_kept_inside_and_odd_entries_skipped_alone() {
        let outside = tempfile::tempdir().unwrap();
        write(outside.path(), "secret.txt", "not for the index");
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for name in ["café.txt", "100%.txt", "a#b.txt", "plain.txt", "sub/deeper/c.md"] {
            write(root, name, &format!("text of {name}"));
        }
        std::os::unix::fs::symlink(outside.path().join("secret.txt"), root.join("leak.txt")).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("leak-folder")).unwrap();
        std::os::unix::fs::symlink(root.join("plain.txt"), root.join("inside-link.txt")).unwrap();
        std::os::unix::fs::symlink(root.join("sub"), root.join("sub/deeper/loop")).unwrap();
        std::os::unix::fs::symlink(root.join("gone.txt"), root.join("dangling.txt")).unwrap();
        std::os::unix::fs::symlink(root.join("self-a"), root.join("self-b")).unwrap();
        std::os::unix::fs::symlink(root.join("self-b"), root.join("self-a")).unwrap();
        let fifo = std::ffi::CString::new(root.join("pipe.txt").to_str().unwrap()).unwrap();
        // SAFETY: mkfifo reads the NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        use std::os::unix::ffi::OsStrExt;
        std::fs::write(root.join(std::ffi::OsStr::from_bytes(b"bad-\xff.txt")), "x").unwrap();

        let source = LocalFolderSource::open(root.to_str().unwrap(), &SourceOptions::default()).unwrap();
        let listing = source.list().await.unwrap();
        let names: Vec<&str> = listing.entries.iter().map(|e| e.relative_path.as_str()).collect();
        assert_eq!(
            names,
            [
                "100%.txt",
                "a#b.txt",
                "café.txt",
                "inside-link.txt",
                "plain.txt",
                "sub/deeper/c.md"
            ]
        );
        for entry in &listing.entries {
            let raw = source.fetch(entry).await.unwrap();
            assert!(
                String::from_utf8_lossy(&raw.bytes).starts_with("text of"),
                "{}",
                entry.relative_path
            );
        }
        // '#' and '%' encoded in the URI (a '#' would read as an item of the file).
        let uri_of = |name: &str| {
            listing
                .entries
                .iter()
                .find(|e| e.relative_path == name)
                .unwrap()
                .uri
                .clone()
        };
        assert!(
            uri_of("a#b.txt").ends_with("/a%23b.txt") && uri_of("100%.txt").ends_with("/100%25.txt"),
            "{}",
            uri_of("a#b.txt")
        );
        let reason = |name: &str| {
            skip_reason(&listing, name).unwrap_or_else(|| panic!("{name} not skipped: {:?}", listing.skipped))
        };
        assert!(reason("/leak.txt").contains("outside the source folder"));
        assert!(reason("/leak-folder").contains("outside the source folder"));
        assert!(reason("/loop").contains("symlink loop"), "{}", reason("/loop"));
        assert!(reason("/dangling.txt").contains("symlink to nothing"));
        assert!(reason("/self-a").contains("symlink loop"));
        assert!(reason("/pipe.txt").contains("FIFO"));
        assert!(
            listing.skipped.iter().any(|s| s.reason.contains("not valid UTF-8")),
            "{:?}",
            listing.skipped
        );

        // Followed when asked: the outside files are listed and read.
        let follow = SourceOptions {
            follow_symlinks: true,
            ..Default::default()
        };
        let source = LocalFolderSource::open(root.to_str().unwrap(), &follow).unwrap();
        let listing = source.list().await.unwrap();
        assert!(
            listing.entries.iter().any(|e| e.relative_path == "leak.txt")
                && listing
                    .entries
                    .iter()
                    .any(|e| e.relative_path == "leak-folder/secret.txt")
        );
        // ... and each link out of the folder is listed with where it leads.
        let mut followed: Vec<&str> = listing
            .followed_links
            .iter()
            .map(|l| l.uri.rsplit('/').next().unwrap())
            .collect();
        followed.sort_unstable();
        assert_eq!(followed, ["leak-folder", "leak.txt"], "{:?}", listing.followed_links);
        assert!(
            listing
                .followed_links
                .iter()
                .all(|l| !l.target.starts_with(root.to_str().unwrap())),
            "{:?}",
            listing.followed_links
        );
    }

    /// Plain names get the URIs and ETags the object-store listing gave them, so documents
    /// keep their ids and unchanged files stay unchanged across the switch.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn plain_names_list_as_the_object_store_listed_them() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["a.txt", "sub/b c.md", "sub/x/y.json"] {
            write(dir.path(), name, "{}");
        }
        let path = dir.path().to_str().unwrap();
        let ours = LocalFolderSource::open(path, &SourceOptions::default())
            .unwrap()
            .list()
            .await
            .unwrap();
        let theirs = ObjectStoreSource::open(path, &SourceOptions::default())
            .unwrap()
            .list()
            .await
            .unwrap();
        let key = |l: &Listing| {
            l.entries
                .iter()
                .map(|e| (e.uri.clone(), e.relative_path.clone(), e.size, e.etag.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(key(&ours), key(&theirs));
        assert_eq!(
            LocalFolderSource::open(path, &SourceOptions::default()).unwrap().uri(),
            ObjectStoreSource::open(path, &SourceOptions::default()).unwrap().uri()
        );
    }
}
