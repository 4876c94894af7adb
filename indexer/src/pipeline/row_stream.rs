//! A segment's settled documents turned into chunks.parquet's and documents.parquet's row
//! groups and into parts of its keyword index while the run embeds on: each full group of
//! rows is encoded, and each [`KEYWORD_PART_ROWS`] rows are indexed, on the row files' pool
//! as soon as their rows are handed over, so that once the segment is cut only its last rows
//! are left to write and to index. Their vectors are laid out in row order as they are
//! handed over, so that the cut lays out only the last rows' (at 1M rows, copying every
//! vector at the cut took 3.4-4.2 s on two cores).
//! On a GPU host the cores are mostly idle while the model embeds; after the last embedding,
//! the row files were the longest of the segment's three parts, then the keyword index
//! (bench/RESULTS.md).

use std::collections::VecDeque;
use std::ops::Range;
use std::panic::AssertUnwindSafe;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use super::keyword_ahead::{KeywordPartsAhead, KeywordRows};
use super::own_pools::ROW_FILES_POOL;
use super::segment::LaidOutVectors;
use super::types::EmbeddedDoc;
use crate::error::{IndexerError, Result};
use crate::index::analysis::{LanguageProfile, SureLanguages};
use crate::index::KeywordPart;
use crate::snapshot::{RowFilesWriting, ROW_GROUP_ROWS};

/// Rows of a keyword index part built while the run embeds: 16 parts at 1M rows, each
/// about a second's work for one thread.
pub(super) const KEYWORD_PART_ROWS: usize = 65_536;

/// The row files of the segment being gathered, and the documents handed to them so far.
pub(super) struct RowStream {
    files: Arc<RowFilesWriting>,
    dim: usize,
    /// Every document handed over, in order (shared with the groups queued and being encoded),
    /// without its vectors: those are in `vectors`.
    documents: Vec<Arc<EmbeddedDoc>>,
    /// Their vectors, laid out row after row as the segment's vector array begins (so that
    /// the cut copies only the rest of its rows'; its room is reserved at once, see
    /// [`vector_room`]); a group of chunks.parquet takes a copy of its rows', so no document
    /// holds its own while it waits for the cut.
    vectors: Vec<f32>,
    /// The rows handed over and not yet in a group of chunks.parquet.
    chunk_rows: RowCursor,
    /// The rows handed over and not yet in a keyword part.
    keyword_rows: RowCursor,
    /// The sure languages of the rows handed over (their unsure rows' reading is guessed from these).
    sure_languages: SureLanguages,
    /// Documents in documents.parquet's groups so far (the first ones handed over).
    documents_grouped: usize,
    /// Each task sends here the keyword part it built, if any, once it has ended.
    keyword_tx: Sender<Option<KeywordPart>>,
    keyword_rx: Receiver<Option<KeywordPart>>,
    queue: Arc<Mutex<GroupQueue>>,
    /// Tasks started, each to encode the group first in the queue when it runs.
    tasks: usize,
    /// Each task says here when it has let go of the documents and the files (a row
    /// group's once it is encoded, a keyword part's once its rows are copied).
    ended_tx: Sender<()>,
    ended_rx: Receiver<()>,
    started: Instant,
}

/// Documents' ranges of rows, in order.
type Rows = Vec<(Arc<EmbeddedDoc>, Range<usize>)>;

/// Work on rows handed over: a row group of one of the files, or a part of the keyword index.
enum Group {
    /// chunks.parquet's: its rows, and their vectors one after another.
    Chunks(Rows, Vec<f32>),
    /// documents.parquet's: documents, in order.
    Documents(Vec<Arc<EmbeddedDoc>>),
    /// The keyword index's rows from `first_row` on, their unsure rows read as `guess` reads them.
    Keyword {
        first_row: usize,
        rows: Rows,
        guess: LanguageProfile,
    },
}

/// Where the next group of rows starts among the documents handed over.
#[derive(Default)]
struct RowCursor {
    /// The documents whose rows are not all in a group yet: from `documents[open]`, less
    /// the first `open_skip` rows of that one.
    open: usize,
    open_skip: usize,
    /// Rows handed over and not yet in a group.
    open_rows: usize,
    /// Rows in groups so far.
    grouped: usize,
}

/// The groups whose rows are handed over and that no task has taken yet.
struct GroupQueue {
    groups: VecDeque<Group>,
    /// Each file's index of its group next taken.
    next_chunks_index: usize,
    next_documents_index: usize,
    next_keyword_index: usize,
    /// Once the stream stops, tasks take nothing more.
    stopped: bool,
}

/// What a stream hands back when its segment is cut.
pub(super) struct StoppedStream {
    /// Its documents, in order.
    pub documents: Vec<EmbeddedDoc>,
    /// Their vectors, laid out in row order (the documents hold none).
    pub vectors: LaidOutVectors,
    /// The row files, holding the groups encoded before the stream stopped.
    pub files: RowFilesWriting,
    /// The keyword index's parts built before the stream stopped, or being built.
    pub keyword_parts: KeywordPartsAhead,
    /// The rows those parts hold.
    pub keyword_rows: usize,
}

/// An empty array with room for `rows` rows of `dim` values, where the address space can be
/// had (none where it cannot: it then grows as it goes). Its pages are only taken as rows are
/// written into them. Grown by doubling instead, each array it outgrew was freed while the
/// run embeds, when a one-shot run keeps freed memory for reuse (`RunOptions::after_embedding`):
/// at 1M rows the memory held when the embedding ended was 9% more (bench/RESULTS.md).
fn vector_room(rows: usize, dim: usize) -> Vec<f32> {
    let mut vectors = Vec::new();
    if let Some(values) = rows.checked_mul(dim) {
        // Refused (more than the address space, or than the system lets a process map at
        // once): no room reserved, nothing else changes.
        let _ = vectors.try_reserve_exact(values);
    }
    vectors
}

impl RowStream {
    /// A stream into `files`, for vectors of `dim` dimensions, of a segment cut at about
    /// `segment_rows` rows.
    pub fn new(files: RowFilesWriting, dim: usize, segment_rows: usize) -> Self {
        let (ended_tx, ended_rx) = channel();
        let (keyword_tx, keyword_rx) = channel();
        Self {
            files: Arc::new(files),
            dim,
            documents: Vec::new(),
            vectors: vector_room(segment_rows, dim),
            chunk_rows: RowCursor::default(),
            keyword_rows: RowCursor::default(),
            sure_languages: SureLanguages::default(),
            documents_grouped: 0,
            keyword_tx,
            keyword_rx,
            queue: Arc::new(Mutex::new(GroupQueue {
                groups: VecDeque::new(),
                next_chunks_index: 0,
                next_documents_index: 0,
                next_keyword_index: 0,
                stopped: false,
            })),
            tasks: 0,
            ended_tx,
            ended_rx,
            started: Instant::now(),
        }
    }

    /// Hands over `documents`, which follow those handed before in the segment's row order
    /// (their vectors laid out after those handed before: each must have one per chunk);
    /// queues every group of rows and keyword part now full, each with a task on the row
    /// files' pool to encode or index it.
    pub fn push(&mut self, documents: impl IntoIterator<Item = EmbeddedDoc>) -> Result<()> {
        for mut document in documents {
            if document.vectors.len() != document.chunks.len() * self.dim {
                return Err(IndexerError::snapshot(
                    "chunks.parquet",
                    format!(
                        "{}: {} vector values for {} chunks of {} dimensions",
                        document.record.uri,
                        document.vectors.len(),
                        document.chunks.len(),
                        self.dim
                    ),
                ));
            }
            self.chunk_rows.open_rows += document.chunks.len();
            self.keyword_rows.open_rows += document.chunks.len();
            // Rows whose languages the parse stage did not tell count in no guess.
            if document.languages.len() == document.chunks.len() {
                document.languages.iter().for_each(|d| self.sure_languages.add(d));
            }
            self.vectors.extend_from_slice(&std::mem::take(&mut document.vectors));
            self.documents.push(Arc::new(document));
        }
        while self.chunk_rows.open_rows >= ROW_GROUP_ROWS {
            let first_row = self.chunk_rows.grouped;
            let rows = self.chunk_rows.take(&self.documents, ROW_GROUP_ROWS);
            let vectors = self.vectors[first_row * self.dim..self.chunk_rows.grouped * self.dim].to_vec();
            self.queue_group(Group::Chunks(rows, vectors));
        }
        while self.documents.len() - self.documents_grouped >= ROW_GROUP_ROWS {
            let first = self.documents_grouped;
            self.documents_grouped += ROW_GROUP_ROWS;
            let group = Group::Documents(self.documents[first..self.documents_grouped].to_vec());
            self.queue_group(group);
        }
        while self.keyword_rows.open_rows >= KEYWORD_PART_ROWS {
            let first_row = self.keyword_rows.grouped;
            let rows = self.keyword_rows.take(&self.documents, KEYWORD_PART_ROWS);
            let guess = self.sure_languages.reading_profile();
            self.queue_group(Group::Keyword { first_row, rows, guess });
        }
        Ok(())
    }

    /// Queues `group`, with a task to encode it.
    fn queue_group(&mut self, group: Group) {
        lock(&self.queue).groups.push_back(group);
        self.start_task();
    }

    /// A task on the row files' pool that takes the group first in the queue (none once the
    /// stream has stopped) and encodes it as its file's next group.
    fn start_task(&mut self) {
        let (queue, files, dim, ended) = (self.queue.clone(), self.files.clone(), self.dim, self.ended_tx.clone());
        let keyword_parts = self.keyword_tx.clone();
        self.tasks += 1;
        ROW_FILES_POOL.spawn(move || {
            let taken = {
                let mut queue = lock(&queue);
                match queue.stopped {
                    true => None,
                    false => queue.groups.pop_front().map(|group| {
                        let next = match group {
                            Group::Chunks(..) => &mut queue.next_chunks_index,
                            Group::Documents(_) => &mut queue.next_documents_index,
                            Group::Keyword { .. } => &mut queue.next_keyword_index,
                        };
                        *next += 1;
                        (*next - 1, group)
                    }),
                }
            };
            // A panic fails the file (its error comes when the segment is written) or the
            // keyword part (its rows are indexed with the rest) rather than the process: a
            // pool's task that panics aborts.
            let keyword_rows = std::panic::catch_unwind(AssertUnwindSafe(|| match &taken {
                Some((index, Group::Chunks(rows, vectors))) => {
                    files.encode_group(*index, || {
                        rows.iter()
                            .flat_map(|(document, rows)| document.chunks[rows.clone()].iter())
                            .zip(vectors.chunks(dim.max(1)))
                            .collect()
                    });
                    None
                }
                Some((index, Group::Documents(documents))) => {
                    files.encode_document_group(*index, || documents.iter().map(|d| &d.record).collect());
                    None
                }
                Some((_, Group::Keyword { first_row, rows, guess })) => Some(KeywordRows::copied(*first_row, rows, guess)),
                None => None,
            }))
            .ok()
            .flatten();
            // Its shares of the documents and the files let go before it says so.
            drop((taken, files, queue));
            let _ = ended.send(());
            let part = keyword_rows.and_then(|rows| {
                match std::panic::catch_unwind(AssertUnwindSafe(|| rows.build())) {
                    Ok(Ok(part)) => Some(part),
                    Ok(Err(error)) => {
                        tracing::warn!("a keyword part built while the run embedded failed ({error}): its rows are indexed with the rest");
                        None
                    }
                    Err(_) => None,
                }
            });
            let _ = keyword_parts.send(part);
        });
    }

    /// Stops taking rows: the groups no task has taken yet are left (their rows are the
    /// segment's to write with the rest); waits for those being encoded (and for the keyword
    /// parts being built to copy their rows) and hands the documents and the row files back,
    /// with the keyword parts built and being built.
    pub fn stop(self) -> Result<StoppedStream> {
        let Self {
            files,
            documents,
            vectors,
            queue,
            tasks,
            ended_rx,
            keyword_rx,
            started,
            ..
        } = self;
        let (left, keyword_parts_taken) = {
            let mut queue = lock(&queue);
            queue.stopped = true;
            (std::mem::take(&mut queue.groups).len(), queue.next_keyword_index)
        };
        for _ in 0..tasks {
            ended_rx
                .recv()
                .map_err(|_| IndexerError::snapshot("chunks.parquet", "a row group's task ended unheard"))?;
        }
        let unshared = |what: &str| {
            IndexerError::snapshot(
                "chunks.parquet",
                format!("{what} still shared after its row groups' tasks ended"),
            )
        };
        let files = Arc::into_inner(files).ok_or_else(|| unshared("the row files"))?;
        let documents = documents
            .into_iter()
            .map(|document| Arc::into_inner(document).ok_or_else(|| unshared("a document")))
            .collect::<Result<Vec<_>>>()?;
        tracing::debug!(
            "{} + {} row groups written while the run embedded, over {:.2} s; {left} full groups or keyword parts queued left to the cut",
            files.groups_appended(),
            files.document_groups_appended(),
            started.elapsed().as_secs_f64()
        );
        let vectors = LaidOutVectors {
            data: vectors,
            documents: documents.len(),
        };
        Ok(StoppedStream {
            documents,
            vectors,
            files,
            keyword_parts: KeywordPartsAhead::new(keyword_rx, tasks),
            keyword_rows: keyword_parts_taken * KEYWORD_PART_ROWS,
        })
    }
}

fn lock<T>(shared: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

impl RowCursor {
    /// The next `wanted` rows of `documents` (at most those open).
    fn take(&mut self, documents: &[Arc<EmbeddedDoc>], wanted: usize) -> Rows {
        let mut rows = Vec::new();
        let mut left = wanted.min(self.open_rows);
        self.open_rows -= left;
        self.grouped += left;
        while left > 0 {
            let document = &documents[self.open];
            let open = document.chunks.len() - self.open_skip;
            let taken = open.min(left);
            if taken > 0 {
                rows.push((document.clone(), self.open_skip..self.open_skip + taken));
            }
            left -= taken;
            if taken == open {
                (self.open, self.open_skip) = (self.open + 1, 0);
            } else {
                self.open_skip += taken;
            }
        }
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::super::segment::{assemble, assemble_onto, detected_languages};
    use super::super::types::test_documents::embedded;
    use super::*;
    use crate::index::{build_keyword_index_detected, build_keyword_index_with_parts, keyword_segment_files};
    use crate::snapshot::{chunks_to_parquet, documents_to_parquet, SnapshotWriter};
    use crate::store::StoreOptions;

    #[test]
    fn rows_handed_over_in_pieces_make_the_file_of_one_pass_over_every_row() {
        // Documents of 0 to 20,000 chunks: some end on a group's last row, some cross one
        // or two group boundaries; 75,393 rows, four full groups and a last of 9,857.
        let sizes = [
            3u32, 0, 9_000, 1, 16_384, 7_000, 20_000, 5, 0, 12_000, 16_384, 1, 0, 2_000, 0, 8, 9, 6, 11, 1, 0, 6,
        ];
        let total: usize = sizes.iter().map(|&n| n as usize).sum();
        let documents = || {
            sizes
                .iter()
                .enumerate()
                .map(|(n, &chunks)| embedded(n as u32, chunks, false))
        };
        let expected = {
            let rows = assemble(documents().collect(), 4);
            chunks_to_parquet(&rows.chunks, &rows.embeddings).unwrap()
        };
        for handed in [0, 3, 7, 12, sizes.len()] {
            let dir = tempfile::tempdir().unwrap();
            let writer = SnapshotWriter::open(dir.path().to_str().unwrap(), &StoreOptions::default()).unwrap();
            let mut stream = RowStream::new(writer.start_row_files("seg-test", 4).unwrap(), 4, 0);
            let mut all: Vec<EmbeddedDoc> = documents().collect();
            let rest = all.split_off(handed);
            // Handed over two documents at a time.
            let mut handing = all.into_iter().peekable();
            while handing.peek().is_some() {
                stream.push(handing.by_ref().take(2)).unwrap();
            }
            // Every full group of the rows handed over is written while the stream goes on.
            let handed_rows: usize = sizes[..handed].iter().map(|&n| n as usize).sum();
            let waiting = Instant::now();
            while stream.files.groups_appended() < handed_rows / ROW_GROUP_ROWS {
                assert!(
                    waiting.elapsed().as_secs() < 60,
                    "{handed} documents: groups not written"
                );
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            let stopped = stream.stop().unwrap();
            assert_eq!(stopped.files.groups_appended(), handed_rows / ROW_GROUP_ROWS);
            let uris: Vec<String> = stopped.documents.iter().map(|d| d.record.uri.clone()).collect();
            assert_eq!(
                uris,
                (0..handed).map(|n| format!("file:///c/{n:04}.txt")).collect::<Vec<_>>()
            );
            let mut segment = stopped.documents;
            segment.extend(rest);
            // The documents handed over hold no vectors: the stream laid them out.
            assert!(segment[..handed].iter().all(|d| d.vectors.is_empty()));
            let rows = assemble_onto(stopped.vectors, segment, 4).unwrap();
            assert_eq!(rows.chunks.len(), total);
            assert!(rows.embeddings.data == assemble(documents().collect(), 4).embeddings.data);
            let written = stopped
                .files
                .finish(&rows.chunks, &rows.embeddings, &rows.records)
                .unwrap();
            let bytes = std::fs::read(written.chunks_path()).unwrap();
            assert!(
                bytes == expected,
                "{handed} documents handed over: {} bytes against one pass's {}",
                bytes.len(),
                expected.len()
            );
            assert!(written.documents_bytes() == documents_to_parquet(&rows.records).unwrap());
        }
    }

    #[test]
    fn documents_handed_over_make_documents_parquet_of_one_pass() {
        // 40,000 documents of 0 to 2 chunks, in URI order: two full groups of documents (and
        // two of chunks) before the stream stops, the rest at the end.
        let in_uri_order = || {
            let mut documents: Vec<EmbeddedDoc> = (0..40_000u32).map(|n| embedded(n, n % 3, false)).collect();
            documents.sort_by(|a, b| a.record.uri.cmp(&b.record.uri));
            documents
        };
        let rows = assemble(in_uri_order(), 4);
        let mut documents = in_uri_order();
        let expected = documents_to_parquet(&rows.records).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let writer = SnapshotWriter::open(dir.path().to_str().unwrap(), &StoreOptions::default()).unwrap();
        let mut stream = RowStream::new(writer.start_row_files("seg-test", 4).unwrap(), 4, 0);
        let rest = documents.split_off(35_000);
        let mut handing = documents.into_iter().peekable();
        while handing.peek().is_some() {
            stream.push(handing.by_ref().take(1_000)).unwrap();
        }
        let waiting = Instant::now();
        while stream.files.document_groups_appended() < 2 || stream.files.groups_appended() < 2 {
            assert!(waiting.elapsed().as_secs() < 60, "groups not written");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let stopped = stream.stop().unwrap();
        let mut segment = stopped.documents;
        segment.extend(rest);
        let rows = assemble_onto(stopped.vectors, segment, 4).unwrap();
        let written = stopped
            .files
            .finish(&rows.chunks, &rows.embeddings, &rows.records)
            .unwrap();
        assert!(written.documents_bytes() == expected);
        assert!(
            std::fs::read(written.chunks_path()).unwrap() == chunks_to_parquet(&rows.chunks, &rows.embeddings).unwrap()
        );
    }

    #[test]
    fn a_stream_stopped_with_groups_queued_leaves_their_rows_to_the_segment() {
        // Ten groups' rows handed over at once and the stream stopped at once: the groups
        // no task took are left out, and the rows left make the same file.
        let documents = || (0..10u32).map(|n| embedded(n, ROW_GROUP_ROWS as u32 + 7, false));
        let expected = {
            let rows = assemble(documents().collect(), 4);
            chunks_to_parquet(&rows.chunks, &rows.embeddings).unwrap()
        };
        let dir = tempfile::tempdir().unwrap();
        let writer = SnapshotWriter::open(dir.path().to_str().unwrap(), &StoreOptions::default()).unwrap();
        let mut stream = RowStream::new(writer.start_row_files("seg-test", 4).unwrap(), 4, 0);
        stream.push(documents()).unwrap();
        let stopped = stream.stop().unwrap();
        assert!(stopped.files.groups_appended() <= 10);
        let rows = assemble_onto(stopped.vectors, stopped.documents, 4).unwrap();
        let written = stopped
            .files
            .finish(&rows.chunks, &rows.embeddings, &rows.records)
            .unwrap();
        assert!(std::fs::read(written.chunks_path()).unwrap() == expected);
    }

    #[test]
    fn keyword_parts_built_ahead_make_the_index_of_one_build() {
        // 150,000 rows: two full keyword parts, the rest left to the end; half the documents
        // with their languages told, half detected when their part is built.
        let documents = || (0..5u32).map(|n| embedded(n, 30_000, n % 2 == 0));
        let dir = tempfile::tempdir().unwrap();
        let writer = SnapshotWriter::open(dir.path().to_str().unwrap(), &StoreOptions::default()).unwrap();
        let mut stream = RowStream::new(writer.start_row_files("seg-test", 4).unwrap(), 4, 0);
        stream.push(documents()).unwrap();
        // Every group taken by a task, then stopped: the parts are waited for after the stop.
        let waiting = Instant::now();
        while !lock(&stream.queue).groups.is_empty() {
            assert!(waiting.elapsed().as_secs() < 60, "groups not taken");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let stopped = stream.stop().unwrap();
        let keyword_parts = stopped.keyword_parts.wait();
        let rows: Vec<_> = keyword_parts.iter().map(KeywordPart::rows).collect();
        assert_eq!(rows, [0..KEYWORD_PART_ROWS, KEYWORD_PART_ROWS..2 * KEYWORD_PART_ROWS]);
        let rows = assemble_onto(stopped.vectors, stopped.documents, 4).unwrap();
        let texts: Vec<&str> = rows.chunks.iter().map(|c| c.text.as_str()).collect();
        let detected = detected_languages(&rows.chunks, &rows.languages);
        let (with_parts, at_once) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (_, kept) = build_keyword_index_with_parts(with_parts.path(), &texts, &detected, keyword_parts).unwrap();
        assert_eq!((kept.parts, kept.rows, kept.rebuilt), (2, 2 * KEYWORD_PART_ROWS, 0));
        build_keyword_index_detected(at_once.path(), &texts, &detected).unwrap();
        let (written, expected) = (
            keyword_segment_files(with_parts.path()),
            keyword_segment_files(at_once.path()),
        );
        assert_eq!(written.keys().collect::<Vec<_>>(), expected.keys().collect::<Vec<_>>());
        for (extension, bytes) in &written {
            assert!(bytes == &expected[extension], "the .{extension} files differ");
        }
    }

    #[test]
    fn a_document_without_one_vector_per_chunk_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let writer = SnapshotWriter::open(dir.path().to_str().unwrap(), &StoreOptions::default()).unwrap();
        let mut stream = RowStream::new(writer.start_row_files("seg-test", 4).unwrap(), 4, 0);
        let mut short = embedded(1, 3, false);
        short.vectors.truncate(8);
        let Err(error) = stream.push([embedded(0, 2, false), short]) else {
            panic!("a document of 3 chunks and 2 vectors was taken")
        };
        let error = error.to_string();
        assert!(
            error.contains("file:///c/0001.txt: 8 vector values for 3 chunks of 4 dimensions"),
            "{error}"
        );
    }

    #[test]
    fn rows_that_do_not_match_the_rows_handed_over_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let writer = SnapshotWriter::open(dir.path().to_str().unwrap(), &StoreOptions::default()).unwrap();
        let mut stream = RowStream::new(writer.start_row_files("seg-test", 4).unwrap(), 4, 0);
        stream.push([embedded(0, 20_000, false)]).unwrap();
        while stream.files.groups_appended() == 0 {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let stopped = stream.stop().unwrap();
        // The segment's rows are fewer than those already written.
        let rows = assemble(vec![embedded(0, 100, false)], 4);
        let Err(error) = stopped.files.finish(&rows.chunks, &rows.embeddings, &rows.records) else {
            panic!("a segment of fewer rows than were written was taken")
        };
        let error = error.to_string();
        assert!(
            error.contains("16384 rows were written but the segment has 100"),
            "{error}"
        );
    }

    #[test]
    fn a_segments_vectors_have_their_room_reserved_where_the_address_space_allows() {
        let room = vector_room(3_000, 384);
        assert!(room.is_empty());
        assert!(room.capacity() >= 3_000 * 384, "{}", room.capacity());
        // More than any address space: no room, and no failure.
        assert_eq!(vector_room(1 << 40, 384).capacity(), 0);
        assert_eq!(vector_room(usize::MAX, 2).capacity(), 0);
    }
}
