//! Which language a text is in, and what the keyword lane does with each language it can
//! stem: whatlang's detection (trigrams over the first [`DETECT_BYTES`] of a text; about 70
//! languages, each with its script; the workspace's copy in vendor/whatlang scores the
//! trigrams through an index of the profiles, with the published crate's results), and the Snowball stemmer and stop words of the 18
//! languages tantivy's stemmer crate knows.

use rust_stemmers::Algorithm;
use serde::{Deserialize, Serialize};
use tantivy::tokenizer::Language;

/// Bytes of a text its language is told from (a chunk's first lines say it as well as all of it).
pub const DETECT_BYTES: usize = 2048;

/// A language with a Snowball stemmer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StemLanguage {
    Arabic,
    Danish,
    Dutch,
    English,
    Finnish,
    French,
    German,
    Greek,
    Hungarian,
    Italian,
    Norwegian,
    Portuguese,
    Romanian,
    Russian,
    Spanish,
    Swedish,
    Tamil,
    Turkish,
}

/// The family of letters a word is written in, as far as stemming cares: a language's
/// stemmer reads only words of its own script.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Letters {
    Latin,
    Cyrillic,
    Greek,
    Arabic,
    Tamil,
    Other,
}

impl StemLanguage {
    pub const ALL: [StemLanguage; 18] = [
        Self::Arabic,
        Self::Danish,
        Self::Dutch,
        Self::English,
        Self::Finnish,
        Self::French,
        Self::German,
        Self::Greek,
        Self::Hungarian,
        Self::Italian,
        Self::Norwegian,
        Self::Portuguese,
        Self::Romanian,
        Self::Russian,
        Self::Spanish,
        Self::Swedish,
        Self::Tamil,
        Self::Turkish,
    ];

    /// Position in [`Self::ALL`] (per-language tables).
    pub fn index(self) -> usize {
        Self::ALL.iter().position(|&l| l == self).unwrap_or(0)
    }

    pub fn algorithm(self) -> Algorithm {
        match self {
            Self::Arabic => Algorithm::Arabic,
            Self::Danish => Algorithm::Danish,
            Self::Dutch => Algorithm::Dutch,
            Self::English => Algorithm::English,
            Self::Finnish => Algorithm::Finnish,
            Self::French => Algorithm::French,
            Self::German => Algorithm::German,
            Self::Greek => Algorithm::Greek,
            Self::Hungarian => Algorithm::Hungarian,
            Self::Italian => Algorithm::Italian,
            Self::Norwegian => Algorithm::Norwegian,
            Self::Portuguese => Algorithm::Portuguese,
            Self::Romanian => Algorithm::Romanian,
            Self::Russian => Algorithm::Russian,
            Self::Spanish => Algorithm::Spanish,
            Self::Swedish => Algorithm::Swedish,
            Self::Tamil => Algorithm::Tamil,
            Self::Turkish => Algorithm::Turkish,
        }
    }

    /// tantivy's stop word list for the language (Snowball's; Lucene's short English list), if any.
    pub fn stop_words(self) -> Option<Language> {
        Some(match self {
            Self::Danish => Language::Danish,
            Self::Dutch => Language::Dutch,
            Self::English => Language::English,
            Self::Finnish => Language::Finnish,
            Self::French => Language::French,
            Self::German => Language::German,
            Self::Hungarian => Language::Hungarian,
            Self::Italian => Language::Italian,
            Self::Norwegian => Language::Norwegian,
            Self::Portuguese => Language::Portuguese,
            Self::Russian => Language::Russian,
            Self::Spanish => Language::Spanish,
            Self::Swedish => Language::Swedish,
            Self::Arabic | Self::Greek | Self::Romanian | Self::Tamil | Self::Turkish => return None,
        })
    }

    pub fn letters(self) -> Letters {
        match self {
            Self::Arabic => Letters::Arabic,
            Self::Greek => Letters::Greek,
            Self::Russian => Letters::Cyrillic,
            Self::Tamil => Letters::Tamil,
            _ => Letters::Latin,
        }
    }

    /// ISO 639-1.
    pub fn code(self) -> &'static str {
        match self {
            Self::Arabic => "ar",
            Self::Danish => "da",
            Self::Dutch => "nl",
            Self::English => "en",
            Self::Finnish => "fi",
            Self::French => "fr",
            Self::German => "de",
            Self::Greek => "el",
            Self::Hungarian => "hu",
            Self::Italian => "it",
            Self::Norwegian => "no",
            Self::Portuguese => "pt",
            Self::Romanian => "ro",
            Self::Russian => "ru",
            Self::Spanish => "es",
            Self::Swedish => "sv",
            Self::Tamil => "ta",
            Self::Turkish => "tr",
        }
    }

    pub fn from_code(code: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|l| l.code() == code)
    }

    fn of(lang: whatlang::Lang) -> Option<Self> {
        use whatlang::Lang as L;
        Some(match lang {
            L::Ara => Self::Arabic,
            L::Dan => Self::Danish,
            L::Nld => Self::Dutch,
            L::Eng => Self::English,
            L::Fin => Self::Finnish,
            L::Fra => Self::French,
            L::Deu => Self::German,
            L::Ell => Self::Greek,
            L::Hun => Self::Hungarian,
            L::Ita => Self::Italian,
            L::Nob => Self::Norwegian,
            L::Por => Self::Portuguese,
            L::Ron => Self::Romanian,
            L::Rus => Self::Russian,
            L::Spa => Self::Spanish,
            L::Swe => Self::Swedish,
            L::Tam => Self::Tamil,
            L::Tur => Self::Turkish,
            _ => return None,
        })
    }
}

/// What detection says of one text.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Detected {
    /// whatlang's best guess (None: no letters it knows).
    pub lang: Option<whatlang::Lang>,
    /// Its script.
    pub script: Option<whatlang::Script>,
    /// Whether whatlang calls the guess reliable (enough text, a clear winner).
    pub reliable: bool,
}

impl Detected {
    /// The stemming language of a reliable guess.
    pub fn stem_language(&self) -> Option<StemLanguage> {
        self.reliable.then_some(self.lang).flatten().and_then(StemLanguage::of)
    }

    /// ISO 639-3 code of the guess, `und` when there is none.
    pub fn code(&self) -> &'static str {
        self.lang.map(|l| l.code()).unwrap_or("und")
    }
}

/// whatlang's Latin-script languages that have no Snowball stemmer here.
const LATIN_WITHOUT_STEMMER: [whatlang::Lang; 23] = {
    use whatlang::Lang as L;
    [
        L::Ind,
        L::Jav,
        L::Vie,
        L::Pol,
        L::Hrv,
        L::Uzb,
        L::Aze,
        L::Ces,
        L::Zul,
        L::Aka,
        L::Sna,
        L::Afr,
        L::Slk,
        L::Tgl,
        L::Cat,
        L::Lit,
        L::Slv,
        L::Epo,
        L::Lav,
        L::Est,
        L::Lat,
        L::Cym,
        L::Tuk,
    ]
};

/// Detects the language of `text` from its first [`DETECT_BYTES`]. Latin script is scored
/// first against the languages with a stemmer only (whatlang's cost grows with the languages
/// it weighs; Latin has 37, and it was 88% of building a keyword index over msmarco-5k);
/// a Latin text none of them surely is is weighed again against all of them. Every other
/// script's answer is whatlang's own from the first pass (the languages left out are all
/// Latin-script, so they change nothing there).
pub fn detect(text: &str) -> Detected {
    static STEMMED_LATIN_FIRST: std::sync::OnceLock<whatlang::Detector> = std::sync::OnceLock::new();
    let mut end = text.len().min(DETECT_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let text = &text[..end];
    let first = STEMMED_LATIN_FIRST.get_or_init(|| whatlang::Detector::with_denylist(LATIN_WITHOUT_STEMMER.to_vec()));
    let info = match first.detect(text) {
        Some(info) if info.script() != whatlang::Script::Latin || info.is_reliable() => Some(info),
        _ => whatlang::detect(text),
    };
    match info {
        Some(info) => Detected {
            lang: Some(info.lang()),
            script: Some(info.script()),
            reliable: info.is_reliable(),
        },
        None => Detected {
            lang: None,
            script: None,
            reliable: false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_languages_with_stemmers_and_without() {
        let german = detect("Die Stadt liegt am Ufer des Rheins und ist für ihre alten Häuser und Brücken bekannt, die jedes Jahr viele Besucher anziehen.");
        assert_eq!(german.stem_language(), Some(StemLanguage::German));
        let english = detect("The city lies on the bank of the river and is known for its old houses and bridges, which draw many visitors every year.");
        assert_eq!(english.stem_language(), Some(StemLanguage::English));
        let japanese = detect("東京は日本の首都であり、世界で最も人口の多い都市圏の一つです。");
        assert_eq!((japanese.code(), japanese.stem_language()), ("jpn", None));
        assert_eq!(detect("1234 !!").code(), "und");
        // Latin-script languages without a stemmer are still told apart.
        let polish = detect("Miasto leży nad brzegiem rzeki i słynie ze starych domów oraz mostów, które co roku przyciągają wielu odwiedzających.");
        assert_eq!((polish.code(), polish.stem_language()), ("pol", None));
        let czech = detect("Město leží na břehu řeky a je známé svými starými domy a mosty, které každý rok přitahují mnoho návštěvníků.");
        assert_eq!(czech.code(), "ces");
        // Other scripts take whatlang's own answer from the first pass, reliability included.
        for text in [
            "Город расположен на берегу реки и известен своими старыми домами и мостами.",
            "Місто лежить на березі річки й відоме своїми старими будинками та мостами.",
            "المدينة تقع على ضفة النهر وهي معروفة بمنازلها القديمة وجسورها.",
            "शहर नदी के किनारे बसा है और अपने पुराने घरों और पुलों के लिए जाना जाता है।",
            "Η πόλη βρίσκεται στην όχθη του ποταμού και είναι γνωστή για τα παλιά της σπίτια.",
            "東京は日本の首都であり、世界で最も人口の多い都市圏の一つです。",
            "这座城市位于河岸，以古老的房屋和桥梁而闻名。",
            "서울은 한국의 수도이며 오래된 궁궐과 다리로 유명합니다.",
            "העיר שוכנת על גדת הנהר וידועה בבתים ובגשרים העתיקים שלה.",
            "เมืองนี้ตั้งอยู่ริมฝั่งแม่น้ำและมีชื่อเสียงด้านบ้านเก่าและสะพาน",
            "Горад",
        ] {
            let whatlang = whatlang::detect(text).expect("a script");
            let got = detect(text);
            assert_eq!(
                (got.lang, got.script, got.reliable),
                (Some(whatlang.lang()), Some(whatlang.script()), whatlang.is_reliable()),
                "{text}"
            );
        }
        for language in StemLanguage::ALL {
            assert_eq!(StemLanguage::from_code(language.code()), Some(language));
            assert_eq!(StemLanguage::ALL[language.index()], language);
        }
    }
}
