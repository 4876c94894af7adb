//! How the embedding model reads a segment's chunks, per detected language: measured on an
//! even sample of the chunks when a segment is built, recorded in its manifest, summed over a
//! version's segments for the run report, `quarry inspect`, the collection info and `auto`
//! search, and turned into a plain warning when the model reads little of a collection.

use std::collections::BTreeMap;

use rayon::prelude::*;

use crate::embed::{read_words, ModelTokenizer, WordReading};
use crate::error::Result;
use crate::index::analysis::Detected;
use crate::snapshot::{LanguageReading, Manifest};

/// Chunks of a segment measured at most (evenly spread over it).
pub const READING_SAMPLE: usize = 2000;

/// Below this share of words read whole, a collection's language is one the model was
/// hardly trained on: its words reach the model as pieces. (English prose reads 80-95% whole
/// with an English model; a language the model never saw, under half.)
pub const WEAK_READING_SHARE: f64 = 0.5;

/// Each detected language of `texts` (a segment's chunks; `detected[i]` is `texts[i]`'s)
/// with how `tokenizer` reads it, most chunks first.
pub fn language_readings(
    texts: &[&str],
    detected: &[Detected],
    tokenizer: &ModelTokenizer,
) -> Result<Vec<LanguageReading>> {
    let step = texts.len().div_ceil(READING_SAMPLE).max(1);
    let sampled: Vec<LanguageReading> = texts
        .par_iter()
        .enumerate()
        .filter(|(i, _)| i % step == 0)
        .map(|(row, text)| {
            Ok(LanguageReading {
                language: detected[row].code().to_string(),
                chunks: step as u64,
                reading: read_words(tokenizer, text)?,
            })
        })
        .collect::<Result<_>>()?;
    let mut readings = sum_by_language(sampled);
    // The sample's chunk counts scaled back to the segment's chunks.
    let measured: u64 = readings.iter().map(|r| r.chunks).sum();
    for reading in &mut readings {
        reading.chunks = (reading.chunks as f64 * texts.len() as f64 / measured.max(1) as f64).round() as u64;
    }
    Ok(readings)
}

/// `readings` summed by language, most chunks first (ties by language).
pub fn sum_by_language(readings: impl IntoIterator<Item = LanguageReading>) -> Vec<LanguageReading> {
    let mut by_language: BTreeMap<String, LanguageReading> = BTreeMap::new();
    for reading in readings {
        match by_language.get_mut(&reading.language) {
            Some(sum) => sum.add(&reading),
            None => {
                by_language.insert(reading.language.clone(), reading);
            }
        }
    }
    let mut summed: Vec<LanguageReading> = by_language.into_values().collect();
    summed.sort_by(|a, b| b.chunks.cmp(&a.chunks).then(a.language.cmp(&b.language)));
    summed
}

/// Every segment's readings summed by language, most chunks first.
pub fn version_readings(manifest: &Manifest) -> Vec<LanguageReading> {
    sum_by_language(manifest.segments.iter().flat_map(|s| s.languages.iter().cloned()))
}

/// The share of all measured words the model reads whole, None when nothing was measured.
pub fn whole_share<'a>(readings: impl IntoIterator<Item = &'a LanguageReading>) -> Option<f64> {
    let mut all = WordReading::default();
    readings.into_iter().for_each(|r| all.add(&r.reading));
    (all.words > 0).then(|| all.whole_share())
}

/// The warning for a collection the model reads little of (None when it reads enough).
pub fn weak_reading_warning(readings: &[LanguageReading]) -> Option<String> {
    let share = whole_share(readings)?;
    if share >= WEAK_READING_SHARE {
        return None;
    }
    // The languages read weakly that hold a tenth of the words or more (a few stray chunks are not named).
    let words: u64 = readings.iter().map(|r| r.reading.words).sum();
    let weak: Vec<String> = readings
        .iter()
        .filter(|r| r.reading.words * 10 >= words && r.reading.whole_share() < WEAK_READING_SHARE)
        .take(3)
        .map(|r| language_name(&r.language))
        .collect();
    Some(format!(
        "the model reads {:.0}% of this collection's words whole ({}): vector search will be weak; keyword search reads them, `auto` search leans on it, and a multilingual model would read them",
        share * 100.0,
        weak.join(", ")
    ))
}

/// The English name of an ISO 639-3 code (the code itself when unknown).
pub fn language_name(code: &str) -> String {
    whatlang::Lang::from_code(code)
        .map(|l| l.eng_name().to_string())
        .unwrap_or_else(|| code.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(language: &str, chunks: u64, words: u64, whole: u64) -> LanguageReading {
        LanguageReading {
            language: language.into(),
            chunks,
            reading: WordReading {
                words,
                read_well: words,
                read_whole: whole,
            },
        }
    }

    #[test]
    fn warns_when_little_is_read_whole() {
        assert_eq!(weak_reading_warning(&[reading("eng", 10, 100, 90)]), None);
        let warning = weak_reading_warning(&[
            reading("jpn", 8, 300, 30),
            reading("eng", 2, 100, 90),
            reading("fra", 1, 10, 1),
        ])
        .unwrap();
        assert!(
            warning.starts_with("the model reads 30% of this collection's words whole (Japanese)"),
            "{warning}"
        );
        assert_eq!(weak_reading_warning(&[]), None);
        assert_eq!(language_name("deu"), "German");
        assert_eq!(language_name("und"), "und");
    }
}
