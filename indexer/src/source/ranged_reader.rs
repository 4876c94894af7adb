//! An object-store object read in order, a ranged GET at a time ([`FIRST_PIECE_BYTES`], then
//! [`PIECE_BYTES`] each), each asking for the etag the listing saw: a file read as a stream
//! takes the memory of one piece, a slow reader (the parse stage waiting on the model) holds
//! no connection open between pieces, and an object replaced while it is read stops the read
//! rather than joining two versions' bytes. The reads block on the run's async runtime, so a
//! stream is read off it: on the parse stage's own thread, or on a blocking thread (its first
//! bytes read to tell what it is).

use std::io::Read;
use std::sync::Arc;

use bytes::{Buf, Bytes};
use object_store::path::Path as StorePath;
use object_store::{GetOptions, GetRange, ObjectStore};

/// Bytes one GET asks for...
pub(super) const PIECE_BYTES: u64 = 8 << 20;
/// ...but the first, which may be all that is read (a file's first bytes read to tell what it
/// is, before it is fetched whole).
pub(super) const FIRST_PIECE_BYTES: u64 = 1 << 20;

pub(super) struct RangedReader {
    pub store: Arc<dyn ObjectStore>,
    pub key: StorePath,
    /// The object's URI, for errors.
    pub uri: String,
    pub runtime: tokio::runtime::Handle,
    /// The object's size and etag as listed.
    pub size: u64,
    pub etag: Option<String>,
    /// Where the next GET starts.
    pub next: u64,
    /// What the last GET brought and is not yet read.
    pub piece: Bytes,
}

impl RangedReader {
    fn next_piece(&mut self) -> std::io::Result<Bytes> {
        let want = if self.next == 0 { FIRST_PIECE_BYTES } else { PIECE_BYTES };
        let range = self.next..self.size.min(self.next + want);
        let options = GetOptions {
            range: Some(GetRange::Bounded(range.clone())),
            if_match: self.etag.clone(),
            ..GetOptions::default()
        };
        let (store, key) = (self.store.clone(), self.key.clone());
        let got = self
            .runtime
            .block_on(async move { store.get_opts(&key, options).await?.bytes().await });
        let piece = match got {
            Ok(piece) => piece,
            Err(object_store::Error::Precondition { .. }) => {
                return Err(std::io::Error::other(format!(
                    "{} changed while it was read (its etag is no longer {})",
                    self.uri,
                    self.etag.as_deref().unwrap_or("the listed one")
                )))
            }
            Err(e) => return Err(std::io::Error::other(format!("reading {}: {e}", self.uri))),
        };
        if piece.is_empty() {
            return Err(std::io::Error::other(format!(
                "{} ended at byte {}, before the {} bytes it was listed with",
                self.uri, self.next, self.size
            )));
        }
        self.next += piece.len() as u64;
        Ok(piece)
    }
}

impl Read for RangedReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if !self.piece.has_remaining() {
            if self.next >= self.size {
                return Ok(0);
            }
            self.piece = self.next_piece()?;
        }
        let n = buf.len().min(self.piece.remaining());
        self.piece.copy_to_slice(&mut buf[..n]);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object_store::memory::InMemory;
    use object_store::{ObjectStoreExt, PutPayload};

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_object_is_read_a_piece_at_a_time_and_stops_where_it_changed() {
        let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        let key = StorePath::from("big.jsonl");
        let bytes: Vec<u8> = (0..(2 * PIECE_BYTES + 123)).map(|i| (i % 251) as u8).collect();
        let put = store.put(&key, PutPayload::from(bytes.clone())).await.unwrap();
        let reader = |etag: Option<String>| RangedReader {
            store: store.clone(),
            key: key.clone(),
            uri: "memory://t/big.jsonl".into(),
            runtime: tokio::runtime::Handle::current(),
            size: bytes.len() as u64,
            etag,
            next: 0,
            piece: Bytes::new(),
        };
        let mut whole = reader(put.e_tag.clone());
        let read = tokio::task::spawn_blocking(move || {
            let mut read = Vec::new();
            whole.read_to_end(&mut read).map(|_| read)
        })
        .await
        .unwrap()
        .unwrap();
        assert!(read == bytes, "{} bytes read of {}", read.len(), bytes.len());
        // Replaced after the first piece was read: the read stops, naming why.
        let mut changing = reader(put.e_tag.clone());
        let (store2, key2) = (store.clone(), key.clone());
        let error = tokio::task::spawn_blocking(move || {
            let mut first = vec![0u8; FIRST_PIECE_BYTES as usize];
            changing.read_exact(&mut first).unwrap();
            let runtime = changing.runtime.clone();
            runtime
                .block_on(store2.put(&key2, PutPayload::from_static(b"new")))
                .unwrap();
            changing.read(&mut [0u8; 16]).unwrap_err()
        })
        .await
        .unwrap();
        assert!(
            error
                .to_string()
                .contains("memory://t/big.jsonl changed while it was read"),
            "{error}"
        );
    }
}
