//! LATEST moves only from the version a writer saw (compare and swap), so that two writers
//! into one root — a nightly run and a server's upload, a rollback, a second server — never
//! publish over each other's version unseen.
//!
//! On a local root the writer holds an OS lock on `<root>/.publish.lock` from reading LATEST
//! to writing it, so nothing moves it in between. On S3 (and `memory://`) LATEST is written
//! conditionally: `If-Match` with the ETag it had when read (`If-None-Match: *` when there was
//! none), so a write that lost a race fails instead of landing.

use object_store::{ObjectStoreExt, PutMode, PutOptions, PutPayload, UpdateVersion};

use super::layout;
use super::reader::version_named;
use crate::error::{IndexerError, Result};
use crate::store::Location;

/// The lock file of a local root.
pub const LOCK_FILE: &str = ".publish.lock";

/// What LATEST expected to name when a writer publishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LatestExpected<'a> {
    /// Whatever it names (a full version replaces what is there).
    Any,
    /// This version (None: no LATEST yet): the version the writer built on.
    Is(Option<&'a str>),
}

/// LATEST as read, held until it is written (local roots: under the root's lock).
pub struct LatestGuard {
    /// The lock on a local root's lock file, released when the guard drops.
    _lock: Option<std::fs::File>,
    /// A local root: LATEST is overwritten (the lock, where the file system has locks, keeps
    /// others out); object_store has no conditional overwrite of a local file.
    local: bool,
    /// The version LATEST named (None: no LATEST).
    found: Option<String>,
    /// LATEST's entity tag when read, for the conditional write on a remote root.
    e_tag: Option<String>,
}

impl LatestGuard {
    /// Takes a local root's lock (waiting for another writer to finish), then reads LATEST.
    pub async fn acquire(root: &Location) -> Result<Self> {
        let local = root.local_path();
        let lock = match local.clone() {
            Some(dir) => tokio::task::spawn_blocking(move || lock_root(&dir))
                .await
                .map_err(|e| IndexerError::snapshot(LOCK_FILE, format!("lock task failed: {e}")))??,
            None => None,
        };
        let key = root.child(layout::LATEST);
        let (found, e_tag) = match root.store.get(&key).await {
            Ok(result) => {
                let e_tag = result.meta.e_tag.clone();
                let bytes = result
                    .bytes()
                    .await
                    .map_err(|e| IndexerError::store(root.uri_of(&key), e))?;
                (Some(version_named(&bytes)), e_tag)
            }
            Err(object_store::Error::NotFound { .. }) => (None, None),
            Err(e) => return Err(IndexerError::store(root.uri_of(&key), e)),
        };
        Ok(Self {
            _lock: lock,
            local: local.is_some(),
            found,
            e_tag,
        })
    }

    /// The version LATEST named when read.
    pub fn found(&self) -> Option<&str> {
        self.found.as_deref()
    }

    /// `LatestMoved` unless LATEST named what `expected` says.
    pub fn check(&self, root: &Location, expected: LatestExpected<'_>) -> Result<()> {
        match expected {
            LatestExpected::Is(version) if version != self.found() => Err(moved(root, version, self.found())),
            _ => Ok(()),
        }
    }

    /// Writes LATEST = `version`: on a local root under the lock, elsewhere only if LATEST
    /// is still what was read (`LatestMoved` if another writer wrote it since).
    pub async fn point_at(self, root: &Location, version: &str) -> Result<()> {
        let mode = match (self.local, &self.found, &self.e_tag) {
            (true, _, _) => PutMode::Overwrite,
            (false, None, _) => PutMode::Create,
            (false, Some(_), Some(e_tag)) => PutMode::Update(UpdateVersion {
                e_tag: Some(e_tag.clone()),
                version: None,
            }),
            (false, Some(_), None) => PutMode::Overwrite,
        };
        let key = root.child(layout::LATEST);
        let payload = PutPayload::from(format!("{version}\n").into_bytes());
        match root.store.put_opts(&key, payload, PutOptions::from(mode)).await {
            Ok(_) => Ok(()),
            Err(object_store::Error::Precondition { .. } | object_store::Error::AlreadyExists { .. }) => Err(moved(
                root,
                self.found(),
                Some("a version another writer published meanwhile"),
            )),
            Err(e) => Err(IndexerError::store(root.uri_of(&key), e)),
        }
    }
}

fn moved(root: &Location, expected: Option<&str>, found: Option<&str>) -> IndexerError {
    IndexerError::LatestMoved {
        uri: root.uri.clone(),
        expected: expected.unwrap_or("nothing").to_string(),
        found: found.unwrap_or("nothing").to_string(),
    }
}

/// An exclusive OS lock on the root's lock file (None where the file system has no locks).
fn lock_root(dir: &std::path::Path) -> Result<Option<std::fs::File>> {
    let path = dir.join(LOCK_FILE);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| IndexerError::io(&path, e))?;
    match file.lock() {
        Ok(()) => Ok(Some(file)),
        Err(e) if e.kind() == std::io::ErrorKind::Unsupported => {
            tracing::warn!(
                "{}: the file system has no locks; LATEST is compared before it is written, not locked",
                path.display()
            );
            Ok(None)
        }
        Err(e) => Err(IndexerError::io(&path, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{open_location, StoreOptions};

    #[tokio::test]
    async fn of_two_writers_that_read_the_same_latest_only_the_first_writes_it() {
        let dir = tempfile::tempdir().unwrap();
        let memory = open_location("memory://latest-guard/root", &StoreOptions::default(), true).unwrap();
        let local = open_location(dir.path().to_str().unwrap(), &StoreOptions::default(), true).unwrap();
        // Memory: both read LATEST; the second conditional write fails.
        let root = &memory;
        LatestGuard::acquire(root)
            .await
            .unwrap()
            .point_at(root, "v1")
            .await
            .unwrap();
        let (first, second) = (
            LatestGuard::acquire(root).await.unwrap(),
            LatestGuard::acquire(root).await.unwrap(),
        );
        assert_eq!((first.found(), second.found()), (Some("v1"), Some("v1")));
        first.point_at(root, "v2").await.unwrap();
        assert!(matches!(
            second.point_at(root, "v3").await,
            Err(IndexerError::LatestMoved { .. })
        ));
        assert_eq!(LatestGuard::acquire(root).await.unwrap().found(), Some("v2"));
        // Local: the second waits for the first's lock and then reads what it wrote.
        LatestGuard::acquire(&local)
            .await
            .unwrap()
            .point_at(&local, "v1")
            .await
            .unwrap();
        let first = LatestGuard::acquire(&local).await.unwrap();
        let waiting = tokio::spawn({
            let local = local.clone();
            async move { LatestGuard::acquire(&local).await.unwrap().found().map(str::to_string) }
        });
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        assert!(!waiting.is_finished(), "the lock is held");
        first.point_at(&local, "v2").await.unwrap();
        assert_eq!(waiting.await.unwrap().as_deref(), Some("v2"));
        let guard = LatestGuard::acquire(&local).await.unwrap();
        assert!(matches!(
            guard.check(&local, LatestExpected::Is(Some("v1"))),
            Err(IndexerError::LatestMoved { .. })
        ));
        assert!(
            guard.check(&local, LatestExpected::Is(Some("v2"))).is_ok()
                && guard.check(&local, LatestExpected::Any).is_ok()
        );
    }
}
