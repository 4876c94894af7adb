//! The keyword lane's analyzers: how a stored text and a query become BM25 terms.
//!
//! - [`MULTILINGUAL_V10`], for every index written now: each row's language detected
//!   ([`language`], whatlang), words split on Unicode letters, digits and marks (a mark or
//!   an invisible format character going on the word it follows, an apostrophe between two
//!   Cyrillic letters kept inside it, [`script`]), runs of
//!   Chinese, Japanese and Korean (written without spaces) read as overlapping character
//!   pairs ([`word_forms`], as Lucene's CJK bigrams), runs of Thai, Lao, Khmer and Myanmar
//!   (also written without spaces) cut into their words by ICU's dictionaries
//!   ([`dictionary_words`]), each word NFKC-normalized and lower-cased with Arabic's normal
//!   forms ([`normalize`]), the stop words and Snowball stem (Persian, Telugu, Bengali:
//!   light stemmers; Hebrew: its attached particles taken off; twelve languages with no
//!   stemmer that inflect by endings: their first five letters, [`truncation`]) of its row's
//!   language when the word is in that language's letters ([`stemmer`]), then Latin and
//!   Greek accents and Hebrew points folded (not a Vietnamese row's tone and vowel marks:
//!   they tell its words apart). A query is read as every language the index's rows were
//!   read as ([`profile`]) and looked up by each of its words' forms, so no query language
//!   has to be guessed from a few words.
//! - [`MULTILINGUAL_V9`], [`MULTILINGUAL_V8`], [`MULTILINGUAL_V7`], [`MULTILINGUAL_V6`], [`MULTILINGUAL_V5`],
//!   [`MULTILINGUAL_V4`], [`MULTILINGUAL_V3`], [`MULTILINGUAL_V2`] and [`MULTILINGUAL_V1`], its
//!   earlier revisions ([`Revision`]: Cyrillic words cut at apostrophes, stress marks
//!   kept; Ukrainian, Bulgarian, Slovak, Latvian and eight more
//!   unstemmed; Hebrew unstemmed; Thai,
//!   Lao, Khmer and Myanmar in pairs, Bengali unstemmed; Vietnamese folded as other Latin text, Persian and
//!   Telugu unstemmed; Hebrew points and Quranic marks kept; words cut at soft hyphens and
//!   joiners; before the third, rust-stemmers' Snowball stemmers (before Snowball 3.0) of 18
//!   languages; in the first, Arabic, Turkish, Persian and other scripts' digits read
//!   differently): indexes written with them read queries as they did.
//! - [`ENGLISH_V1`], the analyzer of indexes written before all four: tantivy's simple
//!   tokenizer, ASCII folding, English stop words and stemming. Those indexes keep it.
//!
//! An index's analyzer is the tokenizer name its tantivy schema records.

mod arabic_article;
mod bengali_stemmer;
mod dictionary_words;
mod hebrew_stemmer;
mod language;
mod light_endings;
mod normalize;
mod persian_stemmer;
mod profile;
mod script;
mod stemmer;
mod telugu_stemmer;
mod truncation;
mod word_forms;

use std::ops::Range;
use std::sync::Arc;

use tantivy::tokenizer::{
    AsciiFoldingFilter, Language, LowerCaser, RemoveLongFilter, SimpleTokenizer, StopWordFilter, TextAnalyzer,
};

pub use language::{detect, detect_in, Detected, StemLanguage};
pub use profile::{LanguageProfile, SureLanguages, PROFILE_FILE};
pub use script::{class, class_in, is_default_ignorable, CharClass};
pub use word_forms::{is_one_word, lone_pair_characters, pieces, pieces_in, Piece};

use super::stem_cache::CachedEnglishStemmer;
use word_forms::{pair_terms, WordForms};

/// The English analyzer of indexes written before the multilingual one.
pub const ENGLISH_V1: &str = "quarry_en_v1";
/// The multilingual analyzer's first revision ([`Revision::V1`]).
pub const MULTILINGUAL_V1: &str = "quarry_multi_v1";
/// The multilingual analyzer's second revision ([`Revision::V2`]).
pub const MULTILINGUAL_V2: &str = "quarry_multi_v2";
/// The multilingual analyzer's third revision ([`Revision::V3`]).
pub const MULTILINGUAL_V3: &str = "quarry_multi_v3";
/// The multilingual analyzer's fourth revision ([`Revision::V4`]).
pub const MULTILINGUAL_V4: &str = "quarry_multi_v4";
/// The multilingual analyzer's fifth revision ([`Revision::V5`]).
pub const MULTILINGUAL_V5: &str = "quarry_multi_v5";
/// The multilingual analyzer's sixth revision ([`Revision::V6`]).
pub const MULTILINGUAL_V6: &str = "quarry_multi_v6";
/// The multilingual analyzer's seventh revision ([`Revision::V7`]).
pub const MULTILINGUAL_V7: &str = "quarry_multi_v7";
/// The multilingual analyzer's eighth revision ([`Revision::V8`]).
pub const MULTILINGUAL_V8: &str = "quarry_multi_v8";
/// The multilingual analyzer's ninth revision ([`Revision::V9`]).
pub const MULTILINGUAL_V9: &str = "quarry_multi_v9";
/// The multilingual analyzer (this module), every new index's ([`Revision::V10`]).
pub const MULTILINGUAL_V10: &str = "quarry_multi_v10";

/// Which revision of the multilingual analyzer an index was written with: a query is read
/// as its index's rows were.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Revision {
    /// [`MULTILINGUAL_V1`]: Arabic's teh marbuta made heh before stemming; Turkish's `İ` and
    /// `ı` left as they are.
    V1,
    /// [`MULTILINGUAL_V2`]: teh marbuta made heh after stemming, so `المدينة` ("the city")
    /// and `مدينة` are one term; `İ` (an `i` and a combining dot once lower-cased) and `ı`
    /// fold to `i`, as Lucene's ASCII folding does, so `istanbul` finds `İstanbul`; Persian
    /// yeh and keheh read as Arabic's yeh and kaf; every script's decimal digits as ASCII.
    V2,
    /// [`MULTILINGUAL_V3`]: as the second, with Snowball 3.0's stemmers instead of rust-stemmers' earlier ones
    /// (German's `ae`, `oe` and `ue` read as umlauts, so `Mueller` finds `Müller`; Dutch by
    /// Kraaij-Pohlmann; English, French and others mended), and twelve languages more
    /// stemmed: Armenian, Catalan, Czech, Esperanto, Estonian, Hindi, Indonesian, Lithuanian,
    /// Nepali, Polish, Serbian (and Croatian) and Yiddish ([`StemLanguage::first_read_in`]).
    V3,
    /// [`MULTILINGUAL_V4`]: as the third, with words bounded as Unicode's word boundaries
    /// (UAX #29) bound them: a combining mark or an invisible format character (a soft
    /// hyphen, a zero-width joiner or non-joiner, a variation selector, a bidirectional
    /// mark) goes on the word or run it follows, and the default-ignorable ones are taken
    /// out of its term (as NFKC_Casefold does), so `Donau\u{AD}dampf\u{AD}schiff` is the term
    /// of `Donaudampfschiff` and `franc\u{327}ais` (decomposed) of `français`; characters of
    /// no script of their own (`²`, `₂`, `µ`, `½`, full-width digits) are read in words, no
    /// longer as CJK characters (`m²` is `m2`, `２０２４年` is `2024` and `年`), and neither are
    /// Thai, Lao, Khmer and Myanmar digits read with their run's letters (`ปี๒๕๖๗` is `ปี` and
    /// `2567`); a non-joiner after an Arabic-script letter splits, as the third read it; a run
    /// read as pairs is composed (decomposed kana and Hangul, half-width `ｶﾞ`, as their one
    /// character).
    V4,
    /// [`MULTILINGUAL_V5`]: as the fourth, with Hebrew's points and cantillation marks folded
    /// away after stemming, as Latin accents are (`הספר` finds the pointed `הַסֵּפֶר`; a
    /// Yiddish word is stemmed with its points, as YIVO spells it, first), and the Quran's
    /// annotation marks left out with the harakat (`الصلوٰة` and Uthmani spellings' small
    /// marks).
    V5,
    /// [`MULTILINGUAL_V6`]: as the fifth, with Vietnamese rows read as Vietnamese
    /// ([`StemLanguage::Vietnamese`]), whose words keep their tone and vowel marks: folding
    /// them made one term of `việt`, `viết` ("to write") and `vét`, and of `ma`, `má`
    /// ("mother"), `mà`, `mả`, `mã` and `mạ`. A query word typed without any marks still
    /// finds the marked words it is written as (a search's group of terms). Persian
    /// and Telugu are stemmed too, by light stemmers as Lucene's ([`persian_stemmer`],
    /// [`telugu_stemmer`]).
    V6,
    /// [`MULTILINGUAL_V7`]: as the sixth, with runs of Thai, Lao, Khmer and Myanmar (written
    /// without spaces between words) cut into their words by ICU's dictionaries
    /// ([`dictionary_words`]), as Lucene's Thai tokenizer cuts Thai, no longer into pairs of
    /// code points (a pair there is often a consonant and its vowel sign, inside many
    /// unrelated words: `ตา`, "eye", in `ตาม`, "follow", and `ตาราง`, "table"). CJK stays in
    /// pairs. Bengali is stemmed, by a light stemmer as Lucene's ([`bengali_stemmer`]).
    V7,
    /// [`MULTILINGUAL_V8`]: as the seventh, with Hebrew rows read as Hebrew
    /// ([`StemLanguage::Hebrew`]), whose attached particles (`ו`, `ה`, `ב`, `כ`, `ל`, `מ`, `ש`)
    /// are taken off the front of a word while more than three letters stay
    /// ([`hebrew_stemmer`]): `ספר` ("book") finds `הספר` ("the book") and `בספר` ("in the
    /// book"), which it found none of.
    V8,
    /// [`MULTILINGUAL_V9`]: as the eighth, with the rows of twelve languages that inflect by
    /// endings and that no stemmer here reads (Ukrainian, Belarusian, Bulgarian, Macedonian,
    /// Slovak, Slovenian, Latvian, Azerbaijani, Uzbek, Turkmen, Afrikaans, Latin:
    /// [`StemLanguage::truncates`]) read as their languages, each word cut to its first five
    /// letters ([`truncation`]): `україна` ("Ukraine") finds `україни`, `україні` and
    /// `україною`, its other cases, which the eighth read as four words.
    V9,
    /// [`MULTILINGUAL_V10`]: as the ninth, with Cyrillic words read as Ukrainian and
    /// Belarusian write them and as dictionaries and Wikipedia mark them: an apostrophe
    /// between two Cyrillic letters (`'`, `’`, `‘`, `ʼ`, `` ` ``, `´`: texts type the letter
    /// any of these ways) is part of the word and left out of its term, so `пам'ять`
    /// ("memory") and `пам’яті` are one word each, `памят` once cut, where the ninth read
    /// `пам` and `ять`, `пам` and `яті`; a stress mark (a combining acute) on a Cyrillic
    /// letter is left out, so `Москва́` finds `Москва` and stems as it; and Ukrainian's `ґ`
    /// is read as `г`, as Lucene's Ukrainian analyzer reads all three
    /// ([`script::joins_cyrillic_word`], [`normalize`]).
    #[default]
    V10,
}

impl Revision {
    pub const ALL: [Revision; 10] = [
        Self::V1,
        Self::V2,
        Self::V3,
        Self::V4,
        Self::V5,
        Self::V6,
        Self::V7,
        Self::V8,
        Self::V9,
        Self::V10,
    ];

    /// Position in [`Self::ALL`] (per-revision tables).
    pub fn index(self) -> usize {
        self as usize
    }

    /// The revision an index's analyzer name says (None: not the multilingual analyzer).
    pub fn of_analyzer(name: &str) -> Option<Self> {
        match name {
            MULTILINGUAL_V1 => Some(Self::V1),
            MULTILINGUAL_V2 => Some(Self::V2),
            MULTILINGUAL_V3 => Some(Self::V3),
            MULTILINGUAL_V4 => Some(Self::V4),
            MULTILINGUAL_V5 => Some(Self::V5),
            MULTILINGUAL_V6 => Some(Self::V6),
            MULTILINGUAL_V7 => Some(Self::V7),
            MULTILINGUAL_V8 => Some(Self::V8),
            MULTILINGUAL_V9 => Some(Self::V9),
            MULTILINGUAL_V10 => Some(Self::V10),
            _ => None,
        }
    }

    pub fn analyzer_name(self) -> &'static str {
        match self {
            Self::V1 => MULTILINGUAL_V1,
            Self::V2 => MULTILINGUAL_V2,
            Self::V3 => MULTILINGUAL_V3,
            Self::V4 => MULTILINGUAL_V4,
            Self::V5 => MULTILINGUAL_V5,
            Self::V6 => MULTILINGUAL_V6,
            Self::V7 => MULTILINGUAL_V7,
            Self::V8 => MULTILINGUAL_V8,
            Self::V9 => MULTILINGUAL_V9,
            Self::V10 => MULTILINGUAL_V10,
        }
    }
}

/// tantivy's chain of the English analyzer ([`ENGLISH_V1`]).
pub(crate) fn english_analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(40))
        .filter(LowerCaser)
        .filter(AsciiFoldingFilter)
        .filter(StopWordFilter::new(Language::English).expect("tantivy ships English stop words"))
        // tantivy's English Snowball stemmer, with a cache of the words seen (same tokens).
        .filter(CachedEnglishStemmer::new())
        .build()
}

/// How one keyword index reads texts and queries.
#[derive(Clone, Debug)]
pub enum KeywordAnalyzer {
    English,
    Multilingual(Arc<LanguageProfile>),
}

impl KeywordAnalyzer {
    pub fn name(&self) -> &'static str {
        match self {
            Self::English => ENGLISH_V1,
            Self::Multilingual(profile) => profile.revision.analyzer_name(),
        }
    }

    /// The index's language profile (none for the English analyzer).
    pub fn profile(&self) -> Option<&LanguageProfile> {
        match self {
            Self::English => None,
            Self::Multilingual(profile) => Some(profile),
        }
    }

    /// The distinct terms `query` is looked up by, in order of first appearance.
    pub fn query_terms(&self, query: &str) -> Vec<String> {
        self.weighted_query_terms(query)
            .into_iter()
            .map(|(term, _)| term)
            .collect()
    }

    /// [`Self::query_terms`] with each term's weight in the query. A word read as several
    /// languages counts in each reading by the share of the index's rows read in that
    /// language (its readings' weights sum to 1, less the readings where it is a stop word),
    /// so the stems a language of a few rows makes of a query's words barely weigh on the
    /// rows of the others; a term several readings of a word share adds their shares, and a
    /// term several words share counts once. Character pairs, and every term of the English
    /// analyzer, weigh 1.
    pub fn weighted_query_terms(&self, query: &str) -> Vec<(String, f32)> {
        /// Adds `term` to `terms` by `merge` with the weight it has there, if any.
        fn put(terms: &mut Vec<(String, f32)>, term: &str, weight: f32, merge: fn(f32, f32) -> f32) {
            match terms.iter_mut().find(|(t, _)| t == term) {
                Some((_, w)) => *w = merge(*w, weight),
                None => terms.push((term.to_string(), weight)),
            }
        }
        let mut terms: Vec<(String, f32)> = Vec::new();
        match self {
            Self::English => {
                let mut analyzer = english_analyzer();
                let mut stream = analyzer.token_stream(query);
                while stream.advance() {
                    put(&mut terms, &stream.token().text, 1.0, f32::max);
                }
            }
            Self::Multilingual(profile) => {
                let mut forms = WordForms::new(profile.revision);
                let readings = profile.readings();
                for piece in pieces_in(query, profile.revision) {
                    match piece {
                        Piece::Pairs(run) => pair_terms(query, run, profile.revision, |term, _| {
                            put(&mut terms, term, 1.0, f32::max)
                        }),
                        Piece::Word(range) => {
                            // Each reading's term of this word, weights summed where they agree.
                            let mut word_terms: Vec<(String, f32)> = Vec::new();
                            for &(language, share) in &readings {
                                if let Some(term) = forms.term(&query[range.clone()], language) {
                                    put(&mut word_terms, term, share, |a, b| a + b);
                                }
                            }
                            // A term two words of the query share counts once, by its larger weight.
                            for (term, weight) in word_terms {
                                put(&mut terms, &term, weight, f32::max);
                            }
                        }
                    }
                }
            }
        }
        terms
    }

    /// The term sequences a row holding `phrase` holds in order, one for each language the
    /// index's rows were read as (the same sequence once), each term with its position in the
    /// phrase as the index counts positions: the multilingual analyzer writes a row's terms
    /// one after another (a stop word or an overlong word leaves no gap), the English one
    /// leaves a stop word's position empty. A phrase of no terms (stop words only) has none.
    pub fn phrase_readings(&self, phrase: &str) -> Vec<Vec<(usize, String)>> {
        let mut readings: Vec<Vec<(usize, String)>> = Vec::new();
        let mut add = |sequence: Vec<(usize, String)>| {
            if !sequence.is_empty() && !readings.contains(&sequence) {
                readings.push(sequence);
            }
        };
        match self {
            Self::English => {
                let mut analyzer = english_analyzer();
                let mut stream = analyzer.token_stream(phrase);
                let mut sequence: Vec<(usize, String)> = Vec::new();
                while stream.advance() {
                    let token = stream.token();
                    sequence.push((token.position, token.text.clone()));
                }
                let first = sequence.first().map(|(at, _)| *at).unwrap_or(0);
                add(sequence.into_iter().map(|(at, term)| (at - first, term)).collect());
            }
            Self::Multilingual(profile) => {
                let mut reader = self.text_reader();
                for (language, _) in profile.readings() {
                    let mut sequence: Vec<(usize, String)> = Vec::new();
                    reader.for_each_term_as(phrase, language, |term, _| {
                        sequence.push((sequence.len(), term.to_string()))
                    });
                    add(sequence);
                }
            }
        }
        readings
    }

    /// The form the index's terms that begin with `word` begin with, for a prefix search
    /// (`hydro*`): the word normalized as the analyzer normalizes words (lower case, accents
    /// folded, NFKC), neither stemmed nor dropped as a stop word. None where the analyzer
    /// reads no single word in `word` (a run of CJK characters is read as pairs, not words);
    /// a run of a script cut by dictionary (Thai) is the beginning of one word, however the
    /// dictionary would cut the letters typed so far (`ภาษ*` finds `ภาษา`).
    pub fn prefix_form(&self, word: &str) -> Option<String> {
        match self {
            Self::English => {
                let mut analyzer = TextAnalyzer::builder(SimpleTokenizer::default())
                    .filter(LowerCaser)
                    .filter(AsciiFoldingFilter)
                    .build();
                let mut stream = analyzer.token_stream(word);
                let first = stream.advance().then(|| stream.token().text.clone());
                first.filter(|_| !stream.advance())
            }
            Self::Multilingual(profile) => is_one_word(word, profile.revision)
                .then(|| WordForms::new(profile.revision).term(word, None).map(str::to_string))
                .flatten(),
        }
    }

    /// Where a stemmer takes letters off the front of a prefix (`word*`), what the words it
    /// begins begin with once stemmed: for each reading of `word` (its term in a language
    /// the index reads) found in its folded form after the first letters, the folded form
    /// from there: Hebrew's `העוגי*`, `עוגי`, which `העוגיות`'s term `עוגיות` begins with;
    /// Indonesian's `perekonom*`, `ekonom`. Arabic's stemmer reads a cut word's last letters
    /// as an ending and keeps its article (`المدين` is `المد`), so where the index reads
    /// Arabic, an Arabic prefix's article is found by its letters ([`arabic_article`]):
    /// `المدين*`, `مدين`. Where the index reads a language whose words are cut to their
    /// first letters ([`StemLanguage::truncates`]), a longer prefix in its letters begins no
    /// term of it, so its cut is one more beginning: Ukrainian's `україн*`, `украї`. Empty
    /// where every reading begins the word and none is cut (a stemmer that takes letters off
    /// the end leaves a prefix's first letters alone).
    pub fn prefix_stems(&self, word: &str) -> Vec<String> {
        let Some(folded) = self.prefix_form(word) else {
            return Vec::new();
        };
        let terms = self.query_terms(word);
        let after_stemmed_front = terms
            .iter()
            .filter(|term| !term.is_empty() && !folded.starts_with(term.as_str()))
            .filter_map(|term| {
                let mut after = folded.char_indices().skip(1).map(|(at, _)| &folded[at..]);
                after.find(|rest| rest.starts_with(term.as_str()))
            });
        let after_article = self
            .reads_in(StemLanguage::Arabic, &folded)
            .then(|| arabic_article::after_article(&folded))
            .flatten();
        let cut = self.cut_readings(word, &folded);
        let mut stems: Vec<String> = Vec::new();
        for rest in after_stemmed_front
            .chain(after_article)
            .chain(cut.iter().map(String::as_str))
        {
            if !stems.iter().any(|stem| stem == rest) {
                stems.push(rest.to_string());
            }
        }
        stems
    }

    /// `word`'s terms in the languages the index reads whose words are cut to their first
    /// letters ([`StemLanguage::truncates`]), where shorter than `folded`, its folded form.
    fn cut_readings(&self, word: &str, folded: &str) -> Vec<String> {
        let Self::Multilingual(profile) = self else {
            return Vec::new();
        };
        let mut forms = WordForms::new(profile.revision);
        profile
            .readings()
            .into_iter()
            .filter_map(|(language, _)| {
                language.filter(|&language| language.truncates() && self.reads_in(language, folded))
            })
            .filter_map(|language| forms.term(word, Some(language)).map(str::to_string))
            .filter(|term| term.len() < folded.len() && folded.starts_with(term.as_str()))
            .collect()
    }

    /// The end of `word`'s first letters, where most of the index's rows in the word's letters
    /// were read in languages whose words are cut to them ([`StemLanguage::truncates`]): the
    /// bytes its term keeps there (`Україною`'s first five letters, `Украї`); None where the
    /// word is not cut (five letters or fewer, a digit in it) or such rows are fewer (an
    /// English collection with a few rows read as Latin). Did you mean offers a correction
    /// with the ending typed after a row word's first letters.
    pub fn cut_end(&self, word: &str) -> Option<usize> {
        let Self::Multilingual(profile) = self else {
            return None;
        };
        let letters = script::letters_of(word);
        let (mut cut_rows, mut rows) = (0, 0);
        for (code, &n) in &profile.analyzed_as {
            let Some(language) = StemLanguage::from_code(code) else {
                continue;
            };
            if profile.revision >= language.first_read_in() && language.reads(letters) {
                rows += n;
                cut_rows += if language.truncates() { n } else { 0 };
            }
        }
        (cut_rows * 2 > rows)
            .then(|| truncation::typed_end(word, profile.revision))
            .filter(|&end| end < word.len())
    }

    /// The bytes of `word`'s front that its stem leaves out, where the index reads it in a
    /// language whose stemmer takes letters off the front (Hebrew's particles: `ה`'s two for
    /// `הספר`, none for `ספר`); None elsewhere. Did you mean offers a correction with the
    /// particles typed, whichever particles a row writes the word with.
    pub fn front_particles(&self, word: &str) -> Option<usize> {
        self.reads_in(StemLanguage::Hebrew, word)
            .then(|| hebrew_stemmer::particles_len(word))
    }

    /// Whether the index reads `language` and `word` is in its letters.
    fn reads_in(&self, language: StemLanguage, word: &str) -> bool {
        let Self::Multilingual(profile) = self else {
            return false;
        };
        profile.revision >= language.first_read_in()
            && profile.reads(language)
            && script::letters_of(word) == language.letters()
    }

    /// A reader of stored texts, as the index read them (one per thread: it keeps caches).
    pub fn text_reader(&self) -> TextReader {
        let inner = match self {
            Self::English => Reader::English(english_analyzer()),
            Self::Multilingual(profile) => Reader::Multilingual(profile.clone(), WordForms::new(profile.revision)),
        };
        TextReader { inner }
    }
}

enum Reader {
    English(TextAnalyzer),
    Multilingual(Arc<LanguageProfile>, WordForms),
}

/// Reads stored texts into terms (see [`KeywordAnalyzer::text_reader`]).
pub struct TextReader {
    inner: Reader,
}

impl TextReader {
    /// Each term of `text`, with the byte range of the text it comes from, in order.
    pub fn for_each_term(&mut self, text: &str, emit: impl FnMut(&str, Range<usize>)) {
        let language = match &self.inner {
            Reader::English(_) => None,
            Reader::Multilingual(profile, _) => profile.language_of(text),
        };
        self.for_each_term_as(text, language, emit)
    }

    /// [`Self::for_each_term`] with each term's position as the index counts positions (see
    /// [`KeywordAnalyzer::phrase_readings`]): the English analyzer leaves a stop word's
    /// position empty, the multilingual one numbers the terms it writes one after another.
    pub fn for_each_positioned_term(&mut self, text: &str, mut emit: impl FnMut(&str, Range<usize>, usize)) {
        if let Reader::English(analyzer) = &mut self.inner {
            let mut stream = analyzer.token_stream(text);
            while stream.advance() {
                let token = stream.token();
                emit(&token.text, token.offset_from..token.offset_to, token.position);
            }
            return;
        }
        let mut position = 0;
        self.for_each_term(text, |term, span| {
            emit(term, span, position);
            position += 1;
        });
    }

    /// [`Self::for_each_term`] for a text whose analysis language is known (the multilingual analyzer).
    pub fn for_each_term_as(
        &mut self,
        text: &str,
        language: Option<StemLanguage>,
        mut emit: impl FnMut(&str, Range<usize>),
    ) {
        match &mut self.inner {
            Reader::English(analyzer) => {
                let mut stream = analyzer.token_stream(text);
                while stream.advance() {
                    let token = stream.token();
                    emit(&token.text, token.offset_from..token.offset_to);
                }
            }
            Reader::Multilingual(profile, forms) => {
                for piece in pieces_in(text, profile.revision) {
                    match piece {
                        Piece::Pairs(run) => pair_terms(text, run, profile.revision, &mut emit),
                        Piece::Word(range) => {
                            if let Some(term) = forms.term(&text[range.clone()], language) {
                                emit(term, range);
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Every word of at most `longest` characters of `alphabet`, the empty one first, each once
/// (a stemmer's exhaustive tests).
#[cfg(test)]
fn every_word(alphabet: &[char], longest: usize) -> Vec<String> {
    let mut words = vec![String::new()];
    let mut last = words.clone();
    for _ in 0..longest {
        last = last
            .iter()
            .flat_map(|word| alphabet.iter().map(move |&c| format!("{word}{c}")))
            .collect();
        words.extend(last.iter().cloned());
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    fn multilingual(texts: &[&str]) -> KeywordAnalyzer {
        KeywordAnalyzer::Multilingual(Arc::new(LanguageProfile::of_texts(texts).0))
    }

    #[test]
    fn a_query_is_read_as_every_language_of_the_rows() {
        let analyzer = multilingual(&[
            "Die Stadt liegt am Ufer des Rheins und ist für ihre alten Häuser und Brücken bekannt, die jedes Jahr viele Besucher anziehen.",
            "The city lies on the bank of the river and is known for its old houses and bridges, which draw many visitors every year.",
        ]);
        // German stems and English stems; stop words of one language kept as the other's words.
        let terms = analyzer.query_terms("Die Häuser");
        assert!(
            terms.contains(&"haus".to_string()) && terms.contains(&"hauser".to_string()),
            "{terms:?}"
        );
        assert!(
            terms.contains(&"die".to_string()),
            "English reads 'die' as a word: {terms:?}"
        );
        // Each reading weighs by its rows' share; readings that agree add up; a repeated word counts once.
        let weighted = analyzer.weighted_query_terms("Häuser in Berlin, Berlin");
        assert_eq!(
            weighted,
            [
                ("haus".to_string(), 0.5),
                ("hauser".to_string(), 0.5),
                ("berlin".to_string(), 1.0)
            ],
            "{weighted:?}"
        );
        // An English index drops English stop words from a query.
        let english = multilingual(&["The city lies on the bank of the river and is known for its old houses and bridges, which draw many visitors every year."]);
        assert_eq!(english.query_terms("the houses and the bridges"), ["hous", "bridg"]);
        // CJK pairs need no language.
        assert_eq!(analyzer.query_terms("東京都"), ["東京", "京都"]);
    }

    #[test]
    fn a_phrase_is_read_as_each_languages_terms_in_order() {
        let at = |terms: &[&str]| -> Vec<(usize, String)> {
            terms.iter().enumerate().map(|(i, t)| (i, t.to_string())).collect()
        };
        let analyzer = multilingual(&[
            "Die Stadt liegt am Ufer des Rheins und ist für ihre alten Häuser und Brücken bekannt, die jedes Jahr viele Besucher anziehen.",
            "The city lies on the bank of the river and is known for its old houses and bridges, which draw many visitors every year.",
        ]);
        // Each language's stems, a stop word of one language a word of the other, no gaps.
        let readings = analyzer.phrase_readings("die alten Häuser");
        assert_eq!(readings.len(), 2, "{readings:?}");
        assert!(readings.contains(&at(&["alt", "haus"])), "{readings:?}");
        assert!(readings.contains(&at(&["die", "alten", "hauser"])), "{readings:?}");
        // Readings that agree are one; CJK pairs in order; stop words alone are no phrase.
        assert_eq!(
            analyzer.phrase_readings("Berlin 東京都"),
            [at(&["berlin", "東京", "京都"])]
        );
        let english = multilingual(&["The city lies on the bank of the river and is known for its old houses and bridges, which draw many visitors every year."]);
        assert!(english.phrase_readings("of the").is_empty());
        // The English analyzer keeps a stop word's place.
        assert_eq!(
            KeywordAnalyzer::English.phrase_readings("the state of the art"),
            [vec![(0, "state".to_string()), (3, "art".to_string())]]
        );
    }

    #[test]
    fn stored_texts_read_with_their_language() {
        let texts = ["Die Häuser der Stadt stehen am Ufer des Flusses, und viele Besucher kommen jedes Jahr, um die alten Brücken zu sehen."];
        let analyzer = multilingual(&texts);
        let mut reader = analyzer.text_reader();
        let mut terms = Vec::new();
        reader.for_each_term(texts[0], |term, range| terms.push((term.to_string(), &texts[0][range])));
        assert!(terms.contains(&("haus".to_string(), "Häuser")), "{terms:?}");
        assert!(
            !terms.iter().any(|(t, _)| t == "die" || t == "der"),
            "German stop words: {terms:?}"
        );
        // The English analyzer reads as before.
        let mut english = KeywordAnalyzer::English.text_reader();
        let mut words = Vec::new();
        english.for_each_term("The houses, running", |term, _| words.push(term.to_string()));
        assert_eq!(words, ["hous", "run"]);
    }
}
