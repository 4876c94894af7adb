//! [`Source`] over any object_store location: recursive listing with include/exclude
//! globs, hidden files skipped, size limit, fetch with the store's retry policy.

use futures::future::BoxFuture;
use futures::{FutureExt, TryStreamExt};
use object_store::ObjectStoreExt;

use super::path_filter::PathFilter;
use super::ranged_reader::RangedReader;
use super::{Listing, RawDocument, Skipped, Source, SourceEntry, SourceOptions, StreamedFile};
use crate::error::{IndexerError, Result};
use crate::store::{open_location, Location};

/// Reads documents below one object-store location.
pub struct ObjectStoreSource {
    location: Location,
    filter: PathFilter,
    max_file_bytes: u64,
}

impl ObjectStoreSource {
    /// Opens a source location (`./docs`, `file:///...`, `s3://bucket/prefix`, `memory://name`).
    pub fn open(uri: &str, options: &SourceOptions) -> Result<Self> {
        let location = open_location(uri, &options.store, false)?;
        Ok(Self {
            location,
            filter: PathFilter::new(&options.include, &options.exclude)?,
            max_file_bytes: options.max_file_bytes,
        })
    }
}

impl Source for ObjectStoreSource {
    fn uri(&self) -> &str {
        &self.location.uri
    }

    fn scheme(&self) -> &str {
        self.location.scheme
    }

    fn list(&self) -> BoxFuture<'_, Result<Listing>> {
        async move {
            let prefix = &self.location.prefix;
            let metas: Vec<_> = self
                .location
                .store
                .list(Some(prefix))
                .try_collect()
                .await
                .map_err(|e| IndexerError::store(&self.location.uri, e))?;
            let mut listing = Listing::default();
            for meta in metas {
                let relative = self
                    .location
                    .relative(&meta.location)
                    .unwrap_or_else(|| meta.location.to_string());
                let uri = self.location.uri_of(&meta.location);
                if let Some(reason) = self.filter.skip_reason(&relative) {
                    listing.skipped.push(Skipped { uri, reason });
                    continue;
                }
                listing.entries.push(SourceEntry {
                    uri,
                    relative_path: relative,
                    size: meta.size,
                    etag: meta.e_tag,
                });
            }
            listing.entries.sort_by(|a, b| a.relative_path.cmp(&b.relative_path));
            Ok(listing)
        }
        .boxed()
    }

    fn fetch<'a>(&'a self, entry: &'a SourceEntry) -> BoxFuture<'a, Result<RawDocument>> {
        async move {
            if entry.size > self.max_file_bytes {
                return Err(super::too_large(entry.size, self.max_file_bytes));
            }
            let key = self.location.child(&entry.relative_path);
            let result = self
                .location
                .store
                .get(&key)
                .await
                .map_err(|e| IndexerError::store(&entry.uri, e))?;
            let etag = result.meta.e_tag.clone();
            let content_type = result
                .attributes
                .get(&object_store::Attribute::ContentType)
                .map(|value| value.to_string());
            let bytes = result.bytes().await.map_err(|e| IndexerError::store(&entry.uri, e))?;
            Ok(RawDocument {
                uri: entry.uri.clone(),
                relative_path: entry.relative_path.clone(),
                size: bytes.len() as u64,
                bytes,
                etag,
                source: self.location.scheme.to_string(),
                content_type,
            })
        }
        .boxed()
    }

    fn open<'a>(&'a self, entry: &'a SourceEntry) -> BoxFuture<'a, Result<StreamedFile>> {
        async move {
            let key = self.location.child(&entry.relative_path);
            let reader = RangedReader {
                store: self.location.store.clone(),
                key,
                uri: entry.uri.clone(),
                runtime: tokio::runtime::Handle::current(),
                size: entry.size,
                etag: entry.etag.clone(),
                next: 0,
                piece: bytes::Bytes::new(),
            };
            Ok(StreamedFile {
                file: RawDocument {
                    uri: entry.uri.clone(),
                    relative_path: entry.relative_path.clone(),
                    size: entry.size,
                    bytes: bytes::Bytes::new(),
                    etag: entry.etag.clone(),
                    source: self.location.scheme.to_string(),
                    content_type: None,
                },
                bytes: Box::new(reader),
            })
        }
        .boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object_store::{ObjectStoreExt, PutPayload};

    async fn put(loc: &Location, key: &str, body: &'static str) {
        loc.store
            .put(&loc.child(key), PutPayload::from_static(body.as_bytes()))
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn lists_recursively_with_globs_and_hidden_files_skipped() {
        let loc = open_location("memory://source-test/docs", &Default::default(), false).unwrap();
        put(&loc, "a.md", "# A").await;
        put(&loc, "sub/b.txt", "b").await;
        put(&loc, "sub/deeper/c.txt", "c").await;
        put(&loc, ".git/config", "x").await;
        put(&loc, "sub/.hidden.txt", "x").await;
        put(&loc, "skip/me.txt", "x").await;
        let options = SourceOptions {
            exclude: vec!["skip/**".into()],
            ..Default::default()
        };
        let source = ObjectStoreSource::open("memory://source-test/docs", &options).unwrap();
        let listing = source.list().await.unwrap();
        let names: Vec<_> = listing.entries.iter().map(|e| e.relative_path.as_str()).collect();
        assert_eq!(names, ["a.md", "sub/b.txt", "sub/deeper/c.txt"]);
        assert_eq!(listing.skipped.len(), 3);
        assert!(listing
            .skipped
            .iter()
            .any(|s| s.uri.ends_with(".git/config") && s.reason == "hidden file"));

        let only_txt = SourceOptions {
            include: vec!["**/*.txt".into()],
            ..Default::default()
        };
        let source = ObjectStoreSource::open("memory://source-test/docs", &only_txt).unwrap();
        let listing = source.list().await.unwrap();
        assert_eq!(listing.entries.len(), 3, "{:?}", listing.entries); // b, c, skip/me

        let raw = source.fetch(&listing.entries[0]).await.unwrap();
        assert_eq!(&raw.bytes[..], b"x");
        assert_eq!(raw.source, "memory");
    }

    #[tokio::test]
    async fn oversized_file_fails_with_its_size() {
        let loc = open_location("memory://source-big", &Default::default(), false).unwrap();
        put(&loc, "big.txt", "0123456789").await;
        let options = SourceOptions {
            max_file_bytes: 4,
            ..Default::default()
        };
        let source = ObjectStoreSource::open("memory://source-big", &options).unwrap();
        let listing = source.list().await.unwrap();
        let err = source.fetch(&listing.entries[0]).await.unwrap_err();
        assert!(err.to_string().contains("file too large: 10 bytes"), "{err}");
    }
}
