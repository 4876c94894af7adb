//! A keyword index's language profile: how many of its rows were read as each language,
//! which languages were detected, and, per script, the language its rows were read as when
//! detection was unsure (the segment's most common reliable language of that script). It is
//! stored beside the index ([`PROFILE_FILE`]) so a row's analysis can be repeated exactly
//! (hidden rows' statistics, highlights) and a query is read as every language the rows are.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::language::{detect, detect_in, Detected, StemLanguage};
use super::Revision;
use crate::error::{IndexerError, Result};

/// The profile's file in the keyword index folder.
pub const PROFILE_FILE: &str = "quarry-languages.json";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LanguageProfile {
    /// Rows analyzed as each stemming language (ISO 639-1), `und` for rows stemmed by none.
    pub analyzed_as: BTreeMap<String, u64>,
    /// Rows of each detected language (whatlang's ISO 639-3 codes; `und` for none).
    pub detected: BTreeMap<String, u64>,
    /// Per script (whatlang's name), the language its unsure rows are read as.
    pub unsure_rows_read_as: BTreeMap<String, StemLanguage>,
    /// The analyzer revision the rows were read with: a new index's, or the one its
    /// schema's analyzer name says ([`super::Revision::of_analyzer`]), set when it is opened.
    #[serde(skip)]
    pub revision: Revision,
}

impl LanguageProfile {
    /// Detects every text's language (on every thread) and returns the profile with each
    /// text's analysis language.
    pub fn of_texts(texts: &[&str]) -> (Self, Vec<Option<StemLanguage>>) {
        let detected: Vec<Detected> = texts.par_iter().map(|text| detect(text)).collect();
        Self::of_detected(&detected)
    }

    /// The profile of rows whose languages were detected (`detected[i]` = row `i`'s), with
    /// each row's analysis language.
    pub fn of_detected(detected: &[Detected]) -> (Self, Vec<Option<StemLanguage>>) {
        Self::of_detected_as(detected, Revision::default())
    }

    /// [`Self::of_detected`] as `revision` of the analyzer read them.
    pub fn of_detected_as(detected: &[Detected], revision: Revision) -> (Self, Vec<Option<StemLanguage>>) {
        let mut sure = SureLanguages::of_revision(revision);
        let mut profile = LanguageProfile {
            revision,
            ..LanguageProfile::default()
        };
        for d in detected {
            *profile.detected.entry(d.code().to_string()).or_default() += 1;
            sure.add(d);
        }
        profile.unsure_rows_read_as = sure.unsure_rows_read_as();
        let languages: Vec<Option<StemLanguage>> = detected.iter().map(|d| profile.language_of_detected(d)).collect();
        for language in &languages {
            *profile
                .analyzed_as
                .entry(language.map(StemLanguage::code).unwrap_or("und").to_string())
                .or_default() += 1;
        }
        (profile, languages)
    }

    /// The language a row detected as `detected` is analyzed as.
    pub fn language_of_detected(&self, detected: &Detected) -> Option<StemLanguage> {
        detected.stem_language_in(self.revision).or_else(|| {
            detected
                .script
                .and_then(|s| self.unsure_rows_read_as.get(s.name()).copied())
        })
    }

    /// The language a text of this index was analyzed as.
    pub fn language_of(&self, text: &str) -> Option<StemLanguage> {
        self.language_of_detected(&detect_in(text, self.revision))
    }

    /// Each language the rows were read as (None: stemmed by none), with its share of the
    /// rows; a profile of no rows reads as no language, with share 1.
    pub fn readings(&self) -> Vec<(Option<StemLanguage>, f32)> {
        let rows: u64 = self.analyzed_as.values().sum();
        if rows == 0 {
            return vec![(None, 1.0)];
        }
        self.analyzed_as
            .iter()
            .filter(|(_, &n)| n > 0)
            .map(|(code, &n)| (StemLanguage::from_code(code), n as f32 / rows as f32))
            .collect()
    }

    /// Whether a row was read as `language`.
    pub fn reads(&self, language: StemLanguage) -> bool {
        self.analyzed_as.get(language.code()).is_some_and(|&rows| rows > 0)
    }

    /// Whether a row was read as a language whose words keep their marks (Vietnamese).
    pub fn reads_a_language_keeping_marks(&self) -> bool {
        self.analyzed_as
            .iter()
            .any(|(code, &rows)| rows > 0 && StemLanguage::from_code(code).is_some_and(StemLanguage::keeps_marks))
    }

    pub fn save(&self, dir: &Path) -> Result<()> {
        let path = dir.join(PROFILE_FILE);
        let bytes = serde_json::to_vec_pretty(self).map_err(|e| IndexerError::KeywordIndex {
            stage: "profile",
            reason: e.to_string(),
        })?;
        std::fs::write(&path, bytes).map_err(|e| IndexerError::io(&path, e))
    }

    pub fn load(dir: &Path) -> Result<Self> {
        let path = dir.join(PROFILE_FILE);
        let bytes = std::fs::read(&path).map_err(|e| IndexerError::io(&path, e))?;
        serde_json::from_slice(&bytes).map_err(|e| IndexerError::KeywordIndex {
            stage: "profile",
            reason: format!("{}: {e}", path.display()),
        })
    }
}

/// The key counted most often (ties to the first in order).
fn most_common<K: Copy + Ord>(counts: &BTreeMap<K, u64>) -> Option<K> {
    counts
        .iter()
        .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
        .map(|(key, _)| *key)
}

/// Per script, how many rows are surely in each stemming language: what decides the
/// language a profile reads its unsure rows as. Rows can be added as they come, so the
/// reading of a segment's first rows can be guessed before its last rows are known.
#[derive(Debug, Clone, Default)]
pub struct SureLanguages {
    per_script: HashMap<whatlang::Script, BTreeMap<StemLanguage, u64>>,
    /// Per script, whatlang's guesses for the rows surely in no stemmed language (short
    /// texts, and languages stemmed by none), by language (ISO 639-3).
    guessed: HashMap<whatlang::Script, BTreeMap<&'static str, u64>>,
    latin_rows: bool,
    /// The analyzer revision whose languages count (new indexes': the default).
    revision: Revision,
}

impl SureLanguages {
    pub fn of_revision(revision: Revision) -> Self {
        Self {
            revision,
            ..Self::default()
        }
    }

    pub fn add(&mut self, detected: &Detected) {
        self.latin_rows |= detected.script == Some(whatlang::Script::Latin);
        let Some(script) = detected.script else { return };
        match (detected.stem_language_in(self.revision), detected.lang) {
            (Some(language), _) => *self.per_script.entry(script).or_default().entry(language).or_default() += 1,
            (None, Some(lang)) => *self.guessed.entry(script).or_default().entry(lang.code()).or_default() += 1,
            (None, None) => {}
        }
    }

    /// Per script, the language its unsure rows are read as: the most common sure one (ties
    /// to the first in order). Where no row of a script other than Latin is sure (a segment
    /// of short texts: titles, names, notes), the language whatlang guesses for more than
    /// half of them (a script is written in few of its languages, so most unsure guesses
    /// agreeing are sure enough: `مدرسة` then finds `الْمَدْرَسَةِ`, `किताब` finds `किताबें`),
    /// if a stemmed one. Latin-script rows with no sure row are read as English, the
    /// analyzer's reading before it read others (whatlang weighs 37 languages of that script,
    /// and guesses a short English title as Latin or Uzbek).
    pub fn unsure_rows_read_as(&self) -> BTreeMap<String, StemLanguage> {
        let mut read_as = BTreeMap::new();
        for (script, counts) in &self.per_script {
            if let Some(best) = most_common(counts) {
                read_as.insert(script.name().to_string(), best);
            }
        }
        for (script, guesses) in &self.guessed {
            if self.per_script.contains_key(script) || *script == whatlang::Script::Latin {
                continue;
            }
            let Some(code) = most_common(guesses).filter(|code| guesses[code] * 2 > guesses.values().sum::<u64>())
            else {
                continue;
            };

            let guess = Detected {
                lang: whatlang::Lang::from_code(code),
                script: Some(*script),
                reliable: false,
            };
            if let Some(language) = guess.guessed_stem_language_in(self.revision) {
                read_as.insert(script.name().to_string(), language);
            }
        }
        if self.latin_rows {
            read_as
                .entry(whatlang::Script::Latin.name().to_string())
                .or_insert(StemLanguage::English);
        }
        read_as
    }

    /// A profile that reads rows as one with these counts would (its row counts left empty).
    pub fn reading_profile(&self) -> LanguageProfile {
        LanguageProfile {
            unsure_rows_read_as: self.unsure_rows_read_as(),
            revision: self.revision,
            ..LanguageProfile::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsure_rows_take_their_scripts_common_language() {
        let texts = [
            "Die Stadt liegt am Ufer des Rheins und ist für ihre alten Häuser und Brücken bekannt, die jedes Jahr viele Besucher anziehen.",
            "Im Winter friert der See zu, und die Kinder laufen darauf Schlittschuh, während die Eltern am Ufer warten und Tee trinken.",
            "Haus am See",
            "東京は日本の首都であり、世界で最も人口の多い都市圏の一つです。",
        ];
        let (profile, languages) = LanguageProfile::of_texts(&texts);
        assert_eq!(
            languages,
            [
                Some(StemLanguage::German),
                Some(StemLanguage::German),
                Some(StemLanguage::German),
                None
            ]
        );
        assert_eq!(profile.analyzed_as.get("de"), Some(&3));
        assert_eq!(profile.analyzed_as.get("und"), Some(&1));
        assert_eq!(profile.detected.get("jpn"), Some(&1));
        assert_eq!(profile.readings(), [(Some(StemLanguage::German), 0.75), (None, 0.25)]);
        assert_eq!(profile.language_of("Haus am See"), Some(StemLanguage::German));
        let dir = tempfile::tempdir().unwrap();
        profile.save(dir.path()).unwrap();
        assert_eq!(LanguageProfile::load(dir.path()).unwrap(), profile);
    }

    /// Rows of a script of which none is surely in a stemmed language: read as the language
    /// most of them are guessed as, where that is more than half; else as before.
    #[test]
    fn a_script_of_only_unsure_rows_is_read_as_most_of_them_are_guessed() {
        let arabic = "ذَهَبَ الْوَلَدُ إِلَى الْمَدْرَسَةِ فِي الصَّبَاحِ";
        let hindi = "मैं विश्वविद्यालय में हिंदी पढ़ रहा हूँ और किताबें पढ़ता हूँ";
        let hebrew = "הַיֶּלֶד הָלַךְ לְבֵית הַסֵּפֶר בַּבֹּקֶר";
        for text in [arabic, hindi, hebrew] {
            assert!(!detect(text).reliable, "{text}: {:?}", detect(text));
        }
        let (profile, languages) = LanguageProfile::of_texts(&[arabic, hindi, hebrew]);
        assert_eq!(
            languages,
            [
                Some(StemLanguage::Arabic),
                Some(StemLanguage::Hindi),
                Some(StemLanguage::Hebrew)
            ]
        );
        assert_eq!(profile.analyzed_as.get("ar"), Some(&1));
        assert_eq!(profile.analyzed_as.get("hi"), Some(&1));
        assert_eq!(profile.analyzed_as.get("he"), Some(&1));
        assert_eq!(profile.language_of("المدرسة"), Some(StemLanguage::Arabic));

        // Short Latin-script rows, whatever their guesses: English, as before.
        let scattered = ["Haus am See", "running boats", "Quarterly report"];
        let guesses: Vec<_> = scattered.iter().map(|text| detect(text).lang).collect();
        assert!(scattered.iter().all(|text| !detect(text).reliable), "{guesses:?}");
        let (profile, _) = LanguageProfile::of_texts(&scattered);
        assert_eq!(
            profile.unsure_rows_read_as.get("Latin"),
            Some(&StemLanguage::English),
            "{guesses:?}"
        );
        // Short Vietnamese rows (dishes on a menu): detection is sure of most (Vietnamese's
        // letters are its own), and the rest are read as the sure ones.
        let menu = ["Phở bò", "Bánh mì", "Cà phê", "Hà Nội", "Bún chả"];
        assert!(!detect("Cà phê").reliable);
        let (profile, languages) = LanguageProfile::of_texts(&menu);
        assert_eq!(languages, [Some(StemLanguage::Vietnamese); 5]);
        assert_eq!(profile.language_of("Phở"), Some(StemLanguage::Vietnamese));
        // A sure Ukrainian row (read from the ninth revision, words cut to five letters):
        // its script's unsure rows are read as Ukrainian too.
        let (profile, languages) = LanguageProfile::of_texts(&["Ёжик в тумане", "Київ і Львів", "Добър ден"]);
        assert_eq!(languages, [Some(StemLanguage::Ukrainian); 3]);
        assert_eq!(
            profile.unsure_rows_read_as.get("Cyrillic"),
            Some(&StemLanguage::Ukrainian)
        );
        // Unsure rows of a script whose guesses agree on no language: as before, unstemmed.
        let cyrillic = ["Ёжик в тумане", "Львів", "Добър ден"];
        let guesses: Vec<_> = cyrillic.iter().map(|text| detect(text)).collect();
        let (profile, languages) = LanguageProfile::of_texts(&cyrillic);
        assert_eq!(languages, [None, None, None], "{guesses:?}");
        assert!(!profile.unsure_rows_read_as.contains_key("Cyrillic"));
    }
}
