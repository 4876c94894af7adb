//! Which rows, columns and bytes of a snapshot Parquet file a read decodes: the row groups
//! holding the wanted rows (found by decoding one column first), the pages holding them (the
//! page index the writer stores says where each starts), and the decoding itself, a few row
//! groups at a time on the rayon pool, in row order.

use std::ops::Range;

use arrow_array::{Array, BooleanArray, RecordBatch, StringArray};
use bytes::Bytes;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder, RowSelection, RowSelectionPolicy,
};
use parquet::arrow::ProjectionMask;
use parquet::file::metadata::ColumnChunkMetaData;
use parquet::file::reader::ChunkReader;
use rayon::prelude::*;

use super::parquet_encode::ROW_GROUP_ROWS;
use crate::error::{IndexerError, Result};

/// The rows of a Parquet file a reader wants.
#[derive(Clone, Copy)]
pub enum WantedRows<'a> {
    All,
    /// The rows whose string column (named first) holds a value the function accepts.
    Where(&'static str, &'a (dyn Fn(&str) -> bool + Sync)),
}

/// The top-level columns a reader decodes (the others are never read).
#[derive(Clone, Copy)]
pub(super) enum Columns<'a> {
    AllBut(&'a [&'a str]),
    Only(&'a [&'a str]),
}

impl Columns<'_> {
    pub const ALL: Columns<'static> = Columns::AllBut(&[]);

    /// Every column.
    pub fn is_all(&self) -> bool {
        matches!(self, Columns::AllBut([]))
    }

    fn includes(&self, name: &str) -> bool {
        match self {
            Columns::AllBut(skip) => !skip.contains(&name),
            Columns::Only(names) => names.contains(&name),
        }
    }
}

pub(super) fn arrow_err(file: &'static str) -> impl Fn(arrow_schema::ArrowError) -> IndexerError {
    move |e| IndexerError::snapshot(file, e)
}

pub(super) fn parquet_err(file: &'static str) -> impl Fn(parquet::errors::ParquetError) -> IndexerError {
    move |e| IndexerError::snapshot(file, e)
}

/// A column of a batch, by name and type.
pub(super) fn column<'a, T: 'static>(batch: &'a RecordBatch, file: &'static str, name: &str) -> Result<&'a T> {
    batch
        .column_by_name(name)
        .and_then(|c| c.as_any().downcast_ref::<T>())
        .ok_or_else(|| IndexerError::snapshot(file, format!("column `{name}` is missing or has the wrong type")))
}

/// A Parquet file's metadata, with the page index when only some rows are wanted.
pub(super) fn file_metadata<R: ChunkReader>(
    file: &'static str,
    source: &R,
    wanted: WantedRows,
) -> Result<ArrowReaderMetadata> {
    ArrowReaderMetadata::load(
        source,
        ArrowReaderOptions::new().with_page_index(matches!(wanted, WantedRows::Where(..))),
    )
    .map_err(parquet_err(file))
}

/// How many bytes from the end of a Parquet file of `file_bytes` bytes hold its metadata and
/// page index, given its last `tail.len()` bytes: None when they are all in `tail`, else the
/// number of bytes from the end needed.
pub(super) fn metadata_bytes_needed(file: &'static str, tail: &Bytes, file_bytes: u64) -> Result<Option<u64>> {
    use parquet::errors::ParquetError;
    use parquet::file::metadata::{PageIndexPolicy, ParquetMetaDataReader};
    match ParquetMetaDataReader::new()
        .with_page_index_policy(PageIndexPolicy::Optional)
        .try_parse_sized(tail, file_bytes)
    {
        Ok(()) => Ok(None),
        Err(ParquetError::NeedMoreData(needed)) => Ok(Some(needed as u64)),
        Err(e) => Err(parquet_err(file)(e)),
    }
}

/// The byte ranges of one top-level column's chunks in every row group (what [`plan_rows`]
/// reads of the column that [`WantedRows::Where`] names).
pub(super) fn column_byte_ranges(
    file: &'static str,
    metadata: &ArrowReaderMetadata,
    name: &str,
) -> Result<Vec<Range<u64>>> {
    let parquet = metadata.metadata();
    let schema = parquet.file_metadata().schema_descr();
    let leaves: Vec<usize> = (0..schema.num_columns())
        .filter(|&leaf| {
            schema
                .column(leaf)
                .path()
                .parts()
                .first()
                .is_some_and(|root| root == name)
        })
        .collect();
    if leaves.is_empty() {
        return Err(IndexerError::snapshot(file, format!("no {name} column")));
    }
    Ok(parquet
        .row_groups()
        .iter()
        .flat_map(|group| leaves.iter().map(move |&leaf| chunk_range(group.column(leaf))))
        .collect())
}

fn chunk_range(column: &ColumnChunkMetaData) -> Range<u64> {
    let (start, length) = column.byte_range();
    start..start + length
}

/// What a read of a Parquet file decodes: the columns, and the row groups holding wanted
/// rows, each with the selection of those rows (None: every row of the group).
pub(super) struct RowPlan {
    file: &'static str,
    metadata: ArrowReaderMetadata,
    projection: ProjectionMask,
    groups: Vec<(usize, Option<RowSelection>)>,
}

/// [`plan_rows`] with the file's metadata loaded from `source` first.
pub(super) fn plan<R: ChunkReader + Clone + 'static>(
    file: &'static str,
    source: &R,
    columns: Columns,
    wanted: WantedRows,
) -> Result<RowPlan> {
    plan_rows(file, source, file_metadata(file, source, wanted)?, columns, wanted)
}

/// The row groups and rows of `file` that `wanted` names, and the columns `columns` names.
/// For [`WantedRows::Where`] its column is read and decoded here; a reader given the
/// selection then reads and decompresses only the pages holding a selected row.
pub(super) fn plan_rows<R: ChunkReader + Clone + 'static>(
    file: &'static str,
    source: &R,
    metadata: ArrowReaderMetadata,
    columns: Columns,
    wanted: WantedRows,
) -> Result<RowPlan> {
    let schema = metadata.metadata().file_metadata().schema_descr();
    let kept = schema
        .root_schema()
        .get_fields()
        .iter()
        .enumerate()
        .filter(|(_, field)| columns.includes(field.name()))
        .map(|(i, _)| i);
    let projection = ProjectionMask::roots(schema, kept);
    let groups = selected_row_groups(file, source, &metadata, wanted)?;
    Ok(RowPlan {
        file,
        metadata,
        projection,
        groups,
    })
}

impl RowPlan {
    /// The bytes [`Self::decode`] reads: of each planned row group and decoded column, the
    /// column's chunk when all the group's rows are wanted, else its dictionary page and the
    /// data pages holding a selected row (the ranges Parquet's own async reader fetches).
    pub fn byte_ranges(&self) -> Vec<Range<u64>> {
        let parquet = self.metadata.metadata();
        let mut ranges = Vec::new();
        for (group, selection) in &self.groups {
            let pages = parquet.offset_index().map(|index| &index[*group]);
            for (leaf, column) in parquet
                .row_group(*group)
                .columns()
                .iter()
                .enumerate()
                .filter(|(leaf, _)| self.projection.leaf_included(*leaf))
            {
                let chunk = chunk_range(column);
                match (selection, pages.and_then(|pages| pages.get(leaf))) {
                    (Some(selection), Some(pages)) => {
                        if let Some(first) = pages
                            .page_locations()
                            .first()
                            .filter(|first| first.offset as u64 != chunk.start)
                        {
                            ranges.push(chunk.start..first.offset as u64);
                        }
                        ranges.extend(selection.scan_ranges(pages.page_locations()));
                    }
                    _ => ranges.push(chunk),
                }
            }
        }
        ranges
    }

    /// Decodes the planned rows a few row groups at a time (one per thread, in parallel),
    /// each batch turned into a `T` by `decode` on its thread and handed to `part` in row
    /// order; about a row group per thread is in memory at once. Returns the rows handed on.
    pub fn decode<R: ChunkReader + Clone + 'static, T: Send>(
        self,
        source: R,
        decode: impl Fn(&RecordBatch) -> Result<T> + Sync,
        mut part: impl FnMut(T) -> Result<()>,
    ) -> Result<u64> {
        let Self {
            file,
            metadata,
            projection,
            groups,
        } = self;
        let mut handed = 0u64;
        for window in groups.chunks(rayon::current_num_threads().max(1)) {
            let decoded: Vec<Vec<(usize, T)>> = window
                .par_iter()
                .map(|(group, selection)| {
                    let mut builder =
                        ParquetRecordBatchReaderBuilder::new_with_metadata(source.clone(), metadata.clone())
                            .with_projection(projection.clone())
                            .with_row_groups(vec![*group])
                            .with_batch_size(ROW_GROUP_ROWS);
                    if let Some(selection) = selection {
                        // Selectors (not a mask over every row): the pages without a selected
                        // row are skipped, never read.
                        builder = builder
                            .with_row_selection(selection.clone())
                            .with_row_selection_policy(RowSelectionPolicy::Selectors);
                    }
                    builder
                        .build()
                        .map_err(parquet_err(file))?
                        .map(|batch| {
                            let batch = batch.map_err(arrow_err(file))?;
                            Ok((batch.num_rows(), decode(&batch)?))
                        })
                        .collect()
                })
                .collect::<Result<_>>()?;
            for (rows, value) in decoded.into_iter().flatten() {
                handed += rows as u64;
                part(value)?;
            }
        }
        Ok(handed)
    }

    /// [`Self::decode`] into one vector: each batch's values by `decode`, in row order.
    pub fn decode_all<R: ChunkReader + Clone + 'static, T: Send>(
        self,
        source: R,
        decode: impl Fn(&RecordBatch) -> Result<Vec<T>> + Sync,
    ) -> Result<Vec<T>> {
        let mut values = Vec::new();
        self.decode(source, decode, |batch| {
            values.extend(batch);
            Ok(())
        })?;
        Ok(values)
    }
}

/// Every batch of the rows `wanted` names and the columns `columns` names, in row order.
pub(super) fn read_batches_of<R: ChunkReader + Clone + 'static>(
    file: &'static str,
    source: R,
    columns: Columns,
    wanted: WantedRows,
) -> Result<Vec<RecordBatch>> {
    plan(file, &source, columns, wanted)?.decode_all(source, |batch| Ok(vec![batch.clone()]))
}

/// The row groups of `file` holding a row `wanted` names, each with the selection of those
/// rows (None: every row of the group). For [`WantedRows::Where`] the one column is decoded.
fn selected_row_groups<R: ChunkReader + Clone + 'static>(
    file: &'static str,
    source: &R,
    metadata: &ArrowReaderMetadata,
    wanted: WantedRows,
) -> Result<Vec<(usize, Option<RowSelection>)>> {
    let groups = 0..metadata.metadata().num_row_groups();
    let WantedRows::Where(name, keep) = wanted else {
        return Ok(groups.map(|group| (group, None)).collect());
    };
    let schema = metadata.metadata().file_metadata().schema_descr();
    let index = schema
        .root_schema()
        .get_fields()
        .iter()
        .position(|field| field.name() == name)
        .ok_or_else(|| IndexerError::snapshot(file, format!("no {name} column")))?;
    let projection = ProjectionMask::roots(schema, [index]);
    let groups: Vec<Option<(usize, Option<RowSelection>)>> = groups
        .into_par_iter()
        .map(|group| {
            let reader = ParquetRecordBatchReaderBuilder::new_with_metadata(source.clone(), metadata.clone())
                .with_projection(projection.clone())
                .with_row_groups(vec![group])
                .with_batch_size(ROW_GROUP_ROWS)
                .build()
                .map_err(parquet_err(file))?;
            let mut filters = Vec::new();
            for batch in reader {
                let batch = batch.map_err(arrow_err(file))?;
                let values = column::<StringArray>(&batch, file, name)?;
                filters.push(
                    values
                        .iter()
                        .map(|value| Some(value.is_some_and(keep)))
                        .collect::<BooleanArray>(),
                );
            }
            let kept: usize = filters.iter().map(BooleanArray::true_count).sum();
            let rows: usize = filters.iter().map(BooleanArray::len).sum();
            Ok(match kept {
                0 => None,
                _ if kept == rows => Some((group, None)),
                _ => Some((group, Some(RowSelection::from_filters(&filters)))),
            })
        })
        .collect::<Result<_>>()?;
    Ok(groups.into_iter().flatten().collect())
}
