//! The terms the multilingual analyzer makes of words and of runs read as character pairs,
//! with a cache per language of the words already seen (stop word or stem), since a corpus's
//! words repeat heavily and Snowball is most of the analysis's time.

use std::ops::Range;

use tantivy::tokenizer::{RawTokenizer, StopWordFilter, TextAnalyzer};
use unicode_normalization::char::is_combining_mark;
use unicode_normalization::UnicodeNormalization;
use unicode_script::{Script, UnicodeScript};

use super::dictionary_words::dictionary_words;
use super::language::StemLanguage;
use super::normalize::{after_stemming, fold_marks, normalize_word};
use super::script::{
    class_in, is_apostrophe, is_default_ignorable, joins_cyrillic_word, letters_of, splits_after, CharClass,
};
use super::stemmer::LanguageStemmer;
use super::Revision;

/// Words longer than this many characters are left out (as tantivy's `RemoveLongFilter(40)`
/// did for the English analyzer: base64 blobs, hashes, run-together junk).
const MAX_WORD_CHARS: usize = 40;
/// Words cached per language before that cache is emptied.
const CACHE_WORDS: usize = 50_000;

/// One piece of a text: a word (its byte range) or a run of pair-read characters.
#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    Word(Range<usize>),
    Pairs(Range<usize>),
}

/// The words and pair runs of `text`, in order, as the analyzer of new indexes cuts them.
pub fn pieces(text: &str) -> Vec<Piece> {
    pieces_in(text, Revision::default())
}

/// The words and pair runs of `text`, in order, as `revision` cuts them: a run of characters
/// of one class (from [`Revision::V7`] on, a Thai, Lao, Khmer or Myanmar run cut into its
/// dictionary words), where from [`Revision::V4`] on a mark or a format character
/// ([`CharClass::Extend`]) goes on the piece it follows (a mark with none before it begins a
/// word; a format character there is skipped), but for a non-joiner after an Arabic-script
/// letter, which splits ([`splits_after`]), and from [`Revision::V10`] on an apostrophe
/// between two Cyrillic letters is inside the word ([`joins_cyrillic_word`]).
pub fn pieces_in(text: &str, revision: Revision) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut current: Option<(CharClass, usize)> = None;
    let mut before = ' ';
    for (at, c) in text.char_indices() {
        // An apostrophe inside a Cyrillic word keeps the word going.
        if revision >= Revision::V10
            && is_apostrophe(c)
            && matches!(current, Some((CharClass::Word, _)))
            && text[at + c.len_utf8()..]
                .chars()
                .next()
                .is_some_and(|after| joins_cyrillic_word(before, c, after))
        {
            continue;
        }
        // `before`: the last character that is no mark or format character.
        let class = match class_in(c, revision) {
            CharClass::Extend if splits_after(c, before) => CharClass::Separator,
            CharClass::Extend if current.is_some() => continue,
            CharClass::Extend if is_combining_mark(c) => CharClass::Word,
            CharClass::Extend => continue,
            class => {
                before = c;
                class
            }
        };
        match current {
            Some((open, _)) if open == class => {}
            _ => {
                if let Some((open, start)) = current.take() {
                    push_piece(&mut out, text, open, start..at, revision);
                }
                if class != CharClass::Separator {
                    current = Some((class, at));
                }
            }
        }
    }
    if let Some((open, start)) = current {
        push_piece(&mut out, text, open, start..text.len(), revision);
    }
    out
}

/// Whether `revision` reads `text` as one word: one word piece spanning all of it, or one run
/// of a script it cuts into words by dictionary, however the dictionary would cut it (the
/// letters typed so far of a Thai word).
pub fn is_one_word(text: &str, revision: Revision) -> bool {
    is_one_dictionary_run(text, revision)
        || matches!(pieces_in(text, revision).as_slice(), [Piece::Word(range)] if *range == (0..text.len()))
}

/// Whether `text` is one run of a script `revision` cuts into words by dictionary (Thai, Lao,
/// Khmer, Myanmar: [`super::script::PairGroup::has_dictionary_words`]), its marks included.
fn is_one_dictionary_run(text: &str, revision: Revision) -> bool {
    let mut classes = text.chars().map(|c| class_in(c, revision));
    matches!(classes.next(), Some(CharClass::Pair(group)) if group.has_dictionary_words(revision))
        && classes.all(|class| match class {
            CharClass::Pair(group) => group.has_dictionary_words(revision),
            CharClass::Extend => true,
            CharClass::Word | CharClass::Separator => false,
        })
}

/// Adds the piece of `text[range]`, a run of `class`: a word, a pair run, or from
/// [`Revision::V7`] on, for a script ICU reads by dictionary, the run's words.
fn push_piece(out: &mut Vec<Piece>, text: &str, class: CharClass, range: Range<usize>, revision: Revision) {
    match class {
        CharClass::Pair(group) if group.has_dictionary_words(revision) => {
            dictionary_words(text, range, |word| out.push(Piece::Word(word)))
        }
        CharClass::Word => out.push(Piece::Word(range)),
        CharClass::Pair(_) => out.push(Piece::Pairs(range)),
        CharClass::Extend | CharClass::Separator => {}
    }
}

/// The terms of a pair run: each character NFKC-normalized and lower-cased, then each two
/// neighbours as one term (a lone character as itself), with the byte range they span. From
/// [`Revision::V4`] on, default-ignorable characters (a variation selector after an
/// ideograph, a zero-width joiner) are left out, a character composes with the one before
/// it where Unicode composes them (decomposed kana `カ` + `◌゙` and half-width `ｶﾞ` as `ガ`,
/// conjoining Hangul jamo as their syllable), and a mark of no script of its own that
/// composes with nothing is left out.
pub fn pair_terms(text: &str, run: Range<usize>, revision: Revision, mut emit: impl FnMut(&str, Range<usize>)) {
    let mut chars: Vec<(char, Range<usize>)> = Vec::new();
    for (at, c) in text[run.clone()].char_indices() {
        let span = run.start + at..run.start + at + c.len_utf8();
        if revision < Revision::V4 {
            for normal in std::iter::once(c).nfkc().flat_map(char::to_lowercase) {
                chars.push((normal, span.clone()));
            }
            continue;
        }
        if is_default_ignorable(c) {
            continue;
        }
        for normal in std::iter::once(c).nfkc().flat_map(char::to_lowercase) {
            let composed = chars
                .last()
                .and_then(|(before, _)| unicode_normalization::char::compose(*before, normal));
            match (composed, chars.last_mut()) {
                (Some(composed), Some((before, before_span))) => {
                    *before = composed;
                    before_span.end = span.end;
                }
                _ if is_combining_mark(normal) && matches!(normal.script(), Script::Common | Script::Inherited) => {}
                _ => chars.push((normal, span.clone())),
            }
        }
    }
    let mut term = String::with_capacity(8);
    if chars.len() == 1 {
        term.push(chars[0].0);
        emit(&term, chars[0].1.clone());
        return;
    }
    for pair in chars.windows(2) {
        term.clear();
        term.push(pair[0].0);
        term.push(pair[1].0);
        emit(&term, pair[0].1.start..pair[1].1.end);
    }
}

/// The characters of `text` that stand alone in a run read as pairs (a run of one character,
/// as [`pair_terms`] reads it), in order, each once: an index holds such a character inside
/// its runs only as part of pairs (`寺` of `東大寺` in `大寺`), so a query of one is looked up
/// by the pairs that hold it.
pub fn lone_pair_characters(text: &str) -> Vec<String> {
    let mut lone: Vec<String> = Vec::new();
    for piece in pieces(text) {
        let Piece::Pairs(run) = piece else { continue };
        let mut terms: Vec<String> = Vec::new();
        pair_terms(text, run, Revision::default(), |term, _| terms.push(term.to_string()));
        if let [term] = terms.as_slice() {
            if term.chars().count() == 1 && !lone.contains(term) {
                lone.push(term.clone());
            }
        }
    }
    lone
}

/// Per-thread word analysis: normal form, stop words and stem of a language, accents folded.
pub struct WordForms {
    revision: Revision,
    stemming: Stemming,
    /// Per language (and one more for no language): normal word → its term, None for a stop word.
    cache: Vec<WordCache>,
    normal: String,
}

/// hashbrown's map for its `entry_ref`: a word seen before is found with one lookup, and a
/// new one is keyed by a copy of it made only then.
type WordCache = hashbrown::HashMap<Box<str>, Option<Box<str>>, rustc_hash::FxBuildHasher>;

/// The stemmers and stop word filters, made for a language when it is first met.
struct Stemming {
    /// Per language, its stemmer once met (None inside: the revision stems it by none).
    stemmers: Vec<Option<Option<LanguageStemmer>>>,
    stop_filters: Vec<Option<Option<TextAnalyzer>>>,
}

impl WordForms {
    /// Word analysis as `revision` of the analyzer reads words.
    pub fn new(revision: Revision) -> Self {
        let languages = StemLanguage::ALL.len();
        Self {
            revision,
            stemming: Stemming {
                stemmers: (0..languages).map(|_| None).collect(),
                stop_filters: (0..languages).map(|_| None).collect(),
            },
            cache: (0..=languages).map(|_| WordCache::default()).collect(),
            normal: String::new(),
        }
    }

    /// The term of the word `word` in a text of `language` (None: stemmed by no language),
    /// or None when it is a stop word of that language or too long.
    pub fn term(&mut self, word: &str, language: Option<StemLanguage>) -> Option<&str> {
        let Self {
            revision,
            stemming,
            cache,
            normal,
        } = self;
        normalize_word(word, normal, *revision);
        let cache = &mut cache[language.map(StemLanguage::index).unwrap_or(StemLanguage::ALL.len())];
        if cache.len() >= CACHE_WORDS {
            cache.clear();
        }
        cache
            .entry_ref(normal.as_str())
            .or_insert_with(|| {
                stemming
                    .fresh_term(normal, language, *revision)
                    .map(String::into_boxed_str)
            })
            .as_deref()
    }
}

impl Stemming {
    fn fresh_term(&mut self, normal: &str, language: Option<StemLanguage>, revision: Revision) -> Option<String> {
        if normal.len() > MAX_WORD_CHARS && normal.chars().count() > MAX_WORD_CHARS {
            return None;
        }
        // The row's language's stemmer, when its revision stems it and the word is in its letters.
        let Self { stemmers, stop_filters } = self;
        let stemmer = language
            .filter(|language| language.reads(letters_of(normal)))
            .and_then(|language| {
                let stemmer = stemmers[language.index()].get_or_insert_with(|| LanguageStemmer::of(language, revision));
                stemmer.as_ref().map(|stemmer| (language, stemmer))
            });
        let stemmed = match stemmer {
            Some((language, stemmer)) => {
                if is_stop_word(stop_filters, normal, language) {
                    return None;
                }
                stemmer.stem(normal).into_owned()
            }
            None => normal.to_string(),
        };
        let stemmed = after_stemming(stemmed, revision);
        // A language whose marks tell its words apart (Vietnamese) keeps them.
        let term = match language.is_some_and(StemLanguage::keeps_marks) {
            true => stemmed,
            false => fold_marks(&stemmed, revision).unwrap_or(stemmed),
        };
        // Nothing left (a word of Arabic or Hebrew marks alone, which normalizes or stems to
        // nothing; a particle a stemmer takes whole, Nepali's `का`): no term from the third
        // revision on. The earlier ones index the empty term, kept as they wrote it.
        match term.is_empty() && revision >= Revision::V3 {
            true => None,
            false => Some(term),
        }
    }
}

/// Whether `normal` is a stop word of `language` (its filter made in `stop_filters` when first met).
fn is_stop_word(stop_filters: &mut [Option<Option<TextAnalyzer>>], normal: &str, language: StemLanguage) -> bool {
    let filter = stop_filters[language.index()].get_or_insert_with(|| {
        language
            .stop_words()
            .and_then(StopWordFilter::new)
            .map(|stop| TextAnalyzer::builder(RawTokenizer::default()).filter(stop).build())
    });
    match filter {
        Some(filter) => {
            let mut stream = filter.token_stream(normal);
            !stream.advance()
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair_list(text: &str) -> Vec<(String, &str)> {
        let mut out = Vec::new();
        for piece in pieces(text) {
            if let Piece::Pairs(run) = piece {
                pair_terms(text, run, Revision::default(), |term, span| {
                    out.push((term.to_string(), &text[span]))
                });
            }
        }
        out
    }

    #[test]
    fn pieces_split_scripts() {
        let text = "GPU版の東京タワー、高さ333m。";
        let got: Vec<&str> = pieces(text)
            .iter()
            .map(|p| match p {
                Piece::Word(r) | Piece::Pairs(r) => &text[r.clone()],
            })
            .collect();
        assert_eq!(got, ["GPU", "版の東京タワー", "高さ", "333m"]);
    }

    fn words_in(text: &str, revision: Revision) -> Vec<&str> {
        pieces_in(text, revision)
            .iter()
            .map(|p| match p {
                Piece::Word(r) | Piece::Pairs(r) => &text[r.clone()],
            })
            .collect()
    }

    /// Soft hyphens, joiners, marks of decomposed text and characters of no script of their
    /// own, cut by the fourth revision as Unicode's word boundaries cut them, and by the third.
    #[test]
    fn pieces_bounded_as_unicode_bounds_words() {
        let v4 = |text| words_in(text, Revision::V4);
        let v3 = |text| words_in(text, Revision::V3);
        let soft = "Donau\u{AD}dampf\u{AD}schiff";
        assert_eq!(v4(soft), [soft]);
        assert_eq!(v3(soft), ["Donau", "dampf", "schiff"]);
        let decomposed = "franc\u{327}ais";
        assert_eq!(v4(decomposed), [decomposed]);
        assert_eq!(v3(decomposed), ["franc", "\u{327}", "ais"]);
        // Sinhala's "Sri" holds a zero-width joiner, a Malayalam word a non-joiner; Persian's
        // "I want" and "books" split at theirs, between the word and its affixes.
        assert_eq!(v4("ශ්\u{200D}රී ලංකා"), ["ශ්\u{200D}රී", "ලංකා"]);
        assert_eq!(v3("ශ්\u{200D}රී ලංකා"), ["ශ්", "රී", "ලංකා"]);
        assert_eq!(v4("കണ്\u{200C}മണി"), ["കണ്\u{200C}മണി"]);
        assert_eq!(v4("می\u{200C}خواهم"), ["می", "خواهم"]);
        assert_eq!(v4("کتاب\u{200C}ها"), ["کتاب", "ها"]);
        // A non-joiner after a mark on an Arabic letter splits as well; two in a row once.
        assert_eq!(v4("کتابِ\u{200C}\u{200C}ها"), ["کتابِ", "ها"]);
        assert_eq!(v4("10 m² H₂O µg"), ["10", "m²", "H₂O", "µg"]);
        assert_eq!(v3("10 m² H₂O"), ["10", "m", "²", "H", "₂", "O"]);
        assert_eq!(v4("２０２４年"), ["２０２４", "年"]);
        assert_eq!(v4("ในปี๒๕๖๗"), ["ในปี", "๒๕๖๗"]);
        assert_eq!(v3("ในปี๒๕๖๗"), ["ในปี๒๕๖๗"]);
        assert_eq!(v3("２０２４年"), ["２０２４年"]);
        // A variation selector goes on its ideograph's run; a byte order mark or soft
        // hyphen with nothing before it is skipped; a lone mark is a word; a zero-width
        // space still cuts.
        assert_eq!(v4("葛\u{E0100}城"), ["葛\u{E0100}城"]);
        assert_eq!(v4("\u{FEFF}\u{AD}word"), ["word"]);
        assert_eq!(v4("\u{301}"), ["\u{301}"]);
        assert_eq!(v4("ab\u{200B}cd"), ["ab", "cd"]);
    }

    /// An apostrophe between Cyrillic letters is inside the word from the tenth revision on;
    /// between Latin letters, at a word's end or before a quote it still cuts.
    #[test]
    fn apostrophes_inside_cyrillic_words() {
        let v10 = |text| words_in(text, Revision::V10);
        assert_eq!(v10("пам'ять і м’ясо"), ["пам'ять", "і", "м’ясо"]);
        assert_eq!(
            words_in("пам'ять і м’ясо", Revision::V9),
            ["пам", "ять", "і", "м", "ясо"]
        );
        // A stress mark before the apostrophe; two apostrophes join twice.
        assert_eq!(v10("па\u{301}м'ять"), ["па\u{301}м'ять"]);
        assert_eq!(v10("д'Ар'тан"), ["д'Ар'тан"]);
        // Quotes around a word, an apostrophe at its end, two in a row, Latin words.
        assert_eq!(v10("'слово' слова' а''б"), ["слово", "слова", "а", "б"]);
        assert_eq!(v10("don't l'homme"), ["don", "t", "l", "homme"]);
        assert_eq!(v10("м'a"), ["м", "a"]);
    }

    #[test]
    fn pairs_composed_and_ignorables_left_out() {
        let pairs = |text: &str, revision| -> Vec<(String, String)> {
            let mut out = Vec::new();
            for piece in pieces_in(text, revision) {
                if let Piece::Pairs(run) = piece {
                    pair_terms(text, run, revision, |term, span| {
                        out.push((term.to_string(), text[span].to_string()))
                    });
                }
            }
            out
        };
        let terms =
            |text: &str, revision| -> Vec<String> { pairs(text, revision).into_iter().map(|(term, _)| term).collect() };
        // Decomposed and half-width kana as their one character, spans over both code points.
        assert_eq!(terms("カ\u{3099}ス", Revision::V4), ["ガス"]);
        assert_eq!(pairs("カ\u{3099}ス", Revision::V4)[0].1, "カ\u{3099}ス");
        assert_eq!(terms("ｶﾞｽ", Revision::V4), ["ガス"]);
        assert_eq!(terms("ｶﾞｽ", Revision::V3), ["カ\u{3099}", "\u{3099}ス"]);
        // Conjoining Hangul jamo as their syllables.
        assert_eq!(
            terms("\u{1112}\u{1161}\u{11AB}\u{1100}\u{1173}\u{11AF}", Revision::V4),
            ["한글"]
        );
        // A variation selector left out of its ideograph's pairs.
        assert_eq!(terms("葛\u{E0100}城", Revision::V4), ["葛城"]);
        assert_eq!(terms("葛\u{E0100}城", Revision::V3), ["葛\u{E0100}", "\u{E0100}城"]);
    }

    #[test]
    fn lone_characters_of_pair_runs() {
        assert_eq!(lone_pair_characters("寺 GPU版 東京 猫と犬 寺"), ["寺", "版"]);
        // Half-width katakana as full width; a run of two characters is a pair, not lone.
        assert_eq!(lone_pair_characters("ﾀ タワ x"), ["タ"]);
        assert!(lone_pair_characters("plain words").is_empty());
    }

    #[test]
    fn pairs_as_cjk_bigrams() {
        let pairs = pair_list("東京タワー 日");
        let terms: Vec<&str> = pairs.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(terms, ["東京", "京タ", "タワ", "ワー", "日"]);
        assert_eq!(pairs[1].1, "京タ");
        // Half-width katakana read as full width.
        assert_eq!(pair_list("ﾀﾜ")[0].0, "タワ");
    }

    #[test]
    fn terms_by_language() {
        let mut forms = WordForms::new(Revision::V1);
        assert_eq!(forms.term("Häuser", Some(StemLanguage::German)), Some("haus"));
        assert_eq!(forms.term("die", Some(StemLanguage::German)), None);
        assert_eq!(forms.term("die", Some(StemLanguage::English)), Some("die"));
        assert_eq!(forms.term("running", Some(StemLanguage::English)), Some("run"));
        assert_eq!(forms.term("the", Some(StemLanguage::English)), None);
        assert_eq!(forms.term("Café", None), Some("cafe"));
        // A word in other letters than the language's is only normalized.
        assert_eq!(forms.term("Книги", Some(StemLanguage::English)), Some("книги"));
        assert_eq!(forms.term("Книги", Some(StemLanguage::Russian)), Some("книг"));
        assert_eq!(forms.term(&"x".repeat(41), None), None);
        // The cache answers the same.
        assert_eq!(forms.term("Häuser", Some(StemLanguage::German)), Some("haus"));
        // The first revision stems "the city" and "a city" apart; the second as one.
        assert_eq!(forms.term("المدينة", Some(StemLanguage::Arabic)), Some("مدينه"));
        assert_eq!(forms.term("مدينة", Some(StemLanguage::Arabic)), Some("مدين"));
        let mut forms = WordForms::new(Revision::V2);
        assert_eq!(forms.term("المدينة", Some(StemLanguage::Arabic)), Some("مدين"));
        assert_eq!(forms.term("مدينة", Some(StemLanguage::Arabic)), Some("مدين"));
        // A teh marbuta the stemmer leaves is a heh, as before.
        assert_eq!(forms.term("ة", None), Some("ه"));
        assert_eq!(forms.term("İstanbul", Some(StemLanguage::Turkish)), Some("istanbul"));
        // The second revision has no Indonesian stemmer, nor German's `ue` as `ü`.
        assert_eq!(forms.term("bukunya", Some(StemLanguage::Indonesian)), Some("bukunya"));
        assert_eq!(forms.term("Mueller", Some(StemLanguage::German)), Some("muell"));
        let mut forms = WordForms::new(Revision::V3);
        assert_eq!(forms.term("المدينة", Some(StemLanguage::Arabic)), Some("مدين"));
        assert_eq!(forms.term("İstanbul", Some(StemLanguage::Turkish)), Some("istanbul"));
        assert_eq!(forms.term("Mueller", Some(StemLanguage::German)), Some("mull"));
        assert_eq!(forms.term("Müller", Some(StemLanguage::German)), Some("mull"));
        assert_eq!(forms.term("bukunya", Some(StemLanguage::Indonesian)), Some("buku"));
        assert_eq!(forms.term("किताबें", Some(StemLanguage::Hindi)), Some("किताब"));
        // Serbian in either alphabet is one term; its Latin letters' marks fold as others'.
        assert_eq!(forms.term("Градовима", Some(StemLanguage::Serbian)), Some("gradov"));
        assert_eq!(forms.term("gradovima", Some(StemLanguage::Serbian)), Some("gradov"));
        // Polish case endings.
        assert_eq!(forms.term("miastach", Some(StemLanguage::Polish)), Some("miast"));
        // A word not in its row's letters is not stemmed: Latin in a Hindi row.
        assert_eq!(forms.term("Books", Some(StemLanguage::Hindi)), Some("books"));
        // A word of Arabic or Hebrew marks alone (a kasra's isolated form, tatweels, a tsere),
        // and a particle the Nepali stemmer takes whole, are no term.
        assert_eq!(forms.term("\u{FE7B}", Some(StemLanguage::Arabic)), None);
        assert_eq!(forms.term("\u{0640}\u{0640}", None), None);
        assert_eq!(forms.term("\u{05B5}", Some(StemLanguage::Yiddish)), None);
        assert_eq!(forms.term("का", Some(StemLanguage::Nepali)), None);
        let mut earlier = WordForms::new(Revision::V2);
        assert_eq!(earlier.term("\u{FE7B}", Some(StemLanguage::Arabic)), Some(""));
        // The fourth revision leaves default-ignorable characters out of a word's term.
        let mut forms = WordForms::new(Revision::V4);
        let german = Some(StemLanguage::German);
        let plain = forms.term("Donaudampfschiff", german).map(str::to_string);
        assert_eq!(
            forms.term("Donau\u{AD}dampf\u{AD}schiff", german).map(str::to_string),
            plain
        );
        assert_eq!(forms.term("franc\u{327}ais", Some(StemLanguage::French)), Some("franc"));
        assert_eq!(forms.term("ශ්\u{200D}රී", None), Some("ශ්රී"));
        assert_eq!(forms.term("H₂O", None), Some("h2o"));
        assert_eq!(forms.term("\u{34F}", None), None);
    }
}
