//! A keyword index whose first rows are built while its last rows are still to come: each
//! part of rows is built as soon as its rows are known ([`KeywordPart::build`]), and once
//! every row is there the parts still right are merged with parts built for the rest
//! ([`build_keyword_index_with_parts`]), into the index a build over every row at once makes.
//!
//! A row's terms depend on the language it is read as, and a row whose language is unsure is
//! read as its script's most common sure language among all the index's rows, known only at
//! the end. A part is built with a guess (the rows known when it is built) and kept only if
//! every one of its rows reads the same under the whole index's profile; the others are built
//! again.

use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use rayon::prelude::*;

use super::analysis::{Detected, KeywordAnalyzer, LanguageProfile, StemLanguage};
use super::keyword_build::{build_part, merge_parts, part_ranges, BuiltPart, Reading};
use crate::error::{IndexerError, Result};

/// Rows of a keyword index built ahead of the others.
pub struct KeywordPart {
    first_row: usize,
    /// The language each of its rows was read as.
    languages: Vec<Option<StemLanguage>>,
    built: BuiltPart,
}

/// What a build with parts kept of the parts built ahead.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PartsKept {
    pub parts: usize,
    pub rows: usize,
    /// Parts built again: some of their rows read otherwise under the whole index's profile
    /// (or they did not fit the rows).
    pub rebuilt: usize,
}

impl KeywordPart {
    /// Builds `texts` as the rows from `first_row` on (`detected[i]`: what [`super::analysis::detect`]
    /// says of `texts[i]`), their unsure rows read as `guess` reads them.
    pub fn build(first_row: usize, texts: &[&str], detected: &[Detected], guess: &LanguageProfile) -> Result<Self> {
        if detected.len() != texts.len() {
            return Err(languages_mismatch(detected.len(), texts.len()));
        }
        let languages: Vec<Option<StemLanguage>> = detected.iter().map(|d| guess.language_of_detected(d)).collect();
        let analyzer = KeywordAnalyzer::Multilingual(Arc::new(guess.clone()));
        let built = build_part(first_row, texts, &Reading::Multilingual(&analyzer, &languages))?;
        Ok(Self {
            first_row,
            languages,
            built,
        })
    }

    /// The index rows it holds.
    pub fn rows(&self) -> Range<usize> {
        self.first_row..self.first_row + self.languages.len()
    }
}

/// [`super::build_keyword_index_detected`] over `texts`, keeping each of `parts` (built
/// ahead, in any order) whose rows fit and read as the whole index's profile reads them, and
/// building the rows no kept part holds on the threads of the current rayon pool. Returns
/// the profile (also stored in the folder) and what was kept.
pub fn build_keyword_index_with_parts(
    dir: &Path,
    texts: &[&str],
    detected: &[Detected],
    mut parts: Vec<KeywordPart>,
) -> Result<(LanguageProfile, PartsKept)> {
    if detected.len() != texts.len() {
        return Err(languages_mismatch(detected.len(), texts.len()));
    }
    let (profile, languages) = LanguageProfile::of_detected(detected);
    parts.sort_by_key(|part| part.first_row);
    let mut kept_parts = Vec::new();
    let mut kept = PartsKept::default();
    let mut covered = 0;
    for part in parts {
        let rows = part.rows();
        if rows.start >= covered && rows.end <= texts.len() && part.languages[..] == languages[rows.clone()] {
            covered = rows.end;
            kept.parts += 1;
            kept.rows += rows.len();
            kept_parts.push(part);
        } else {
            kept.rebuilt += 1;
        }
    }
    let threads = rayon::current_num_threads();
    let mut ranges = Vec::new();
    let mut next = 0;
    // The gaps before each kept part and after the last, each cut as a build over every row is.
    let kept_rows = kept_parts.iter().map(KeywordPart::rows);
    for rows in kept_rows.chain(std::iter::once(texts.len()..texts.len())) {
        let gap = part_ranges(rows.start - next, threads);
        ranges.extend(gap.into_iter().map(|r| r.start + next..r.end + next));
        next = rows.end;
    }
    let analyzer = KeywordAnalyzer::Multilingual(Arc::new(profile.clone()));
    let reading = Reading::Multilingual(&analyzer, &languages);
    let started = std::time::Instant::now();
    let built_here = ranges.len();
    let mut built: Vec<BuiltPart> = ranges
        .into_par_iter()
        .map(|rows| build_part(rows.start, &texts[rows.clone()], &reading.of_rows(rows)))
        .collect::<Result<_>>()?;
    let built_secs = started.elapsed().as_secs_f64();
    built.extend(kept_parts.into_iter().map(|part| part.built));
    merge_parts(dir, built, analyzer.name())?;
    tracing::debug!(
        "keyword index: {} rows; {} in {} parts built ahead, the rest in {built_here} parts in {built_secs:.2} s; merged in {:.2} s",
        texts.len(),
        kept.rows,
        kept.parts,
        started.elapsed().as_secs_f64() - built_secs
    );
    profile.save(dir)?;
    Ok((profile, kept))
}

fn languages_mismatch(languages: usize, rows: usize) -> IndexerError {
    IndexerError::KeywordIndex {
        stage: "languages",
        reason: format!("{languages} languages for {rows} rows"),
    }
}

#[cfg(test)]
mod tests {
    use super::super::analysis::detect;
    use super::super::keyword_build::segment_files;
    use super::super::{build_keyword_index_detected, KeywordIndex, TantivyKeywordIndex};
    use super::*;

    /// Rows 0..300: sure German texts and short unsure Latin ones ("running boats"), then
    /// rows 300..1200 of sure English: the unsure rows of the first part read as German
    /// while only its rows are known, as English once every row is.
    fn rows() -> Vec<String> {
        (0..1_200)
            .map(|row| match (row < 300, row % 3) {
                (true, 0) => format!("running boats {row}"),
                (true, _) => format!("Die Häfen wurden im Sommer {row} Mal überprüft, gezählt und von den Behörden gemeldet"),
                (false, _) => format!(
                    "The weather was cold this morning, and {row} of the children walked to school with their friends while their parents went to work"
                ),
            })
            .collect()
    }

    #[test]
    fn parts_read_as_the_whole_index_reads_are_kept_and_the_others_built_again() {
        let owned = rows();
        let texts: Vec<&str> = owned.iter().map(String::as_str).collect();
        let detected: Vec<Detected> = texts.iter().map(|text| detect(text)).collect();
        assert!(!detected[0].reliable && detected[1].stem_language() == Some(StemLanguage::German));
        let guess_from = |rows: Range<usize>| {
            let mut sure = crate::index::analysis::SureLanguages::default();
            detected[rows].iter().for_each(|d| sure.add(d));
            sure.reading_profile()
        };
        let part = |rows: Range<usize>| {
            KeywordPart::build(
                rows.start,
                &texts[rows.clone()],
                &detected[rows.clone()],
                &guess_from(0..rows.end),
            )
            .unwrap()
        };
        // 0..300 guessed from its own rows (German), 300..700 from the first 700 (English by
        // then), 700..900 left for the end.
        let parts = vec![part(300..700), part(0..300)];
        assert_eq!(parts[1].languages[0], Some(StemLanguage::German));
        let with_parts = tempfile::tempdir().unwrap();
        let (profile, kept) = build_keyword_index_with_parts(with_parts.path(), &texts, &detected, parts).unwrap();
        assert_eq!(
            kept,
            PartsKept {
                parts: 1,
                rows: 400,
                rebuilt: 1
            }
        );
        assert_eq!(profile.unsure_rows_read_as["Latin"], StemLanguage::English);

        let at_once = tempfile::tempdir().unwrap();
        assert_eq!(
            build_keyword_index_detected(at_once.path(), &texts, &detected).unwrap(),
            profile
        );
        let (written, expected) = (segment_files(with_parts.path()), segment_files(at_once.path()));
        assert_eq!(written.keys().collect::<Vec<_>>(), expected.keys().collect::<Vec<_>>());
        for (extension, bytes) in &written {
            assert!(bytes == &expected[extension], "the .{extension} files differ");
        }
        // Row 0 reads as English ("run" stems "running"), not as German.
        let index = TantivyKeywordIndex::open(with_parts.path()).unwrap();
        assert_eq!(index.len(), 1_200);
        assert!(index.search("run boat", 1_200).unwrap().iter().any(|hit| hit.row == 0));
    }

    #[test]
    fn parts_that_overlap_or_pass_the_last_row_are_built_again() {
        let owned = rows();
        let texts: Vec<&str> = owned.iter().map(String::as_str).collect();
        let detected: Vec<Detected> = texts.iter().map(|text| detect(text)).collect();
        let (profile, _) = LanguageProfile::of_detected(&detected);
        let part = |rows: Range<usize>| {
            KeywordPart::build(rows.start, &texts[rows.clone()], &detected[rows.clone()], &profile).unwrap()
        };
        let parts = vec![part(0..500), part(400..600), part(600..1_200)];
        let dir = tempfile::tempdir().unwrap();
        // The last 600 rows are 400 here.
        let (_, kept) = build_keyword_index_with_parts(dir.path(), &texts[..1_000], &detected[..1_000], parts).unwrap();
        assert_eq!(
            kept,
            PartsKept {
                parts: 1,
                rows: 500,
                rebuilt: 2
            }
        );
        let index = TantivyKeywordIndex::open(dir.path()).unwrap();
        assert_eq!(index.len(), 1_000);
        for row in [0u64, 450, 599, 999] {
            assert!(
                index
                    .search(&format!("{row}"), 3)
                    .unwrap()
                    .iter()
                    .any(|hit| hit.row == row),
                "row {row}"
            );
        }
        let Err(error) = build_keyword_index_with_parts(dir.path(), &texts, &detected[..3], Vec::new()) else {
            panic!("rows without their languages were indexed")
        };
        assert!(error.to_string().contains("3 languages for 1200 rows"), "{error}");
    }
}
