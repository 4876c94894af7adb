//! The fetch stage: the listed files fetched `concurrency` at a time, each handed to the
//! parse stage once the fetched files not yet parsed leave room in the budget. Its busy
//! seconds leave out the time the stages after it held it back (the budget full, the channel
//! to the parse stage full): on a run the model paces, the fetch loop runs ahead and then
//! waits, and counting those waits made the fetch stage look as busy as the whole run.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};

use super::progress::Counters;
use super::stages::FETCHED_BUDGET_KIB;
use crate::error::{IndexerError, Result};
use crate::parse::{sniff_stream, stream_reading, StreamKind, StreamReading};
use crate::source::{RawDocument, Source, SourceEntry, StreamedFile};

/// A file on its way to the parse stage: read whole, or opened to be read as a stream of
/// records of a kind (a JSONL corpus, a MediaWiki dump, a Stack Exchange table:
/// `parse::RecordStream`).
pub(super) enum Fetched {
    File(RawDocument),
    Stream(StreamedFile, StreamKind),
}

/// A fetched file on its way to the parse stage, with its share of the budget.
pub(super) type FetchedFile = (Fetched, OwnedSemaphorePermit);

/// The fetch loop's seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct FetchSecs {
    /// Fetching (waiting on the source included), not held back.
    pub busy: f64,
    /// Waiting for the stages after it.
    pub held_back: f64,
}

/// Fetches `entries` from `source`, `concurrency` at a time, and sends each file to
/// `to_parse` with `budget` permits for its KiB (a file larger than the whole budget takes
/// all of it); a file that fails goes to `fail` with its URI and why. Stops early when the
/// parse stage stops listening.
pub(super) async fn fetch_stage(
    entries: Vec<SourceEntry>,
    source: Arc<dyn Source>,
    concurrency: usize,
    budget: Arc<Semaphore>,
    to_parse: mpsc::Sender<FetchedFile>,
    counters: &Counters,
    fail: impl Fn(&str, String),
) -> FetchSecs {
    let started = Instant::now();
    let mut held_back = Duration::ZERO;
    let mut fetched = futures::stream::iter(entries)
        .map(|entry| {
            let source = source.clone();
            async move {
                let result = fetch_or_open(source.as_ref(), &entry).await;
                (entry, result)
            }
        })
        .buffer_unordered(concurrency.max(1));
    while let Some((entry, result)) = fetched.next().await {
        counters.fetched.fetch_add(1, Ordering::Relaxed);
        match result {
            Ok(raw) => {
                let kib = match &raw {
                    Fetched::File(raw) => (raw.bytes.len() / 1024).clamp(1, FETCHED_BUDGET_KIB) as u32,
                    Fetched::Stream(..) => 1,
                };
                let waiting = Instant::now();
                // Waits while the fetched files not yet parsed hold the whole budget.
                let Ok(held) = budget.clone().acquire_many_owned(kib).await else {
                    break;
                };
                let sent = to_parse.send((raw, held)).await;
                held_back += waiting.elapsed();
                if sent.is_err() {
                    break; // a later stage stopped; its error is reported by the run
                }
            }
            Err(e) => fail(&entry.uri, e.to_string()),
        }
    }
    let total = started.elapsed();
    tracing::debug!(
        "fetch: {:.2} s, of which {:.2} s held back by the stages after it",
        total.as_secs_f64(),
        held_back.as_secs_f64()
    );
    FetchSecs {
        busy: total.saturating_sub(held_back).as_secs_f64(),
        held_back: held_back.as_secs_f64(),
    }
}

/// `entry` fetched whole, or opened as a stream where it is read as one: a compressed JSONL
/// file, mailbox or CSV/TSV table, one past the size limit, and a MediaWiki dump, a Stack
/// Exchange table or a mailbox of no known extension, compressed or past the limit (told by
/// its first bytes; other XML is fetched whole, or fails as too large).
async fn fetch_or_open(source: &dyn Source, entry: &SourceEntry) -> Result<Fetched> {
    let reading = stream_reading(&entry.relative_path);
    let open_as = |kind| async move { Ok(Fetched::Stream(source.open(entry).await?, kind)) };
    let open_if_sniffed = || async {
        let opened = source.open(entry).await?;
        let sniffed = tokio::task::spawn_blocking(move || sniff_stream(opened))
            .await
            .map_err(|e| IndexerError::Config(format!("reading {}: {e}", entry.uri)))?;
        let (kind, opened) = sniffed.map_err(|e| IndexerError::io(&entry.uri, e))?;
        Ok::<_, IndexerError>(kind.map(|kind| Fetched::Stream(opened, kind)))
    };
    match reading {
        StreamReading::Always(kind) => return open_as(kind).await,
        StreamReading::SniffedAlways => {
            if let Some(stream) = open_if_sniffed().await? {
                return Ok(stream);
            }
        }
        _ => {}
    }
    match (source.fetch(entry).await, reading) {
        (Err(IndexerError::FileTooLarge { .. }), StreamReading::PastTheSizeLimit(kind)) => open_as(kind).await,
        (Err(too_large @ IndexerError::FileTooLarge { .. }), StreamReading::SniffedPastTheSizeLimit) => {
            open_if_sniffed().await?.ok_or(too_large)
        }
        (fetched, _) => fetched.map(Fetched::File),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::source::{LocalFolderSource, SourceOptions};

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_time_a_slow_parse_stage_holds_it_back_is_not_busy_time() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..6 {
            std::fs::write(dir.path().join(format!("{i}.txt")), format!("file {i}")).unwrap();
        }
        let source: Arc<dyn Source> =
            Arc::new(LocalFolderSource::open(dir.path().to_str().unwrap(), &SourceOptions::default()).unwrap());
        let entries = source.list().await.unwrap().entries;
        // A file listed and then gone fails alone, by its URI.
        std::fs::remove_file(dir.path().join("5.txt")).unwrap();
        let (to_parse, mut parsed) = mpsc::channel::<FetchedFile>(1);
        // A parse stage that takes 120 ms a file: the channel of one holds the fetch loop.
        let parse = tokio::spawn(async move {
            let mut uris = Vec::new();
            loop {
                tokio::time::sleep(Duration::from_millis(120)).await;
                match parsed.recv().await {
                    Some((Fetched::File(raw), _permit)) => uris.push(raw.relative_path),
                    Some((Fetched::Stream(stream, _), _permit)) => uris.push(stream.file.relative_path),
                    None => return uris,
                }
            }
        });
        let (counters, failed) = (Counters::default(), Mutex::new(Vec::new()));
        let secs = fetch_stage(
            entries,
            source,
            4,
            Arc::new(Semaphore::new(FETCHED_BUDGET_KIB)),
            to_parse,
            &counters,
            |uri, why| failed.lock().unwrap().push((uri.to_string(), why)),
        )
        .await;
        let mut uris = parse.await.unwrap();
        uris.sort();
        assert_eq!(uris, ["0.txt", "1.txt", "2.txt", "3.txt", "4.txt"]);
        assert_eq!(counters.fetched.load(Ordering::Relaxed), 6);
        let failed = failed.into_inner().unwrap();
        assert_eq!(failed.len(), 1, "{failed:?}");
        assert!(failed[0].0.ends_with("5.txt"), "{failed:?}");
        // Five files behind a channel of one, 120 ms a file: at least three waits of ~120 ms.
        assert!(secs.held_back >= 0.3, "{secs:?}");
        assert!(secs.busy < secs.held_back / 2.0, "{secs:?}");
    }
}
