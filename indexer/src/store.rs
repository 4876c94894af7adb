//! Opens an object store for a location: plain paths and `file://`, `s3://bucket/prefix`
//! (AWS_* credentials, optional S3-compatible endpoint), and `memory://name` for tests.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use futures::TryStreamExt;
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::local::LocalFileSystem;
use object_store::memory::InMemory;
use object_store::path::Path as StorePath;
use object_store::{BackoffConfig, ObjectMeta, ObjectStore, RetryConfig};

use crate::error::{IndexerError, Result};

/// How to reach S3 and S3-compatible servers.
#[derive(Debug, Clone, Default)]
pub struct StoreOptions {
    /// S3-compatible endpoint such as `http://127.0.0.1:5000` (plain http is allowed).
    pub s3_endpoint: Option<String>,
}

/// A store plus the prefix inside it that a location names.
#[derive(Clone)]
pub struct Location {
    pub store: Arc<dyn ObjectStore>,
    pub prefix: StorePath,
    /// Scheme of the location: `file`, `s3` or `memory`; recorded as a document's `source`.
    pub scheme: &'static str,
    /// The location as the user wrote it, normalized (no trailing slash).
    pub uri: String,
}

impl std::fmt::Debug for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Location").field("uri", &self.uri).finish()
    }
}

impl Location {
    /// The full URI of a key inside this location's store.
    pub fn uri_of(&self, key: &StorePath) -> String {
        match self.scheme {
            "file" => format!("file:///{}", key.as_ref()),
            "s3" => {
                let bucket = self.uri.trim_start_matches("s3://").split('/').next().unwrap_or("");
                format!("s3://{bucket}/{}", key.as_ref())
            }
            _ => {
                let name = self.uri.trim_start_matches("memory://").split('/').next().unwrap_or("");
                format!("memory://{name}/{}", key.as_ref())
            }
        }
    }

    /// The folder of a local location (`file` scheme), `None` for remote stores.
    pub fn local_path(&self) -> Option<std::path::PathBuf> {
        (self.scheme == "file").then(|| std::path::PathBuf::from(format!("/{}", self.prefix.as_ref())))
    }

    /// `key`'s path below this location's prefix (`a/b.txt`), None when it is not below it.
    pub fn relative(&self, key: &StorePath) -> Option<String> {
        key.prefix_match(&self.prefix)
            .map(|parts| parts.map(|p| p.as_ref().to_string()).collect::<Vec<_>>().join("/"))
    }

    /// A key below this location's prefix.
    pub fn child(&self, relative: &str) -> StorePath {
        let mut path = self.prefix.clone();
        for part in relative.split('/').filter(|p| !p.is_empty()) {
            path = path.join(part);
        }
        path
    }

    /// Every object below `relative`, keyed by its path relative to this location.
    pub async fn list_below(&self, relative: &str) -> Result<BTreeMap<String, ObjectMeta>> {
        let prefix = self.child(relative);
        let metas: Vec<ObjectMeta> = self
            .store
            .list(Some(&prefix))
            .try_collect()
            .await
            .map_err(|e| IndexerError::store(&self.uri, e))?;
        Ok(metas
            .into_iter()
            .map(|meta| (self.relative(&meta.location).unwrap_or_default(), meta))
            .collect())
    }
}

fn memory_stores() -> &'static Mutex<HashMap<String, Arc<InMemory>>> {
    static STORES: OnceLock<Mutex<HashMap<String, Arc<InMemory>>>> = OnceLock::new();
    STORES.get_or_init(Default::default)
}

fn retry_config() -> RetryConfig {
    RetryConfig {
        max_retries: 5,
        retry_timeout: Duration::from_secs(120),
        backoff: BackoffConfig {
            init_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(10),
            base: 2.0,
        },
    }
}

/// Opens the store a location names. Local folders are created when missing only if
/// `create` is set (destinations), so a mistyped source path is an error.
pub fn open_location(uri: &str, options: &StoreOptions, create: bool) -> Result<Location> {
    let invalid = |reason: &str| IndexerError::InvalidUri {
        uri: uri.to_string(),
        reason: reason.to_string(),
    };
    let trimmed = uri.trim_end_matches('/');
    if let Some(rest) = uri.strip_prefix("s3://") {
        let rest = rest.trim_end_matches('/');
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Err(invalid("missing bucket name (expected s3://bucket/prefix)"));
        }
        let mut builder = AmazonS3Builder::from_env()
            .with_bucket_name(bucket)
            .with_retry(retry_config());
        // `from_env` took AWS_REGION / AWS_DEFAULT_REGION when set; otherwise AWS's default.
        if builder.get_config_value(&AmazonS3ConfigKey::Region).is_none() {
            builder = builder.with_region("us-east-1");
        }
        if let Some(endpoint) = &options.s3_endpoint {
            builder = builder
                .with_endpoint(endpoint)
                .with_allow_http(endpoint.starts_with("http://"))
                .with_virtual_hosted_style_request(false);
        }
        let store = builder.build().map_err(|e| IndexerError::store(uri, e))?;
        return Ok(Location {
            store: Arc::new(store),
            prefix: StorePath::from(prefix),
            scheme: "s3",
            uri: trimmed.to_string(),
        });
    }
    if let Some(rest) = trimmed.strip_prefix("memory://") {
        let (name, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        let store = memory_stores()
            .lock()
            .expect("memory store registry")
            .entry(name.to_string())
            .or_default()
            .clone();
        return Ok(Location {
            store,
            prefix: StorePath::from(prefix),
            scheme: "memory",
            uri: trimmed.to_string(),
        });
    }
    if trimmed.contains("://") && !trimmed.starts_with("file://") {
        return Err(invalid("unsupported scheme (use a path, file://, s3:// or memory://)"));
    }
    let raw_path = trimmed.strip_prefix("file://").unwrap_or(trimmed);
    let raw_path = if raw_path.is_empty() { "/" } else { raw_path };
    let path = std::path::Path::new(raw_path);
    if create {
        std::fs::create_dir_all(path).map_err(|e| IndexerError::io(path, e))?;
    }
    let absolute = std::fs::canonicalize(path).map_err(|e| IndexerError::io(path, e))?;
    let prefix = StorePath::from_absolute_path(&absolute).map_err(|e| invalid(&e.to_string()))?;
    Ok(Location {
        store: Arc::new(LocalFileSystem::new()),
        prefix,
        scheme: "file",
        uri: format!("file://{}", absolute.display()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s3_without_bucket_is_a_clear_error() {
        let err = open_location("s3://", &StoreOptions::default(), false).unwrap_err();
        assert!(err.to_string().contains("missing bucket"), "{err}");
    }

    #[test]
    fn unknown_scheme_is_rejected() {
        let err = open_location("ftp://host/x", &StoreOptions::default(), false).unwrap_err();
        assert!(err.to_string().contains("unsupported scheme"), "{err}");
    }

    #[test]
    fn missing_local_source_is_an_error_but_destination_is_created() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope");
        assert!(open_location(missing.to_str().unwrap(), &StoreOptions::default(), false).is_err());
        let loc = open_location(missing.to_str().unwrap(), &StoreOptions::default(), true).unwrap();
        assert_eq!(loc.scheme, "file");
        assert!(missing.is_dir());
    }

    #[test]
    fn memory_locations_share_one_store_per_name() {
        let a = open_location("memory://shared-x/a", &StoreOptions::default(), false).unwrap();
        let b = open_location("memory://shared-x/b", &StoreOptions::default(), false).unwrap();
        assert!(Arc::ptr_eq(&a.store, &b.store));
        assert_eq!(a.uri_of(&a.child("doc.txt")), "memory://shared-x/a/doc.txt");
    }
}
