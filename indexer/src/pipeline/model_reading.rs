//! How the embedding model reads a segment's chunks, per detected language: measured on an
//! even sample of the chunks when a segment is built, recorded in its manifest, summed over a
//! version's segments for the run report, `quarry inspect`, the collection info and `auto`
//! search, and turned into a plain warning when the model reads little of a collection.

use std::collections::BTreeMap;

use rayon::prelude::*;

use crate::embed::{read_words, ModelTokenizer, WordReading};
use crate::error::Result;
use crate::index::analysis::detect;
use crate::snapshot::{LanguageReading, Manifest};

/// Chunks of a segment measured at most (evenly spread over it).
pub const READING_SAMPLE: usize = 2000;

/// Below this share of words read whole, a collection's language is one the model was
/// hardly trained on: its words reach the model as pieces. (English prose reads 80-95% whole
/// with an English model; a language the model never saw, under half.)
pub const WEAK_READING_SHARE: f64 = 0.5;

/// Each detected language of `texts` (a segment's chunks) with how `tokenizer` reads it,
/// most chunks first.
pub fn language_readings(texts: &[&str], tokenizer: &ModelTokenizer) -> Result<Vec<LanguageReading>> {
    let step = texts.len().div_ceil(READING_SAMPLE).max(1);
    let sampled: Vec<(&'static str, WordReading)> = texts
        .par_iter()
        .enumerate()
        .filter(|(i, _)| i % step == 0)
        .map(|(_, text)| Ok((detect(text).code(), read_words(tokenizer, text)?)))
        .collect::<Result<_>>()?;
    let mut by_language: BTreeMap<&str, (u64, WordReading)> = BTreeMap::new();
    for (language, reading) in sampled {
        let entry = by_language.entry(language).or_default();
        entry.0 += step as u64;
        entry.1.add(&reading);
    }
    let measured: u64 = by_language.values().map(|(n, _)| n).sum();
    let mut readings: Vec<LanguageReading> = by_language
        .into_iter()
        .map(|(language, (chunks, words))| LanguageReading {
            language: language.to_string(),
            // The sample's counts scaled back to the segment's chunks.
            chunks: (chunks as f64 * texts.len() as f64 / measured.max(1) as f64).round() as u64,
            words: words.words,
            read_well: words.read_well,
            read_whole: words.read_whole,
        })
        .collect();
    readings.sort_by(|a, b| b.chunks.cmp(&a.chunks).then(a.language.cmp(&b.language)));
    Ok(readings)
}

/// Every segment's readings summed by language, most chunks first.
pub fn version_readings(manifest: &Manifest) -> Vec<LanguageReading> {
    let mut by_language: BTreeMap<String, LanguageReading> = BTreeMap::new();
    for reading in manifest.segments.iter().flat_map(|s| &s.languages) {
        let entry = by_language.entry(reading.language.clone()).or_insert_with(|| LanguageReading { language: reading.language.clone(), chunks: 0, words: 0, read_well: 0, read_whole: 0 });
        entry.chunks += reading.chunks;
        entry.words += reading.words;
        entry.read_well += reading.read_well;
        entry.read_whole += reading.read_whole;
    }
    let mut readings: Vec<LanguageReading> = by_language.into_values().collect();
    readings.sort_by(|a, b| b.chunks.cmp(&a.chunks).then(a.language.cmp(&b.language)));
    readings
}

/// The share of all measured words the model reads whole, None when nothing was measured.
pub fn whole_share(readings: &[LanguageReading]) -> Option<f64> {
    let words: u64 = readings.iter().map(|r| r.words).sum();
    (words > 0).then(|| readings.iter().map(|r| r.read_whole).sum::<u64>() as f64 / words as f64)
}

/// The warning for a collection the model reads little of (None when it reads enough).
pub fn weak_reading_warning(readings: &[LanguageReading]) -> Option<String> {
    let share = whole_share(readings)?;
    if share >= WEAK_READING_SHARE {
        return None;
    }
    // The languages read weakly that hold a tenth of the words or more (a few stray chunks are not named).
    let words: u64 = readings.iter().map(|r| r.words).sum();
    let weak: Vec<String> = readings.iter().filter(|r| r.words * 10 >= words && r.read_whole_share() < WEAK_READING_SHARE).take(3).map(|r| language_name(&r.language)).collect();
    Some(format!(
        "the model reads {:.0}% of this collection's words whole ({}): vector search will be weak; keyword search reads them, `auto` search leans on it, and a multilingual model would read them",
        share * 100.0,
        weak.join(", ")
    ))
}

/// The English name of an ISO 639-3 code (the code itself when unknown).
pub fn language_name(code: &str) -> String {
    whatlang::Lang::from_code(code).map(|l| l.eng_name().to_string()).unwrap_or_else(|| code.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(language: &str, chunks: u64, words: u64, whole: u64) -> LanguageReading {
        LanguageReading { language: language.into(), chunks, words, read_well: words, read_whole: whole }
    }

    #[test]
    fn warns_when_little_is_read_whole() {
        assert_eq!(weak_reading_warning(&[reading("eng", 10, 100, 90)]), None);
        let warning = weak_reading_warning(&[reading("jpn", 8, 300, 30), reading("eng", 2, 100, 90), reading("fra", 1, 10, 1)]).unwrap();
        assert!(warning.starts_with("the model reads 30% of this collection's words whole (Japanese)"), "{warning}");
        assert_eq!(weak_reading_warning(&[]), None);
        assert_eq!(language_name("deu"), "German");
        assert_eq!(language_name("und"), "und");
    }
}
