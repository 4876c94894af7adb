//! Turning embedded documents into one segment's rows and indexes: shared by batch runs
//! and online ingestion. Rows are ordered by document URI, then chunk index.

use std::sync::Arc;
use std::time::Instant;

use rayon::prelude::*;

use super::keyword_ahead::KeywordPartsAhead;
use super::model_reading::language_readings;
use super::own_pools::{ROW_FILES_POOL, VECTOR_POOL};
use super::types::EmbeddedDoc;
use crate::chunk::Chunk;
use crate::embed::{Embeddings, ModelTokenizer};
use crate::error::{IndexerError, Result};
use crate::index::analysis::{detect, Detected};
use crate::index::{
    build_keyword_index_with_parts, build_vector_index_into, vector_kernels, BuiltVectorIndex, ExactTruth, IndexSpec,
    PartsKept,
};
use crate::snapshot::{
    DocumentRecord, LanguageReading, RowFilesWriting, SavedVectors, SegmentRowFiles, SnapshotWriter,
};

/// The recall check's depth: recall@10.
pub const RECALL_K: usize = 10;

/// A segment's rows: chunk `i` has embedding row `i`.
pub struct SegmentRows {
    pub chunks: Vec<Chunk>,
    pub embeddings: Embeddings,
    pub records: Vec<DocumentRecord>,
    /// Per row, its text's language where the parse stage told it: empty, or one per chunk
    /// (None: told when the indexes are built).
    pub languages: Vec<Option<Detected>>,
}

impl SegmentRows {
    /// No rows, of vectors of `dim` dimensions.
    pub fn empty(dim: usize) -> Self {
        Self {
            chunks: Vec::new(),
            embeddings: Embeddings { dim, data: Vec::new() },
            records: Vec::new(),
            languages: Vec::new(),
        }
    }

    pub fn tokens(&self) -> u64 {
        self.chunks.iter().map(|c| c.token_count as u64).sum()
    }

    /// Appends `other`'s rows after these.
    pub fn extend(&mut self, other: SegmentRows) {
        self.languages.resize(self.chunks.len(), None);
        self.languages.extend(other.languages);
        self.chunks.extend(other.chunks);
        self.languages.resize(self.chunks.len(), None);
        self.embeddings.data.extend(other.embeddings.data);
        self.records.extend(other.records);
    }
}

/// Each of `chunks`' language: as `languages` tells it (one per chunk, or none), the others
/// detected now (in parallel).
pub(super) fn detected_languages(chunks: &[Chunk], languages: &[Option<Detected>]) -> Vec<Detected> {
    chunks
        .par_iter()
        .enumerate()
        .map(|(row, chunk)| {
            languages
                .get(row)
                .copied()
                .flatten()
                .unwrap_or_else(|| detect(&chunk.text))
        })
        .collect()
}

/// Vectors already laid out in row order: those of the first `documents` of a segment's
/// documents (handed to its row files while the run embedded), one per chunk; those
/// documents hold none of their own.
#[derive(Default)]
pub struct LaidOutVectors {
    pub data: Vec<f32>,
    pub documents: usize,
}

impl LaidOutVectors {
    /// Gives each of the first `self.documents` of `documents` its vectors back.
    pub fn hand_back(self, documents: &mut [EmbeddedDoc], dim: usize) -> Result<()> {
        let laid = self.check(documents, dim)?;
        let mut rest = self.data.as_slice();
        for document in &mut documents[..laid] {
            let (own, tail) = rest.split_at(document.chunks.len() * dim);
            document.vectors = own.to_vec();
            rest = tail;
        }
        Ok(())
    }

    /// How many documents are laid out, once their chunks are checked to hold every value.
    fn check(&self, documents: &[EmbeddedDoc], dim: usize) -> Result<usize> {
        let values = documents
            .get(..self.documents)
            .map(|laid| laid.iter().map(|d| d.chunks.len() * dim).sum::<usize>());
        match values == Some(self.data.len()) {
            true => Ok(self.documents),
            false => Err(IndexerError::VectorIndex {
                stage: "lay out rows",
                reason: format!(
                    "{} vector values were laid out for the first {} of {} documents, which have {} chunks of {dim} dimensions",
                    self.data.len(),
                    self.documents,
                    documents.len(),
                    values.map_or("fewer".into(), |values| (values / dim.max(1)).to_string()),
                ),
            }),
        }
    }
}

/// Orders documents by URI and lays out their chunks and vectors row by row, into arrays
/// sized once (growing them by doubling would copy the vectors, 1.5 GB at 1M rows, several
/// times, and leave the outgrown copies to the allocator). The sort and the vectors' copy run
/// on the current rayon pool: at 1M rows, copying every vector took one thread about 1.5 s
/// (mostly the page faults of the fresh array) while every other core waited for the rows.
pub fn assemble(mut documents: Vec<EmbeddedDoc>, dim: usize) -> SegmentRows {
    documents.par_sort_by(by_uri);
    lay_out(Vec::new(), documents, dim)
}

/// [`assemble`], where the first `laid_out.documents` of
/// `documents` are in URI order before the rest, with their vectors laid out already (while
/// the run embedded): only the rest's vectors are copied, after theirs. (Should they not sort
/// before the rest, they are given their vectors back and every vector is laid out again.)
pub fn assemble_onto(laid_out: LaidOutVectors, mut documents: Vec<EmbeddedDoc>, dim: usize) -> Result<SegmentRows> {
    let first = laid_out.check(&documents, dim)?;
    documents[first..].par_sort_by(by_uri);
    let ordered = documents[..(first + 1).min(documents.len())]
        .par_windows(2)
        .all(|pair| pair[0].record.uri < pair[1].record.uri);
    let data = match ordered {
        true => laid_out.data,
        false => {
            tracing::warn!("the documents whose vectors were laid out while the run embedded do not sort before the rest: every vector is laid out again");
            laid_out.hand_back(&mut documents, dim)?;
            documents.par_sort_by(by_uri);
            Vec::new()
        }
    };
    Ok(lay_out(data, documents, dim))
}

/// A segment's row order: its documents by URI.
fn by_uri(a: &EmbeddedDoc, b: &EmbeddedDoc) -> std::cmp::Ordering {
    a.record.uri.cmp(&b.record.uri)
}

/// Lays out `documents` (in URI order) row by row, their vectors after `data`, which holds
/// those of the first documents already (they hold none of their own).
fn lay_out(mut data: Vec<f32>, mut documents: Vec<EmbeddedDoc>, dim: usize) -> SegmentRows {
    let total_chunks: usize = documents.iter().map(|d| d.chunks.len()).sum();
    let vectors: Vec<Vec<f32>> = documents.iter_mut().map(|d| std::mem::take(&mut d.vectors)).collect();
    let laid = data.len();
    let values = laid + vectors.iter().map(Vec::len).sum::<usize>();
    match laid {
        // Zeroed by the OS as each page is first touched, not written twice.
        0 => data = vec![0.0; values],
        _ => data.resize(values, 0.0),
    }
    let mut rows = SegmentRows {
        chunks: Vec::with_capacity(total_chunks),
        embeddings: Embeddings { dim, data },
        records: Vec::with_capacity(documents.len()),
        languages: Vec::with_capacity(total_chunks),
    };
    let SegmentRows {
        chunks,
        embeddings,
        records,
        languages: row_languages,
    } = &mut rows;
    let mut places = Vec::with_capacity(vectors.len());
    let mut rest = &mut embeddings.data[laid..];
    for document_vectors in &vectors {
        let (place, tail) = rest.split_at_mut(document_vectors.len());
        places.push(place);
        rest = tail;
    }
    rayon::join(
        // Each document's vectors into its place (and its own array freed) in parallel.
        || {
            places
                .into_par_iter()
                .zip(vectors)
                .for_each(|(place, document_vectors)| place.copy_from_slice(&document_vectors))
        },
        || {
            for EmbeddedDoc {
                record,
                chunks: document_chunks,
                languages,
                ..
            } in documents
            {
                match languages.len() == document_chunks.len() {
                    true => row_languages.extend(languages.into_iter().map(Some)),
                    false => row_languages.extend(std::iter::repeat_n(None, document_chunks.len())),
                }
                chunks.extend(document_chunks);
                records.push(record);
            }
        },
    );
    rows
}

/// Both indexes of a segment, built side by side; the keyword index lives in `keyword_dir`,
/// the vector index is saved too.
pub struct BuiltIndexes {
    /// In memory, or only in its file (`saved_vectors`): [`BuiltVectorIndex::searchable`].
    pub vectors: BuiltVectorIndex,
    pub saved_vectors: SavedVectors,
    pub keyword_dir: tempfile::TempDir,
    /// The vector index built and its file written.
    pub vector_secs: f64,
    pub keyword_secs: f64,
    /// The rows' languages and how the model reads them (none measured without a tokenizer).
    pub languages: Vec<LanguageReading>,
    /// Exact search's answers to the recall check's queries, when it was given some, and
    /// the seconds they took.
    pub recall_truth: Option<(ExactTruth, f64)>,
}

/// What of a segment was written and built before it was cut, while the run embedded.
pub struct BuiltAhead {
    /// Its row files, holding their first row groups.
    pub row_files: RowFilesWriting,
    /// Parts of its keyword index, built or being built.
    pub keyword_parts: KeywordPartsAhead,
    /// Its first documents' vectors, laid out.
    pub vectors: LaidOutVectors,
}

/// What a segment holds, counted before its rows were let go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentCounts {
    pub documents: usize,
    pub chunks: usize,
    pub tokens: u64,
}

impl SegmentCounts {
    pub fn of(rows: &SegmentRows) -> Self {
        Self {
            documents: rows.records.len(),
            chunks: rows.chunks.len(),
            tokens: rows.tokens(),
        }
    }
}

/// [`build_indexes`] on the blocking pool with the segment's row files written beside them
/// (chunks.parquet needs no index); what was built `ahead` is finished rather than done
/// again; with the model's `tokenizer`, how it reads the rows' languages is measured too, and
/// with `recall_queries` (row-major), exact search's answers to them are found beside the
/// builds. Each part of the rows is let go as soon as nothing more reads it: the documents'
/// records once the row files are written, the chunks once the row files and the keyword
/// index are done with them (the vector index may still be building), the vectors once both
/// indexes are built, before the recall check and the segment's upload. What they held is
/// handed back counted.
pub async fn build_segment_blocking(
    spec: IndexSpec,
    rows: SegmentRows,
    writer: &SnapshotWriter,
    segment_id: &str,
    ahead: Option<BuiltAhead>,
    tokenizer: Option<Arc<ModelTokenizer>>,
    recall_queries: Option<Vec<f32>>,
) -> Result<(BuiltIndexes, SegmentRowFiles, SegmentCounts)> {
    let (writer, segment_id) = (writer.clone(), segment_id.to_string());
    let (row_files, keyword_parts) = match ahead {
        Some(BuiltAhead {
            row_files,
            keyword_parts,
            ..
        }) => (Some(row_files), keyword_parts),
        None => (None, KeywordPartsAhead::none()),
    };
    tokio::task::spawn_blocking(move || {
        let counts = SegmentCounts::of(&rows);
        let SegmentRows {
            chunks,
            embeddings,
            records,
            languages,
        } = rows;
        // Shared by the row files and the keyword index, let go by the last of the two.
        let chunks = Arc::new(chunks);
        let (row_chunks, embeddings) = (chunks.clone(), &embeddings);
        let (writer, segment_id) = (&writer, segment_id.as_str());
        // The row files on a pool of their own, as the vector index (`own_pools`); they alone
        // read the records, and let them go.
        let (row_files, built) = ROW_FILES_POOL.run_beside(
            move || match row_files {
                Some(started) => started.finish(&row_chunks, embeddings, &records),
                None => writer.write_row_files(segment_id, &row_chunks, embeddings, &records),
            },
            || {
                let rows = RowsToIndex {
                    embeddings,
                    chunks,
                    languages,
                };
                build_indexes(
                    &spec,
                    rows,
                    keyword_parts,
                    tokenizer.as_deref(),
                    writer,
                    segment_id,
                    recall_queries,
                )
            },
        );
        Ok((built?, row_files?, counts))
    })
    .await
    .map_err(|e| IndexerError::VectorIndex {
        stage: "build",
        reason: e.to_string(),
    })?
}

/// A segment's rows as its indexes take them: the vectors, for as long as the builds run; the
/// chunks (shared with the row files) and the languages the parse stage told, let go once
/// the keyword index and the languages' readings are done with them, while the vector index
/// may still be building.
struct RowsToIndex<'a> {
    embeddings: &'a Embeddings,
    chunks: Arc<Vec<Chunk>>,
    languages: Vec<Option<Detected>>,
}

/// Builds the FAISS and BM25 indexes over `rows` in parallel (blocking: call off the async
/// runtime; the BM25 index's `keyword_parts` built ahead are kept where still right), the
/// FAISS index's file written for `segment_id` by `writer` as it is built (while the keyword
/// index, and the row files beside this, are still being written); with the model's
/// `tokenizer`, how it reads the rows' languages is measured too, after the keyword index and
/// beside the vector index; exact search's answers to `recall_queries` are found during the
/// builds (they need the vectors alone, so the recall check after the build has only the
/// index to search).
fn build_indexes(
    spec: &IndexSpec,
    rows: RowsToIndex,
    keyword_parts: KeywordPartsAhead,
    tokenizer: Option<&ModelTokenizer>,
    writer: &SnapshotWriter,
    segment_id: &str,
    recall_queries: Option<Vec<f32>>,
) -> Result<BuiltIndexes> {
    let keyword_dir = tempfile::tempdir().map_err(|e| IndexerError::io(std::env::temp_dir(), e))?;
    let RowsToIndex {
        embeddings,
        chunks,
        languages,
    } = rows;
    let exact_truth = |queries: Vec<f32>| {
        let started = Instant::now();
        ExactTruth::of(&embeddings.data, embeddings.dim, queries, RECALL_K)
            .map(|truth| (truth, started.elapsed().as_secs_f64()))
    };
    // On a GPU the exact search is a moment's work for the kernels, which take one caller at
    // a time: it runs before the vector index, on its thread. On the CPU it takes cores:
    // beside the keyword index, on the global pool.
    let (truth_first, truth_beside) = match vector_kernels().is_gpu() {
        true => (recall_queries, None),
        false => (None, recall_queries),
    };
    // The vector index on a pool of its own, so that its waits on the GPU do not help with
    // (and wait for) the keyword index's work (`own_pools`); the keyword index on the global
    // pool, from this thread (not one of that pool's).
    let (vectors, (keyword, truth_beside)) = VECTOR_POOL.run_beside(
        || {
            let truth_first = truth_first.map(exact_truth).transpose()?;
            // Its file written as it is built: a graph-built HNSW's straight from its links.
            let (index, saved) = writer.write_vector_file(segment_id, spec, |out| {
                build_vector_index_into(spec, embeddings.dim, &embeddings.data, out)
            })?;
            Ok::<_, IndexerError>((index, saved, truth_first))
        },
        || {
            rayon::join(
                || {
                    // Taken here, so that they are let go when this side ends.
                    let (chunks, languages) = (chunks, languages);
                    // The rows' languages count in the keyword index's time (those the parse stage told cost nothing here).
                    let started = Instant::now();
                    let detected = detected_languages(&chunks, &languages);
                    let texts: Vec<&str> = chunks.iter().map(|c| c.text.as_str()).collect();
                    // The parts still being built are waited for here, beside the vector index.
                    let parts = keyword_parts.wait();
                    let (_, kept) = build_keyword_index_with_parts(keyword_dir.path(), &texts, &detected, parts)?;
                    log_parts_kept(segment_id, kept);
                    let keyword_secs = started.elapsed().as_secs_f64();
                    let languages = match tokenizer {
                        Some(tokenizer) => language_readings(&texts, &detected, tokenizer)?,
                        None => Vec::new(),
                    };
                    Ok::<_, IndexerError>((keyword_secs, languages))
                },
                || truth_beside.map(exact_truth).transpose(),
            )
        },
    );
    let (vectors, saved_vectors, truth_first) = vectors?;
    let (keyword_secs, languages) = keyword?;
    let recall_truth = truth_first.or(truth_beside?);
    let vector_secs = saved_vectors.secs;
    Ok(BuiltIndexes {
        vectors,
        saved_vectors,
        keyword_dir,
        vector_secs,
        keyword_secs,
        languages,
        recall_truth,
    })
}

/// Says so when keyword parts built while the run embedded had to be built again.
fn log_parts_kept(segment_id: &str, kept: PartsKept) {
    if kept.rebuilt > 0 {
        tracing::info!(
            "{segment_id}: {} keyword parts built while the run embedded were built again (their unsure rows read otherwise once every row was known)",
            kept.rebuilt
        );
    }
}

#[cfg(test)]
mod tests {
    use super::super::types::test_documents::embedded;
    use super::*;

    /// Documents `numbers` (of `n % 4` chunks), shuffled.
    fn shuffled(numbers: impl Iterator<Item = u32>) -> Vec<EmbeddedDoc> {
        let mut documents: Vec<EmbeddedDoc> = numbers.map(|n| embedded(n, n % 4, n % 3 == 0)).collect();
        let mut state = 0x9E37_79B9_u32;
        for i in (1..documents.len()).rev() {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            documents.swap(i, state as usize % (i + 1));
        }
        documents
    }

    /// `documents`' vectors laid out in their order, taken from them.
    fn laid_out(documents: &mut [EmbeddedDoc]) -> LaidOutVectors {
        LaidOutVectors {
            data: documents
                .iter_mut()
                .flat_map(|d| std::mem::take(&mut d.vectors))
                .collect(),
            documents: documents.len(),
        }
    }

    fn same_rows(rows: &SegmentRows, expected: &SegmentRows) {
        let ids = |rows: &SegmentRows| rows.chunks.iter().map(|c| c.chunk_id.clone()).collect::<Vec<_>>();
        let uris = |rows: &SegmentRows| rows.records.iter().map(|r| r.uri.clone()).collect::<Vec<_>>();
        assert_eq!(ids(rows), ids(expected));
        assert_eq!(uris(rows), uris(expected));
        assert_eq!(rows.languages, expected.languages);
        assert!(rows.embeddings.data == expected.embeddings.data);
    }

    /// Documents `ahead` (in URI order) with their vectors laid out, then documents `rest`
    /// (shuffled), assembled onto them.
    fn assembled_after(ahead: std::ops::Range<u32>, rest: std::ops::Range<u32>) -> SegmentRows {
        let mut documents = in_uri_order(shuffled(ahead));
        let laid = laid_out(&mut documents);
        documents.extend(shuffled(rest));
        assemble_onto(laid, documents, 4).unwrap()
    }

    #[test]
    fn vectors_laid_out_ahead_make_the_rows_of_one_layout() {
        // The first 1,200 of 3,000 documents laid out ahead, the rest shuffled after them;
        // then nothing laid out, and everything laid out.
        let expected = assemble(shuffled(0..3_000), 4);
        same_rows(&assembled_after(0..1_200, 1_200..3_000), &expected);
        same_rows(&assembled_after(0..0, 0..3_000), &expected);
        same_rows(&assembled_after(0..3_000, 3_000..3_000), &expected);
    }

    #[test]
    fn vectors_laid_out_for_documents_that_do_not_sort_first_are_laid_out_again() {
        // Documents 1,000 to 1,999 laid out ahead, 0 to 999 after them: every vector is
        // handed back and laid out in URI order.
        let expected = assemble(shuffled(0..2_000), 4);
        same_rows(&assembled_after(1_000..2_000, 0..1_000), &expected);
    }

    #[test]
    fn vectors_laid_out_that_are_not_one_per_chunk_are_refused() {
        let mut documents = in_uri_order(shuffled(0..100));
        let mut ahead = laid_out(&mut documents[..50]);
        ahead.data.truncate(ahead.data.len() - 4);
        let Err(error) = assemble_onto(ahead, documents, 4) else {
            panic!("vectors one row short were taken")
        };
        let error = error.to_string();
        assert!(error.contains("for the first 50 of 100 documents"), "{error}");
    }

    /// `documents` in URI order.
    fn in_uri_order(mut documents: Vec<EmbeddedDoc>) -> Vec<EmbeddedDoc> {
        documents.sort_by(by_uri);
        documents
    }

    #[test]
    fn rows_are_laid_out_in_uri_order_with_their_vectors_and_languages() {
        // 3,000 documents of 0 to 3 chunks, handed over in a shuffled order.
        let rows = assemble(shuffled(0..3_000), 4);
        let expected: Vec<(u32, u32)> = (0..3_000u32).flat_map(|n| (0..n % 4).map(move |c| (n, c))).collect();
        assert_eq!(rows.chunks.len(), expected.len());
        assert_eq!(rows.embeddings.data.len(), expected.len() * 4);
        assert_eq!(rows.languages.len(), expected.len());
        for (row, &(n, c)) in expected.iter().enumerate() {
            assert_eq!(rows.chunks[row].chunk_id, format!("d{n}-{c}"), "row {row}");
            assert_eq!(
                rows.embeddings.data[row * 4..row * 4 + 4],
                [n as f32, c as f32, n as f32, c as f32],
                "row {row}"
            );
            assert_eq!(rows.languages[row].is_some(), n % 3 == 0, "row {row}");
        }
        let uris: Vec<&str> = rows.records.iter().map(|r| r.uri.as_str()).collect();
        assert_eq!(uris.len(), 3_000);
        assert!(uris.windows(2).all(|w| w[0] < w[1]));
    }
}
