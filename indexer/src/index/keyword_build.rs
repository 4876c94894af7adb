//! Building a keyword index on every thread of the current rayon pool, with a result that
//! does not depend on the thread count: the rows are cut into contiguous parts, each part is
//! indexed by a writer of its own (in parallel), and the parts' tantivy segments are merged
//! in row order into one segment, so tantivy doc `i` is row `i`. That keeps ties between equal
//! BM25 scores in row order (tantivy breaks them by doc address) and gives the searcher one
//! segment to walk. One writer with several indexing threads would hand rows to threads as
//! they come, and a writer lists its flushed segments in hash order.
//!
//! New indexes are read by the multilingual analyzer: the rows' languages (detected by the
//! parse stage, or here) make the language profile, stored beside the index, then each
//! part's rows are read into terms and handed to tantivy as term lists (`term_list`).

use std::ops::Range;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use tantivy::directory::MmapDirectory;
use tantivy::indexer::merge_filtered_segments;
use tantivy::indexer::UserOperation;
use tantivy::{doc, Index, Segment, TantivyDocument};

use super::analysis::{detect, english_analyzer, Detected, KeywordAnalyzer, LanguageProfile, StemLanguage, ENGLISH_V1};
use super::keyword::{err, schema};
use super::keyword_parts::build_keyword_index_with_parts;
use super::term_list::{push_term, TermListTokenizer};
use crate::error::{IndexerError, Result};

/// Rows below which another part is not worth its writer and its share of the merge.
const MIN_PART_ROWS: usize = 20_000;

/// Indexing memory of one part's writer before it flushes a segment (tantivy's budget).
const PART_WRITER_BYTES: usize = 128_000_000;

/// Documents handed to a part's writer at once.
const ADD_BATCH: usize = 256;

/// How the rows of a build are read.
pub(super) enum Reading<'a> {
    /// The English analyzer of earlier indexes (tantivy reads the texts).
    English,
    /// The multilingual analyzer, with each row's language (of the rows the part builds).
    Multilingual(&'a KeywordAnalyzer, &'a [Option<StemLanguage>]),
}

/// Builds a tantivy index read by the multilingual analyzer in the empty folder `dir` over
/// `texts` (row `i` = `texts[i]`), on the threads of the current rayon pool; returns the
/// rows' language profile (also stored in the folder).
pub fn build_keyword_index<'a>(dir: &Path, texts: impl Iterator<Item = &'a str>) -> Result<LanguageProfile> {
    let texts: Vec<&str> = texts.collect();
    let detected: Vec<Detected> = texts.par_iter().map(|text| detect(text)).collect();
    build_keyword_index_detected(dir, &texts, &detected)
}

/// [`build_keyword_index`] over rows whose languages are known: `detected[i]` is what
/// [`detect`] says of `texts[i]`.
pub fn build_keyword_index_detected(dir: &Path, texts: &[&str], detected: &[Detected]) -> Result<LanguageProfile> {
    build_keyword_index_with_parts(dir, texts, detected, Vec::new()).map(|(profile, _)| profile)
}

/// The same with the English analyzer of indexes written before the multilingual one (what
/// their snapshots hold; for comparisons and tests of how they are still read).
pub fn build_english_keyword_index<'a>(dir: &Path, texts: impl Iterator<Item = &'a str>) -> Result<()> {
    let texts: Vec<&str> = texts.collect();
    build_in_parts(
        dir,
        &texts,
        part_ranges(texts.len(), rayon::current_num_threads()),
        &Reading::English,
    )
}

/// Builds each range of rows as an index of its own (in parallel), then merges them in row order into `dir`.
fn build_in_parts(dir: &Path, texts: &[&str], parts: Vec<Range<usize>>, reading: &Reading<'_>) -> Result<()> {
    let built: Vec<BuiltPart> = parts
        .into_par_iter()
        .map(|range| build_part(range.start, &texts[range.clone()], &reading.of_rows(range)))
        .collect::<Result<_>>()?;
    merge_parts(dir, built, reading.name())
}

/// A part of a keyword index: the rows it holds, in a temporary folder of its own.
pub(super) struct BuiltPart {
    pub(super) folder: tempfile::TempDir,
    pub(super) index: Index,
}

/// Merges `parts` (each a contiguous run of rows; together, every row of the index once)
/// in row order into one segment in `dir`, an index read by the analyzer `analyzer_name`.
pub(super) fn merge_parts(dir: &Path, parts: Vec<BuiltPart>, analyzer_name: &str) -> Result<()> {
    let mut segments = Vec::new();
    for part in &parts {
        segments.extend(part.index.searchable_segments().map_err(err("merge"))?);
    }
    let segments = in_row_order(segments)?;
    match segments.len() {
        // One part that never flushed: its folder already is the index.
        1 if parts.len() == 1 => move_index(parts[0].folder.path(), dir),
        0 => Index::create_in_dir(dir, schema(analyzer_name))
            .map(drop)
            .map_err(err("create")),
        _ => {
            let output = MmapDirectory::open(dir).map_err(|e| IndexerError::KeywordIndex {
                stage: "merge",
                reason: format!("{}: {e}", dir.display()),
            })?;
            // tantivy's merge of segments from other indexes, in the order given (public but
            // doc-hidden in 0.25; Cargo.lock pins the version, and the tests here check the order).
            let alive = vec![None; segments.len()];
            merge_filtered_segments(&segments, parts[0].index.settings().clone(), alive, output)
                .map(drop)
                .map_err(err("merge"))
        }
    }
}

/// `rows` cut into at most `threads` contiguous ranges of at least [`MIN_PART_ROWS`] (one
/// range when there are fewer rows; none when there are none).
pub(super) fn part_ranges(rows: usize, threads: usize) -> Vec<Range<usize>> {
    if rows == 0 {
        return Vec::new();
    }
    let parts = threads.clamp(1, rows.div_ceil(MIN_PART_ROWS));
    let size = rows.div_ceil(parts);
    (0..rows)
        .step_by(size)
        .map(|start| start..(start + size).min(rows))
        .collect()
}

impl Reading<'_> {
    pub(super) fn name(&self) -> &'static str {
        match self {
            Self::English => ENGLISH_V1,
            Self::Multilingual(analyzer, _) => analyzer.name(),
        }
    }

    /// The reading of the rows `rows` alone.
    pub(super) fn of_rows(&self, rows: Range<usize>) -> Reading<'_> {
        match self {
            Self::English => Reading::English,
            Self::Multilingual(analyzer, languages) => Reading::Multilingual(analyzer, &languages[rows]),
        }
    }
}

/// Indexes `texts` as the rows from `first_row` on, in a temporary folder, with one writer
/// thread (a multilingual `reading` gives each of these rows' languages).
pub(super) fn build_part(first_row: usize, texts: &[&str], reading: &Reading<'_>) -> Result<BuiltPart> {
    let dir = tempfile::tempdir().map_err(|e| IndexerError::io(std::env::temp_dir(), e))?;
    let index = Index::create_in_dir(dir.path(), schema(reading.name())).map_err(err("create"))?;
    match reading {
        Reading::English => index.tokenizers().register(ENGLISH_V1, english_analyzer()),
        // Each row goes in as its term list (see `term_list`).
        Reading::Multilingual(..) => index
            .tokenizers()
            .register(reading.name(), TermListTokenizer::default()),
    }
    let schema = index.schema();
    let row_field = schema.get_field("row").map_err(err("schema"))?;
    let text_field = schema.get_field("text").map_err(err("schema"))?;
    // No background merges: the segments are merged once, in row order, at the end.
    let mut writer = index
        .writer_with_num_threads::<TantivyDocument>(1, PART_WRITER_BYTES)
        .map_err(err("writer"))?;
    writer.set_merge_policy(Box::new(tantivy::merge_policy::NoMergePolicy));
    // Documents go to the writer's thread in batches: one by one, each woke that thread.
    let mut batch = Vec::with_capacity(ADD_BATCH);
    let mut reader = match reading {
        Reading::English => None,
        Reading::Multilingual(analyzer, _) => Some(analyzer.text_reader()),
    };
    for (offset, &row_text) in texts.iter().enumerate() {
        let text = match (&mut reader, reading) {
            (Some(reader), Reading::Multilingual(_, languages)) => {
                let mut terms = String::with_capacity(row_text.len() + 16);
                reader.for_each_term_as(row_text, languages[offset], |term, _| push_term(&mut terms, term));
                terms
            }
            _ => row_text.to_string(),
        };
        let row = (first_row + offset) as u64;
        batch.push(UserOperation::Add(doc!(row_field => row, text_field => text)));
        if batch.len() == ADD_BATCH {
            writer.run(batch.drain(..)).map_err(err("add"))?;
        }
    }
    writer.run(batch).map_err(err("add"))?;
    writer.commit().map_err(err("commit"))?;
    writer.wait_merging_threads().map_err(err("merge"))?;
    Ok(BuiltPart { folder: dir, index })
}

/// The files of the tantivy index in the flat folder `dir`, in name order, leaving tantivy's
/// lock files out: what a snapshot stores of a keyword index.
pub fn keyword_index_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| IndexerError::io(dir, e))? {
        let path = entry.map_err(|e| IndexerError::io(dir, e))?.path();
        if path.is_file()
            && !path
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .ends_with(".lock")
        {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// The files of the one segment of the index in `dir`, by extension (a segment's files are
/// named by its random id): what two builds of the same rows must write alike. The document
/// store is left out: it holds no field (see `schema`), only empty documents in blocks that
/// follow the parts' boundaries when parts are merged.
#[cfg(test)]
pub(crate) fn segment_files(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    keyword_index_files(dir)
        .unwrap()
        .into_iter()
        .filter(|path| path.file_name().unwrap().to_string_lossy().len() > 32)
        .map(|path| {
            let extension = path.extension().unwrap().to_string_lossy().into_owned();
            (extension, std::fs::read(&path).unwrap())
        })
        .filter(|(extension, _)| extension != "store")
        .collect()
}

/// Moves the index in `from` (see [`keyword_index_files`]) into the empty folder `to`.
fn move_index(from: &Path, to: &Path) -> Result<()> {
    for path in keyword_index_files(from)? {
        let target = to.join(path.file_name().unwrap_or_default());
        if std::fs::rename(&path, &target).is_err() {
            // Another file system: copy instead.
            std::fs::copy(&path, &target).map_err(|e| IndexerError::io(&target, e))?;
        }
    }
    Ok(())
}

/// `segments` ordered by the first row they hold (each holds a contiguous run of rows, in order).
fn in_row_order(segments: Vec<Segment>) -> Result<Vec<Segment>> {
    let mut keyed = Vec::with_capacity(segments.len());
    for segment in segments {
        let reader = tantivy::SegmentReader::open(&segment).map_err(err("merge"))?;
        let rows = reader.fast_fields().u64("row").map_err(err("merge"))?;
        let first = rows.first(0).unwrap_or(u64::MAX);
        keyed.push((first, segment));
    }
    keyed.sort_by_key(|(first, _)| *first);
    Ok(keyed.into_iter().map(|(_, segment)| segment).collect())
}

#[cfg(test)]
mod tests {
    use super::super::keyword_parts::KeywordPart;
    use super::super::{KeywordIndex, TantivyKeywordIndex};
    use super::*;

    /// 300 rows: every third one the same text (tied BM25 scores), the others unique.
    fn tied_texts() -> Vec<String> {
        (0..300)
            .map(|row| {
                if row % 3 == 0 {
                    "identical harbour report".to_string()
                } else {
                    format!("unique entry{row} about tides")
                }
            })
            .collect()
    }

    fn built(texts: &[&str], parts: Vec<Range<usize>>) -> (tempfile::TempDir, TantivyKeywordIndex) {
        let dir = tempfile::tempdir().unwrap();
        let detected: Vec<Detected> = texts.iter().map(|text| detect(text)).collect();
        let (profile, _) = LanguageProfile::of_detected(&detected);
        let parts = parts
            .into_iter()
            .map(|rows| KeywordPart::build(rows.start, &texts[rows.clone()], &detected[rows], &profile).unwrap())
            .collect();
        let (_, kept) = build_keyword_index_with_parts(dir.path(), texts, &detected, parts).unwrap();
        assert_eq!(kept.rebuilt, 0);
        let index = TantivyKeywordIndex::open(dir.path()).unwrap();
        (dir, index)
    }

    #[test]
    #[allow(clippy::single_range_in_vec_init)] // a list of one range, not the range's values
    fn any_parts_give_one_segment_in_row_order() {
        let owned = tied_texts();
        let texts: Vec<&str> = owned.iter().map(String::as_str).collect();
        let (_one_dir, one) = built(&texts, vec![0..300]);
        let (_many_dir, many) = built(&texts, vec![0..1, 1..50, 50..51, 51..170, 170..300]);
        for index in [&one, &many] {
            assert_eq!((index.len(), index.segment_count()), (300, 1));
            // Ties come back in row order, whatever the parts were.
            let rows: Vec<u64> = index
                .search("identical harbour", 7)
                .unwrap()
                .iter()
                .map(|h| h.row)
                .collect();
            assert_eq!(rows, [0, 3, 6, 9, 12, 15, 18]);
            // Every row's own term finds that row.
            for row in [1, 2, 50, 52, 169, 170, 299] {
                assert_eq!(
                    index.search(&format!("entry{row}"), 1).unwrap()[0].row,
                    row,
                    "row {row}"
                );
            }
        }
        let (_empty_dir, empty) = built(&[], Vec::new());
        assert_eq!(empty.len(), 0);
        assert!(empty.search("harbour", 3).unwrap().is_empty());
    }

    #[test]
    #[allow(clippy::single_range_in_vec_init)] // a list of one range, not the range's values
    fn parts_cover_the_rows_in_order() {
        assert!(part_ranges(0, 8).is_empty());
        assert_eq!(part_ranges(5, 8), [0..5]);
        assert_eq!(
            part_ranges(MIN_PART_ROWS * 2, 8),
            [0..MIN_PART_ROWS, MIN_PART_ROWS..MIN_PART_ROWS * 2]
        );
        for (rows, threads) in [(1, 1), (99_999, 3), (1_000_003, 16), (45_000, 16), (200_000, 1)] {
            let ranges = part_ranges(rows, threads);
            assert!(
                ranges.len() <= threads && !ranges.is_empty(),
                "{rows} rows, {threads} threads: {ranges:?}"
            );
            assert_eq!(ranges[0].start, 0);
            assert_eq!(ranges.last().unwrap().end, rows);
            assert!(
                ranges.windows(2).all(|w| w[0].end == w[1].start && !w[0].is_empty()),
                "{ranges:?}"
            );
        }
    }

    #[test]
    fn term_lists_write_the_index_pre_tokenized_terms_write() {
        let owned: Vec<String> = (0..400)
            .map(|row| match row % 4 {
                0 => format!("Harbour report {row}: tides rising, boats running"),
                1 => format!("東京タワーの高さは{row}メートルです"),
                2 => format!("Die Häfen wurden {row} Mal überprüft und gezählt"),
                // U+FDFA's NFKC form holds spaces; a term of its own all the same.
                _ => format!("\u{FDFA} ¼ ｶﾀｶﾅ row{row}"),
            })
            .collect();
        let texts: Vec<&str> = owned.iter().map(String::as_str).collect();
        let detected: Vec<Detected> = texts.iter().map(|text| detect(text)).collect();
        let (profile, languages) = LanguageProfile::of_detected(&detected);
        let analyzer = KeywordAnalyzer::Multilingual(std::sync::Arc::new(profile.clone()));

        let lists = build_part(0, &texts, &Reading::Multilingual(&analyzer, &languages)).unwrap();
        let lists_dir = lists.folder;

        // The same rows as tantivy's pre-tokenized text, as the build wrote them before.
        let pre_dir = tempfile::tempdir().unwrap();
        let pre = Index::create_in_dir(pre_dir.path(), schema(crate::index::KEYWORD_ANALYZER)).unwrap();
        pre.tokenizers().register(
            crate::index::KEYWORD_ANALYZER,
            tantivy::tokenizer::WhitespaceTokenizer::default(),
        );
        let (row_field, text_field) = (
            pre.schema().get_field("row").unwrap(),
            pre.schema().get_field("text").unwrap(),
        );
        let mut writer = pre
            .writer_with_num_threads::<TantivyDocument>(1, PART_WRITER_BYTES)
            .unwrap();
        let mut reader = analyzer.text_reader();
        let mut spaced_terms = 0;
        for (row, text) in texts.iter().enumerate() {
            let mut tokens = Vec::new();
            reader.for_each_term_as(text, languages[row], |term, span| {
                spaced_terms += usize::from(term.contains(' '));
                tokens.push(tantivy::tokenizer::Token {
                    offset_from: span.start,
                    offset_to: span.end,
                    position: tokens.len(),
                    text: term.to_string(),
                    position_length: 1,
                });
            });
            let mut document = TantivyDocument::new();
            document.add_u64(row_field, row as u64);
            document.add_pre_tokenized_text(
                text_field,
                tantivy::tokenizer::PreTokenizedString {
                    text: String::new(),
                    tokens,
                },
            );
            writer.add_document(document).unwrap();
        }
        writer.commit().unwrap();
        writer.wait_merging_threads().unwrap();
        assert!(spaced_terms > 0, "no term with a space in it: the case is not covered");

        let (written, expected) = (segment_files(lists_dir.path()), segment_files(pre_dir.path()));
        assert!(written.len() >= 4, "{:?}", written.keys());
        assert_eq!(written.keys().collect::<Vec<_>>(), expected.keys().collect::<Vec<_>>());
        for (extension, bytes) in &written {
            assert!(bytes == &expected[extension], "the .{extension} files differ");
        }
        profile.save(lists_dir.path()).unwrap();
        let index = TantivyKeywordIndex::open(lists_dir.path()).unwrap();
        assert_eq!(index.search("東京タワー", 3).unwrap()[0].row % 4, 1);
        assert_eq!(index.search("Häfen", 3).unwrap()[0].row % 4, 2);
    }
}
