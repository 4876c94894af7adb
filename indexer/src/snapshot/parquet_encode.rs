//! Encoding rows as a Parquet file, its row groups on every thread of the current rayon pool.
//! Each row group's batch is made and its columns encoded by a task of its own; the threads
//! take the groups in order, and whichever thread finishes the group next in the file appends
//! it and every group finished after it that now follows in order. So the file is the one a
//! single `ArrowWriter` would write from one batch of every row (the same row groups, pages,
//! statistics and Arrow schema), no thread waits for a wave's slowest group, and the
//! appends run while other groups are encoded.

use std::collections::BTreeMap;
use std::io::Write;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use arrow_array::RecordBatch;
use arrow_schema::{DataType, Schema, SchemaRef};
use parquet::arrow::arrow_writer::{compute_leaves, ArrowColumnChunk, ArrowRowGroupWriterFactory};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::errors::ParquetError;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::ColumnPath;
use rayon::prelude::*;

use crate::error::{IndexerError, Result};

/// Rows per row group (the unit a reader skips by, and the unit encoded in parallel).
pub const ROW_GROUP_ROWS: usize = 16_384;

/// Encoded groups that may wait to be appended, per thread: a thread that took a group this
/// far ahead of the next one to append waits before encoding it, so memory holds at most
/// this many encoded groups a thread (a row group of 1M-row chunks.parquet is about 27 MB).
const GROUPS_AHEAD_PER_THREAD: usize = 2;

/// `batch` as the bytes of a Parquet file (zstd, see [`properties`]) named `file` in errors,
/// the columns named in `distinct` without a dictionary.
pub(super) fn write_batch(file: &'static str, batch: RecordBatch, distinct: &[&str]) -> Result<Vec<u8>> {
    write_row_groups(
        file,
        batch.schema(),
        distinct,
        batch.num_rows(),
        |rows| Ok(batch.slice(rows.start, rows.len())),
        Vec::new(),
    )
}

/// `rows` rows of `schema` as a Parquet file written to `out` (returned once the footer is
/// written), each row group's batch made by `batch_of(rows of the group)` inside the task that
/// encodes it (so no batch of every row is ever built). Encoded groups go to `out` in order as
/// soon as the groups before them have: written to a file, the encoded file is never whole in
/// memory ([`GROUPS_AHEAD_PER_THREAD`]). `distinct` names the top-level columns whose values
/// hardly repeat (ids, texts): they get no dictionary.
pub(super) fn write_row_groups<W: Write + Send>(
    file: &'static str,
    schema: SchemaRef,
    distinct: &[&str],
    rows: usize,
    batch_of: impl Fn(Range<usize>) -> Result<RecordBatch> + Sync,
    out: W,
) -> Result<W> {
    let writing = RowGroupFile::create(file, schema, distinct, out)?;
    writing.encode_rows(0, rows, batch_of);
    writing.finish()
}

/// A Parquet file written a row group of [`ROW_GROUP_ROWS`] rows at a time: each group
/// encoded by whichever thread takes it, appended in order once the groups before it are.
/// Groups may be handed over as their rows come ([`Self::encode_group`], from any thread)
/// and the rest in one parallel pass at the end ([`Self::encode_rows`]); the file is the one
/// [`write_row_groups`] writes from every row at once.
pub(super) struct RowGroupFile<W: Write + Send> {
    file: &'static str,
    factory: ArrowRowGroupWriterFactory,
    appender: InOrderAppender<W>,
}

impl<W: Write + Send> RowGroupFile<W> {
    /// The file named `file` in errors, of `schema`, its columns named in `distinct` without a
    /// dictionary, written to `out`.
    pub(super) fn create(file: &'static str, schema: SchemaRef, distinct: &[&str], out: W) -> Result<Self> {
        let fail = |e: ParquetError| IndexerError::snapshot(file, e);
        let props = properties(&schema, distinct).map_err(fail)?;
        // The ArrowWriter sets the file up (the Arrow schema in its metadata); its parts then
        // take the row groups encoded apart.
        let (file_writer, factory) = ArrowWriter::try_new(out, schema, Some(props))
            .and_then(ArrowWriter::into_serialized_writer)
            .map_err(fail)?;
        let ahead = rayon::current_num_threads().max(1) * GROUPS_AHEAD_PER_THREAD;
        Ok(Self {
            file,
            factory,
            appender: InOrderAppender::new(file, file_writer, ahead),
        })
    }

    /// Encodes row group `index` from the batch `batch_of` makes (once the group is fewer than
    /// [`GROUPS_AHEAD_PER_THREAD`] a thread ahead of the next one to append) and appends it
    /// once every group before it is; false once the file has failed (its error is
    /// [`Self::finish`]'s). A panic in `batch_of` or the encoding fails the file and goes on
    /// to the caller.
    pub(super) fn encode_group(&self, index: usize, batch_of: impl FnOnce() -> Result<RecordBatch>) -> bool {
        let fail = |e: ParquetError| IndexerError::snapshot(self.file, e);
        let _wakes = WakeOnPanic(&self.appender);
        if !self.appender.wait_for_room(index) {
            return false;
        }
        let encoded = batch_of().and_then(|group| encode_row_group(&self.factory, index, &group).map_err(fail));
        self.appender.append(index, encoded, fail)
    }

    /// Encodes the row groups of rows `first_row..rows` (`first_row` at a group's start) on
    /// every thread of the current rayon pool, each group's batch made by `batch_of(its
    /// rows)` inside the task that encodes it.
    pub(super) fn encode_rows(
        &self,
        first_row: usize,
        rows: usize,
        batch_of: impl Fn(Range<usize>) -> Result<RecordBatch> + Sync,
    ) {
        debug_assert_eq!(
            first_row % ROW_GROUP_ROWS,
            0,
            "row groups start at multiples of {ROW_GROUP_ROWS}"
        );
        let groups: Vec<Range<usize>> = (first_row..rows)
            .step_by(ROW_GROUP_ROWS)
            .map(|start| start..(start + ROW_GROUP_ROWS).min(rows))
            .collect();
        let first_group = first_row / ROW_GROUP_ROWS;
        let threads = rayon::current_num_threads().max(1);
        let taken = AtomicUsize::new(0);
        (0..threads.min(groups.len())).into_par_iter().for_each(|_| loop {
            let taken = taken.fetch_add(1, Ordering::Relaxed);
            let Some(rows) = groups.get(taken) else { break };
            if !self.encode_group(first_group + taken, || batch_of(rows.clone())) {
                break;
            }
        });
    }

    /// Encodes the rows of a file of `rows` rows not yet in it (from the first group not yet
    /// appended), as [`Self::encode_rows`]; refused when more rows were written already.
    pub(super) fn encode_rest(
        &self,
        rows: usize,
        batch_of: impl Fn(Range<usize>) -> Result<RecordBatch> + Sync,
    ) -> Result<()> {
        let first_row = self.groups_appended() * ROW_GROUP_ROWS;
        if first_row > rows {
            return Err(IndexerError::snapshot(
                self.file,
                format!("{first_row} rows were written but the segment has {rows}"),
            ));
        }
        self.encode_rows(first_row, rows, batch_of);
        Ok(())
    }

    /// Row groups appended so far.
    pub(super) fn groups_appended(&self) -> usize {
        self.appender.lock().next
    }

    /// The file's footer written once every group handed over is appended: its writer, or
    /// the first failure.
    pub(super) fn finish(self) -> Result<W> {
        let file = self.file;
        self.appender
            .finish()?
            .into_inner()
            .map_err(|e| IndexerError::snapshot(file, e))
    }
}

/// The file being written and the encoded groups waiting for the ones before them.
struct InOrderAppender<W: Write + Send> {
    state: Mutex<Appending<W>>,
    appended: Condvar,
    ahead: usize,
    file: &'static str,
}

struct Appending<W: Write + Send> {
    writer: SerializedFileWriter<W>,
    /// The next group to append.
    next: usize,
    waiting: BTreeMap<usize, Vec<ArrowColumnChunk>>,
    failed: Option<IndexerError>,
}

impl<W: Write + Send> InOrderAppender<W> {
    fn new(file: &'static str, writer: SerializedFileWriter<W>, ahead: usize) -> Self {
        Self {
            state: Mutex::new(Appending {
                writer,
                next: 0,
                waiting: BTreeMap::new(),
                failed: None,
            }),
            appended: Condvar::new(),
            ahead,
            file,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Appending<W>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits until group `index` is fewer than `ahead` groups past the next one to append
    /// (the thread holding that one never waits here, so the file always moves on); false
    /// once the file has failed.
    fn wait_for_room(&self, index: usize) -> bool {
        let mut state = self.lock();
        while index >= state.next + self.ahead && state.failed.is_none() {
            state = self.appended.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
        state.failed.is_none()
    }

    /// Hands group `index` over, then appends every group that now comes next; false once
    /// the file has failed (by this group or another).
    fn append(
        &self,
        index: usize,
        encoded: Result<Vec<ArrowColumnChunk>>,
        fail: impl Fn(ParquetError) -> IndexerError,
    ) -> bool {
        let mut state = self.lock();
        match encoded {
            Ok(chunks) => {
                state.waiting.insert(index, chunks);
            }
            Err(error) => {
                state.failed.get_or_insert(error);
            }
        }
        while state.failed.is_none() {
            let next = state.next;
            let Some(chunks) = state.waiting.remove(&next) else {
                break;
            };
            match append_row_group(&mut state.writer, chunks).map_err(&fail) {
                Ok(()) => state.next += 1,
                Err(error) => state.failed = Some(error),
            }
        }
        let ok = state.failed.is_none();
        if !ok {
            state.waiting.clear();
        }
        drop(state);
        self.appended.notify_all();
        ok
    }

    /// The file writer once every group is appended, or the first failure.
    fn finish(self) -> Result<SerializedFileWriter<W>> {
        let state = self.state.into_inner().unwrap_or_else(PoisonError::into_inner);
        match (state.failed, state.waiting.first_key_value()) {
            (Some(error), _) => Err(error),
            (None, Some((index, _))) => Err(IndexerError::snapshot(
                self.file,
                format!("row group {index} was encoded but group {} never was", state.next),
            )),
            (None, None) => Ok(state.writer),
        }
    }
}

/// Held by a thread while it encodes and appends a group: a panic there marks the file
/// failed and wakes the threads waiting for room, which would otherwise wait for that group.
struct WakeOnPanic<'a, W: Write + Send>(&'a InOrderAppender<W>);

impl<W: Write + Send> Drop for WakeOnPanic<'_, W> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.lock().failed.get_or_insert_with(|| {
                IndexerError::snapshot(self.0.file, "a thread panicked while encoding a row group")
            });
            self.0.appended.notify_all();
        }
    }
}

/// One encoded row group appended to the file.
fn append_row_group<W: Write + Send>(
    writer: &mut SerializedFileWriter<W>,
    chunks: Vec<ArrowColumnChunk>,
) -> std::result::Result<(), ParquetError> {
    let mut row_group = writer.next_row_group()?;
    for chunk in chunks {
        chunk.append_to_row_group(&mut row_group)?;
    }
    row_group.close().map(drop)
}

/// zstd level for every column but the vectors.
const ZSTD_LEVEL: i32 = 3;

/// zstd level for a vector column: after BYTE_STREAM_SPLIT its mantissa bytes are noise that
/// no level compresses and its sign and exponent bytes repeat plainly, so level 3's longer
/// match search finds nothing more. On 200,000 rows of real all-MiniLM-L6-v2 embeddings
/// (bench/RESULTS.md, "Writing the segment") level 1 wrote a 1% smaller file, 12% faster.
const VECTOR_ZSTD_LEVEL: i32 = 1;

/// zstd ([`ZSTD_LEVEL`]) for every column. A column named in
/// `distinct` gets no dictionary: its values hardly repeat, so the dictionary would fill up
/// and be dropped for plain pages, and stay in the file as one more page that a reader of a
/// few rows must read whole. A vector column (a fixed-size list of f32) gets no dictionary
/// either (its floats hardly repeat: building one only to drop it costs time), no
/// min/max statistics (no reader prunes by a vector's components), BYTE_STREAM_SPLIT
/// encoding, which puts each byte position of the floats together so zstd finds the
/// repetition in the sign and exponent bytes (a smaller file, at the same speed), and
/// [`VECTOR_ZSTD_LEVEL`].
fn properties(schema: &Schema, distinct: &[&str]) -> std::result::Result<WriterProperties, ParquetError> {
    let mut builder = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(ZSTD_LEVEL)?))
        .set_max_row_group_size(ROW_GROUP_ROWS);
    for name in distinct {
        builder = builder.set_column_dictionary_enabled(ColumnPath::new(vec![name.to_string()]), false);
    }
    for field in schema.fields() {
        if let DataType::FixedSizeList(item, _) = field.data_type() {
            if item.data_type() == &DataType::Float32 {
                // The Parquet LIST layout Arrow writes: <name>.list.<item name>.
                let leaf = ColumnPath::new(vec![field.name().clone(), "list".into(), item.name().clone()]);
                builder = builder
                    .set_column_compression(leaf.clone(), Compression::ZSTD(ZstdLevel::try_new(VECTOR_ZSTD_LEVEL)?))
                    .set_column_dictionary_enabled(leaf.clone(), false)
                    .set_column_statistics_enabled(leaf.clone(), EnabledStatistics::None)
                    .set_column_encoding(leaf, Encoding::BYTE_STREAM_SPLIT);
            }
        }
    }
    Ok(builder.build())
}

/// Every column of `group` (row group number `index`), encoded and compressed.
fn encode_row_group(
    factory: &ArrowRowGroupWriterFactory,
    index: usize,
    group: &RecordBatch,
) -> std::result::Result<Vec<ArrowColumnChunk>, ParquetError> {
    let mut writers = factory.create_column_writers(index)?;
    let mut leaves = writers.iter_mut();
    for (field, column) in group.schema().fields().iter().zip(group.columns()) {
        for leaf in compute_leaves(field, column)? {
            let writer = leaves
                .next()
                .ok_or_else(|| ParquetError::General(format!("no column writer left for `{}`", field.name())))?;
            writer.write(&leaf)?;
        }
    }
    writers.into_iter().map(|writer| writer.close()).collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::builder::{ListBuilder, StringBuilder};
    use arrow_array::{ArrayRef, FixedSizeListArray, Float32Array, StringArray, UInt32Array};
    use arrow_schema::Field;

    use super::*;

    /// Rows of every column kind the snapshot files use, over several row groups.
    fn batch(rows: usize) -> RecordBatch {
        let mut headings = ListBuilder::new(StringBuilder::new());
        for row in 0..rows {
            for part in 0..row % 3 {
                headings.values().append_value(format!("heading {part} of {row}"));
            }
            headings.append(true);
        }
        let item = Arc::new(Field::new("item", DataType::Float32, false));
        let vectors = Float32Array::from_iter_values((0..rows * 4).map(|i| ((i * 7919) % 1000) as f32 / 1000.0));
        let columns: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from_iter_values(
                (0..rows).map(|row| format!("text of row {row} {}", "x".repeat(row % 17))),
            )),
            Arc::new(UInt32Array::from(
                (0..rows)
                    .map(|row| (row % 5 != 0).then_some(row as u32))
                    .collect::<Vec<_>>(),
            )),
            Arc::new(headings.finish()),
            Arc::new(FixedSizeListArray::try_new(item.clone(), 4, Arc::new(vectors), None).unwrap()),
        ];
        let schema = Schema::new(vec![
            Field::new("text", DataType::Utf8, false),
            Field::new("page", DataType::UInt32, true),
            Field::new(
                "heading_path",
                DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
                false,
            ),
            Field::new("embedding", DataType::FixedSizeList(item, 4), false),
        ]);
        RecordBatch::try_new(Arc::new(schema), columns).unwrap()
    }

    #[test]
    fn parallel_row_groups_write_the_file_one_writer_would() {
        let rows = ROW_GROUP_ROWS * 2 + 1_234;
        let batch = batch(rows);
        // Three row groups on two threads.
        let parallel = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap()
            .install(|| write_batch("test.parquet", batch.clone(), &[]))
            .unwrap();

        let single = one_writer(&batch);
        assert!(
            parallel == single,
            "{} bytes against one ArrowWriter's {}",
            parallel.len(),
            single.len()
        );

        let reader =
            parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(bytes::Bytes::from(parallel))
                .unwrap();
        assert_eq!(reader.metadata().num_row_groups(), 3);
        let read: Vec<RecordBatch> = reader.build().unwrap().collect::<std::result::Result<_, _>>().unwrap();
        let mut offset = 0;
        for part in &read {
            assert_eq!(part, &batch.slice(offset, part.num_rows()), "rows from {offset}");
            offset += part.num_rows();
        }
        assert_eq!(offset, rows);
    }

    #[test]
    fn vector_columns_are_split_by_byte_without_dictionary_or_statistics() {
        let bytes = write_batch("test.parquet", batch(1_000), &[]).unwrap();
        let reader =
            parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(bytes::Bytes::from(bytes)).unwrap();
        let group = reader.metadata().row_group(0);
        let column = |path: &str| {
            group
                .columns()
                .iter()
                .find(|c| c.column_path().string() == path)
                .unwrap_or_else(|| panic!("no column {path}"))
        };
        let vectors = column("embedding.list.item");
        assert!(
            vectors.encodings().any(|e| e == Encoding::BYTE_STREAM_SPLIT),
            "{:?}",
            vectors.encodings().collect::<Vec<_>>()
        );
        assert!(vectors.dictionary_page_offset().is_none() && vectors.statistics().is_none());
        assert!(
            matches!(vectors.compression(), Compression::ZSTD(_)),
            "{:?}",
            vectors.compression()
        );
        // Other columns keep the defaults: a dictionary and statistics.
        let text = column("text");
        assert!(text.dictionary_page_offset().is_some() && text.statistics().is_some());
        assert_eq!(
            reader.build().unwrap().map(|b| b.unwrap().num_rows()).sum::<usize>(),
            1_000
        );
    }

    /// The file one `ArrowWriter` writes from the whole of `batch`.
    fn one_writer(batch: &RecordBatch) -> Vec<u8> {
        let mut single = Vec::new();
        let mut writer = ArrowWriter::try_new(
            &mut single,
            batch.schema(),
            Some(properties(&batch.schema(), &[]).unwrap()),
        )
        .unwrap();
        writer.write(batch).unwrap();
        writer.close().unwrap();
        single
    }

    /// [`write_row_groups`] over `batch` on `threads` threads, group `slow`'s batch made
    /// 150 ms late (so the groups after it are encoded first and must wait to be appended).
    fn write_with_a_slow_group(
        batch: &RecordBatch,
        threads: usize,
        slow: usize,
        fails: Option<usize>,
    ) -> Result<Vec<u8>> {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            write_row_groups(
                "test.parquet",
                batch.schema(),
                &[],
                batch.num_rows(),
                |rows| {
                    let group = rows.start / ROW_GROUP_ROWS;
                    if group == slow {
                        std::thread::sleep(std::time::Duration::from_millis(150));
                    }
                    match Some(group) == fails {
                        true => Err(IndexerError::snapshot("test.parquet", format!("group {group} is bad"))),
                        false => Ok(batch.slice(rows.start, rows.len())),
                    }
                },
                Vec::new(),
            )
        })
    }

    #[test]
    fn groups_finished_out_of_order_are_appended_in_order() {
        // Eleven groups on three threads (at most six encoded ahead): the first group is
        // slow, so the threads run ahead and wait; then a slow group in the middle.
        let rows = ROW_GROUP_ROWS * 10 + 77;
        let batch = batch(rows);
        let expected = one_writer(&batch);
        for slow in [0, 5] {
            let written = write_with_a_slow_group(&batch, 3, slow, None).unwrap();
            assert!(
                written == expected,
                "slow group {slow}: {} bytes against one ArrowWriter's {}",
                written.len(),
                expected.len()
            );
        }
    }

    #[test]
    fn a_group_that_fails_fails_the_file_while_others_wait() {
        // Group 0 is slow and group 7 fails: the threads waiting for room behind group 0 stop.
        let batch = batch(ROW_GROUP_ROWS * 10);
        let error = write_with_a_slow_group(&batch, 3, 0, Some(7)).unwrap_err().to_string();
        assert!(error.contains("group 7 is bad"), "{error}");
        let error = write_with_a_slow_group(&batch, 2, 3, Some(0)).unwrap_err().to_string();
        assert!(error.contains("group 0 is bad"), "{error}");
    }

    #[test]
    #[should_panic(expected = "group 2 panicked")]
    fn a_panic_in_one_group_reaches_the_caller_without_leaving_threads_waiting() {
        let batch = batch(ROW_GROUP_ROWS * 10);
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        let _ = pool.install(|| {
            write_row_groups(
                "test.parquet",
                batch.schema(),
                &[],
                batch.num_rows(),
                |rows| match rows.start / ROW_GROUP_ROWS {
                    2 => panic!("group 2 panicked"),
                    _ => Ok(batch.slice(rows.start, rows.len())),
                },
                Vec::new(),
            )
        });
    }

    #[test]
    fn an_empty_batch_is_a_readable_file() {
        let bytes = write_batch("empty.parquet", batch(0), &[]).unwrap();
        let reader =
            parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(bytes::Bytes::from(bytes)).unwrap();
        assert_eq!(reader.metadata().file_metadata().num_rows(), 0);
    }
}
