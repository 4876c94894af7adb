//! Which language a text is in, and what the keyword lane does with each language it can
//! stem: whatlang's detection (trigrams over the first [`DETECT_BYTES`] of a text; about 70
//! languages, each with its script; the workspace's copy in vendor/whatlang scores the
//! trigrams through an index of the profiles, with the published crate's results), and
//! which languages a revision of the analyzer stems ([`super::stemmer`]) and with which stop
//! words: 18 in the first two, 30 from the third; from the sixth, Persian and Telugu too (light
//! stemmers as Lucene's) and Vietnamese (no stemmer: its words keep their marks); from the
//! seventh, Bengali (a light stemmer as Lucene's); from the eighth, Hebrew (its attached
//! particles taken off).

use serde::{Deserialize, Serialize};

use super::stemmer::LanguageStemmer;
use super::Revision;
use tantivy::tokenizer::Language;

/// Bytes of a text its language is told from (a chunk's first lines say it as well as all of it).
pub const DETECT_BYTES: usize = 2048;

/// A language the keyword lane reads in a way of its own: with its Snowball stemmer, a light
/// stemmer as Lucene's (Persian, Telugu, Bengali), Hebrew's particles taken off, or
/// (Vietnamese) with its words' marks kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StemLanguage {
    Afrikaans,
    Arabic,
    Armenian,
    Azerbaijani,
    Belarusian,
    Bengali,
    Bulgarian,
    Catalan,
    Czech,
    Danish,
    Dutch,
    English,
    Esperanto,
    Estonian,
    Finnish,
    French,
    German,
    Greek,
    Hebrew,
    Hindi,
    Hungarian,
    Indonesian,
    Italian,
    Latin,
    Latvian,
    Lithuanian,
    Macedonian,
    Nepali,
    Norwegian,
    Persian,
    Polish,
    Portuguese,
    Romanian,
    Russian,
    Serbian,
    Slovak,
    Slovenian,
    Spanish,
    Swedish,
    Tamil,
    Telugu,
    Turkish,
    Turkmen,
    Ukrainian,
    Uzbek,
    Vietnamese,
    Yiddish,
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
    Devanagari,
    Armenian,
    Hebrew,
    Telugu,
    Bengali,
    Other,
}

impl StemLanguage {
    pub const ALL: [StemLanguage; 47] = [
        Self::Afrikaans,
        Self::Arabic,
        Self::Armenian,
        Self::Azerbaijani,
        Self::Belarusian,
        Self::Bengali,
        Self::Bulgarian,
        Self::Catalan,
        Self::Czech,
        Self::Danish,
        Self::Dutch,
        Self::English,
        Self::Esperanto,
        Self::Estonian,
        Self::Finnish,
        Self::French,
        Self::German,
        Self::Greek,
        Self::Hebrew,
        Self::Hindi,
        Self::Hungarian,
        Self::Indonesian,
        Self::Italian,
        Self::Latin,
        Self::Latvian,
        Self::Lithuanian,
        Self::Macedonian,
        Self::Nepali,
        Self::Norwegian,
        Self::Persian,
        Self::Polish,
        Self::Portuguese,
        Self::Romanian,
        Self::Russian,
        Self::Serbian,
        Self::Slovak,
        Self::Slovenian,
        Self::Spanish,
        Self::Swedish,
        Self::Tamil,
        Self::Telugu,
        Self::Turkish,
        Self::Turkmen,
        Self::Ukrainian,
        Self::Uzbek,
        Self::Vietnamese,
        Self::Yiddish,
    ];

    /// Position in [`Self::ALL`] (per-language tables).
    pub fn index(self) -> usize {
        Self::ALL.iter().position(|&l| l == self).unwrap_or(0)
    }

    /// The first revision of the analyzer that reads the language: the 18 rust-stemmers
    /// stems from the first, the rest of Snowball 3.0's from the third, Persian and Telugu
    /// (light stemmers as Lucene's) and Vietnamese from the sixth, Bengali (a light stemmer as
    /// Lucene's) from the seventh, Hebrew (its particles taken off) from the eighth, the
    /// languages whose words are cut to their first letters ([`Self::truncates`]) from the
    /// ninth.
    pub fn first_read_in(self) -> Revision {
        match (self, LanguageStemmer::before_3(self)) {
            (Self::Persian | Self::Telugu | Self::Vietnamese, _) => Revision::V6,
            (Self::Bengali, _) => Revision::V7,
            (Self::Hebrew, _) => Revision::V8,
            (language, _) if language.truncates() => Revision::V9,
            (_, true) => Revision::V1,
            (_, false) => Revision::V3,
        }
    }

    /// Whether a word of the language keeps its marks: Vietnamese writes its tones and
    /// several vowels with them (`ma`, `má`, `mà`, `mả`, `mã`, `mạ` are six words), where other
    /// Latin-script languages' accents fold so that a query typed without them finds them.
    pub fn keeps_marks(self) -> bool {
        self == Self::Vietnamese
    }

    /// Whether the language's words are cut to their first letters ([`super::truncation`]):
    /// the languages whatlang tells that inflect by endings (WALS's suffixing languages) and
    /// that neither Snowball nor Lucene has a stemmer for. Not the languages that inflect at
    /// the front as much (Zulu, Shona, Akan, Tagalog, Javanese, Welsh's mutations, Georgian's
    /// verbs): a word's first letters are no stem there.
    pub fn truncates(self) -> bool {
        matches!(
            self,
            Self::Afrikaans
                | Self::Azerbaijani
                | Self::Belarusian
                | Self::Bulgarian
                | Self::Latin
                | Self::Latvian
                | Self::Macedonian
                | Self::Slovak
                | Self::Slovenian
                | Self::Turkmen
                | Self::Ukrainian
                | Self::Uzbek
        )
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
            // tantivy has no list for these (the ranking's IDF weighs their common words down).
            Self::Afrikaans
            | Self::Arabic
            | Self::Armenian
            | Self::Azerbaijani
            | Self::Belarusian
            | Self::Bengali
            | Self::Bulgarian
            | Self::Catalan
            | Self::Czech
            | Self::Esperanto
            | Self::Estonian
            | Self::Greek
            | Self::Hebrew
            | Self::Hindi
            | Self::Indonesian
            | Self::Latin
            | Self::Latvian
            | Self::Lithuanian
            | Self::Macedonian
            | Self::Nepali
            | Self::Persian
            | Self::Polish
            | Self::Romanian
            | Self::Serbian
            | Self::Slovak
            | Self::Slovenian
            | Self::Tamil
            | Self::Telugu
            | Self::Turkish
            | Self::Turkmen
            | Self::Ukrainian
            | Self::Uzbek
            | Self::Vietnamese
            | Self::Yiddish => return None,
        })
    }

    pub fn letters(self) -> Letters {
        match self {
            Self::Arabic | Self::Persian => Letters::Arabic,
            Self::Armenian => Letters::Armenian,
            Self::Bengali => Letters::Bengali,
            Self::Greek => Letters::Greek,
            Self::Hindi | Self::Nepali => Letters::Devanagari,
            Self::Russian | Self::Ukrainian | Self::Belarusian | Self::Bulgarian | Self::Macedonian => {
                Letters::Cyrillic
            }
            Self::Tamil => Letters::Tamil,
            Self::Telugu => Letters::Telugu,
            Self::Hebrew | Self::Yiddish => Letters::Hebrew,
            _ => Letters::Latin,
        }
    }

    /// Whether the language's stemmer reads a word in `letters`: its own letters, and for
    /// Serbian, written in both alphabets, Cyrillic too (its stemmer reads it as Latin).
    pub fn reads(self, letters: Letters) -> bool {
        letters == self.letters() || (self == Self::Serbian && letters == Letters::Cyrillic)
    }

    /// ISO 639-1.
    pub fn code(self) -> &'static str {
        match self {
            Self::Afrikaans => "af",
            Self::Arabic => "ar",
            Self::Armenian => "hy",
            Self::Azerbaijani => "az",
            Self::Belarusian => "be",
            Self::Bengali => "bn",
            Self::Bulgarian => "bg",
            Self::Catalan => "ca",
            Self::Czech => "cs",
            Self::Danish => "da",
            Self::Dutch => "nl",
            Self::English => "en",
            Self::Esperanto => "eo",
            Self::Estonian => "et",
            Self::Finnish => "fi",
            Self::French => "fr",
            Self::German => "de",
            Self::Greek => "el",
            Self::Hebrew => "he",
            Self::Hindi => "hi",
            Self::Hungarian => "hu",
            Self::Indonesian => "id",
            Self::Italian => "it",
            Self::Latin => "la",
            Self::Latvian => "lv",
            Self::Lithuanian => "lt",
            Self::Macedonian => "mk",
            Self::Nepali => "ne",
            Self::Norwegian => "no",
            Self::Persian => "fa",
            Self::Polish => "pl",
            Self::Portuguese => "pt",
            Self::Romanian => "ro",
            Self::Russian => "ru",
            Self::Serbian => "sr",
            Self::Slovak => "sk",
            Self::Slovenian => "sl",
            Self::Spanish => "es",
            Self::Swedish => "sv",
            Self::Tamil => "ta",
            Self::Telugu => "te",
            Self::Turkish => "tr",
            Self::Turkmen => "tk",
            Self::Ukrainian => "uk",
            Self::Uzbek => "uz",
            Self::Vietnamese => "vi",
            Self::Yiddish => "yi",
        }
    }

    pub fn from_code(code: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|l| l.code() == code)
    }

    /// The stemming language of a detected language, as `revision` reads it.
    fn of(lang: whatlang::Lang, revision: Revision) -> Option<Self> {
        use whatlang::Lang as L;
        let language = match lang {
            L::Afr => Self::Afrikaans,
            L::Ara => Self::Arabic,
            L::Hye => Self::Armenian,
            L::Aze => Self::Azerbaijani,
            L::Bel => Self::Belarusian,
            L::Ben => Self::Bengali,
            L::Bul => Self::Bulgarian,
            L::Cat => Self::Catalan,
            L::Ces => Self::Czech,
            L::Dan => Self::Danish,
            L::Nld => Self::Dutch,
            L::Eng => Self::English,
            L::Epo => Self::Esperanto,
            L::Est => Self::Estonian,
            L::Fin => Self::Finnish,
            L::Fra => Self::French,
            L::Deu => Self::German,
            L::Ell => Self::Greek,
            L::Heb => Self::Hebrew,
            L::Hin => Self::Hindi,
            L::Hun => Self::Hungarian,
            L::Ind => Self::Indonesian,
            L::Ita => Self::Italian,
            L::Lat => Self::Latin,
            L::Lav => Self::Latvian,
            L::Lit => Self::Lithuanian,
            L::Mkd => Self::Macedonian,
            L::Nep => Self::Nepali,
            L::Nob => Self::Norwegian,
            L::Pes => Self::Persian,
            L::Pol => Self::Polish,
            L::Por => Self::Portuguese,
            L::Ron => Self::Romanian,
            L::Rus => Self::Russian,
            // Snowball's Serbian stemmer is built on a Croatian one (Ljubešić and Pandžić)
            // and reads the Latin alphabet both languages share.
            L::Srp | L::Hrv => Self::Serbian,
            L::Slk => Self::Slovak,
            L::Slv => Self::Slovenian,
            L::Spa => Self::Spanish,
            L::Swe => Self::Swedish,
            L::Tam => Self::Tamil,
            L::Tel => Self::Telugu,
            L::Tur => Self::Turkish,
            L::Tuk => Self::Turkmen,
            L::Ukr => Self::Ukrainian,
            L::Uzb => Self::Uzbek,
            L::Vie => Self::Vietnamese,
            L::Yid => Self::Yiddish,
            _ => return None,
        };
        (language.first_read_in() <= revision).then_some(language)
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
    /// The stemming language of a reliable guess, as the analyzer of new indexes reads it.
    pub fn stem_language(&self) -> Option<StemLanguage> {
        self.stem_language_in(Revision::default())
    }

    /// The stemming language of a reliable guess, as `revision` reads it.
    pub fn stem_language_in(&self, revision: Revision) -> Option<StemLanguage> {
        self.reliable.then(|| self.guessed_stem_language_in(revision)).flatten()
    }

    /// The stemming language of the guess, reliable or not, as `revision` reads it.
    pub fn guessed_stem_language_in(&self, revision: Revision) -> Option<StemLanguage> {
        StemLanguage::of(self.lang?, revision)
    }

    /// ISO 639-3 code of the guess, `und` when there is none.
    pub fn code(&self) -> &'static str {
        self.lang.map(|l| l.code()).unwrap_or("und")
    }
}

/// whatlang's Latin-script languages that the first two revisions stem by none.
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

/// Detects the language of `text` as the analyzer of new indexes does ([`detect_in`]).
pub fn detect(text: &str) -> Detected {
    detect_in(text, Revision::default())
}

/// Detects the language of `text` from its first [`DETECT_BYTES`], as `revision` does. Latin
/// script is scored first against the languages `revision` stems only (whatlang's cost grows
/// with the languages it weighs; Latin has 37, and it was 88% of building a keyword index
/// over msmarco-5k); a Latin text none of them surely is is weighed again against all of
/// them. Every other script's answer is whatlang's own from the first pass (the languages
/// left out are all Latin-script, so they change nothing there). A revision's answers never
/// change, so a row's analysis can be repeated as its index was written.
pub fn detect_in(text: &str, revision: Revision) -> Detected {
    static FIRST_PASS: [std::sync::OnceLock<whatlang::Detector>; Revision::ALL.len()] =
        [const { std::sync::OnceLock::new() }; Revision::ALL.len()];
    let mut end = text.len().min(DETECT_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let text = &text[..end];
    let first = FIRST_PASS[revision.index()].get_or_init(|| {
        let unstemmed = LATIN_WITHOUT_STEMMER
            .into_iter()
            .filter(|&lang| StemLanguage::of(lang, revision).is_none())
            .collect();
        whatlang::Detector::with_denylist(unstemmed)
    });
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
        // Latin-script languages without a stemmer in a revision are still told apart.
        let polish_text = "Miasto leży nad brzegiem rzeki i słynie ze starych domów oraz mostów, które co roku przyciągają wielu odwiedzających.";
        let polish = detect_in(polish_text, Revision::V2);
        assert_eq!((polish.code(), polish.stem_language_in(Revision::V2)), ("pol", None));
        let polish = detect(polish_text);
        assert_eq!(
            (polish.code(), polish.stem_language()),
            ("pol", Some(StemLanguage::Polish))
        );
        let czech = detect("Město leží na břehu řeky a je známé svými starými domy a mosty, které každý rok přitahují mnoho návštěvníků.");
        assert_eq!(
            (czech.code(), czech.stem_language()),
            ("ces", Some(StemLanguage::Czech))
        );
        // The third revision weighs the languages it added in its first pass.
        let catalan = "La ciutat es troba a la vora del riu i és coneguda per les seves cases antigues i els seus ponts, que cada any atreuen molts visitants.";
        assert_eq!(detect(catalan).stem_language(), Some(StemLanguage::Catalan));
        let indonesian = "Kota ini terletak di tepi sungai dan terkenal dengan rumah-rumah tua serta jembatannya yang setiap tahun menarik banyak pengunjung.";
        assert_eq!(detect(indonesian).stem_language(), Some(StemLanguage::Indonesian));
        // The second revision's first pass, without Indonesian, was sure it was Turkish.
        assert_eq!(
            detect_in(indonesian, Revision::V2).stem_language_in(Revision::V2),
            Some(StemLanguage::Turkish)
        );
        // Other scripts take whatlang's own answer from the first pass, reliability included.
        for text in [
            "Город расположен на берегу реки и известен своими старыми домами и мостами.",
            "Місто лежить на березі річки й відоме своїми старими будинками та мостами.",
            "المدينة تقع على ضفة النهر وهي معروفة بمنازلها القديمة وجسورها.",
            "शहर नदी के किनारे बसा है और अपने पुराने घरों और पुलों के लिए जाना जाता है।",
            "דער שטאָט ליגט ביים ברעג פֿון טײַך און איז באַקאַנט מיט אירע אַלטע הײַזער.",
            "Քաղաքը գտնվում է գետի ափին և հայտնի է իր հին տներով ու կամուրջներով։",
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
            if language == StemLanguage::Vietnamese {
                // Read from the sixth revision, by no stemmer.
                assert_eq!(language.first_read_in(), Revision::V6);
                assert!(super::super::stemmer::LanguageStemmer::of(language, Revision::V6).is_none());
                continue;
            }
            if language == StemLanguage::Bengali {
                // Stemmed from the seventh revision, by a light stemmer as Lucene's.
                assert_eq!(language.first_read_in(), Revision::V7);
                assert!(super::super::stemmer::LanguageStemmer::of(language, Revision::V6).is_none());
                assert!(super::super::stemmer::LanguageStemmer::of(language, Revision::V7).is_some());
                continue;
            }
            if language == StemLanguage::Hebrew {
                // Stemmed from the eighth revision: its attached particles taken off.
                assert_eq!(language.first_read_in(), Revision::V8);
                assert!(super::super::stemmer::LanguageStemmer::of(language, Revision::V7).is_none());
                assert!(super::super::stemmer::LanguageStemmer::of(language, Revision::V8).is_some());
                continue;
            }
            if language.truncates() {
                // Stemmed from the ninth revision: words cut to their first five letters.
                assert_eq!(language.first_read_in(), Revision::V9);
                assert!(super::super::stemmer::LanguageStemmer::of(language, Revision::V8).is_none());
                assert!(super::super::stemmer::LanguageStemmer::of(language, Revision::V9).is_some());
                continue;
            }
            if matches!(language, StemLanguage::Persian | StemLanguage::Telugu) {
                // Stemmed from the sixth revision, by light stemmers as Lucene's.
                assert_eq!(language.first_read_in(), Revision::V6);
                assert!(super::super::stemmer::LanguageStemmer::of(language, Revision::V5).is_none());
                assert!(super::super::stemmer::LanguageStemmer::of(language, Revision::V6).is_some());
                continue;
            }
            assert!(super::super::stemmer::LanguageStemmer::of(language, Revision::V3).is_some());
            let before = super::super::stemmer::LanguageStemmer::of(language, Revision::V2).is_some();
            assert_eq!(before, language.first_read_in() == Revision::V1, "{language:?}");
        }
        let hindi = detect("शहर नदी के किनारे बसा है और अपने पुराने घरों और पुलों के लिए जाना जाता है।");
        assert_eq!(hindi.stem_language(), Some(StemLanguage::Hindi));
    }
}
