//! Words cut to their first five letters ([`super::Revision::V9`] on): the stem of the
//! languages that inflect by endings and that neither Snowball nor Lucene has a stemmer
//! for (Ukrainian, Belarusian, Bulgarian, Macedonian, Slovak, Slovenian, Latvian,
//! Azerbaijani, Uzbek, Turkmen, Afrikaans, Latin: [`super::StemLanguage::truncates`]). A
//! word's endings come after its first letters, so its forms share them: Ukrainian's
//! `україна`, `україни`, `україні`, `україною` ("Ukraine" in four cases) are all `украї`.
//! Truncation is the stemmer that needs no knowledge of the language (McNamee, Nicholas
//! and Mayfield, "Addressing morphological variation in alphabetic languages", SIGIR 2009:
//! five letters as good as Snowball's stemmers on average over European languages, far
//! better than words left whole). Measured before it was taken, on languages it is not
//! used for (bench/RESULTS.md): nDCG@10 of BM25 over seven XQuAD sets with words cut to
//! five letters, against words left whole and against Snowball's stemmer of each, was above
//! whole words on all seven and within 0.01 of Snowball or above it on all seven. Its cost,
//! as every light stemmer's: two words that begin alike meet (`шевченко`, `шевчук`).
//!
//! A word holding a digit is left whole (`iphone14` and `iphone15` are two products, not
//! one word's forms), and so is a word of five letters or fewer. Marks after a letter (a
//! combining accent in a text not composed) go with it and count as no letter.

use std::borrow::Cow;

use unicode_normalization::char::is_combining_mark;

use super::script::is_apostrophe_after_cyrillic;
use super::Revision;

/// The letters a word is cut to.
pub const KEPT_LETTERS: usize = 5;

/// `word` cut to its first [`KEPT_LETTERS`] letters and their marks, unless it holds a digit.
pub fn stem(word: &str) -> Cow<'_, str> {
    Cow::Borrowed(first_letters(word, |_, _| true))
}

/// The end of a word's first letters as typed (did you mean keeps what is typed after them),
/// as `revision` cuts its term: from [`Revision::V10`] on an apostrophe after a Cyrillic
/// letter is no letter (the term leaves it out: `Пам'яттю`'s are `Пам'ят`).
pub fn typed_end(word: &str, revision: Revision) -> usize {
    let apostrophes_count = revision < Revision::V10;
    first_letters(word, |before, c| {
        apostrophes_count || !is_apostrophe_after_cyrillic(before, c)
    })
    .len()
}

/// `word` cut to its first [`KEPT_LETTERS`] letters, a character counting as one where
/// `is_letter(the letter before, it)` and it is no mark (marks go with the letter before);
/// whole where it holds a digit.
fn first_letters(word: &str, is_letter: impl Fn(char, char) -> bool) -> &str {
    if word.chars().any(char::is_numeric) {
        return word;
    }
    let (mut letters, mut before) = (0, ' ');
    for (at, c) in word.char_indices() {
        if is_combining_mark(c) {
            continue;
        }
        if is_letter(before, c) {
            if letters == KEPT_LETTERS {
                return &word[..at];
            }
            letters += 1;
        }
        before = c;
    }
    word
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_cut_to_five_letters() {
        for (word, want) in [
            // Ukrainian: "Ukraine" in four cases meet.
            ("україна", "украї"),
            ("україни", "украї"),
            ("україною", "украї"),
            // Slovak "Bratislava" in three cases.
            ("bratislava", "brati"),
            ("bratislave", "brati"),
            ("bratislavy", "brati"),
            // Latvian "city", "of the city", "in the cities".
            ("pilsēta", "pilsē"),
            ("pilsētas", "pilsē"),
            ("pilsētās", "pilsē"),
            // Five letters or fewer stay whole.
            ("дім", "дім"),
            ("", ""),
            // A word holding a digit stays whole.
            ("iphone14", "iphone14"),
            ("covid19", "covid19"),
            ("2024", "2024"),
            // A combining mark goes with its letter and counts as none.
            ("me\u{301}sta\u{301}ch", "me\u{301}sta\u{301}"),
            ("abcde\u{301}fgh", "abcde\u{301}"),
        ] {
            assert_eq!(stem(word), want, "{word}");
        }
    }

    /// A typed word's first letters end where its term's do: an apostrophe inside a Cyrillic
    /// word counts as no letter from the tenth revision on.
    #[test]
    fn typed_words_first_letters_end_after_five_letters() {
        assert_eq!(typed_end("Пам'яттю", Revision::V10), "Пам'ят".len());
        assert_eq!(typed_end("Пам’яттю", Revision::V10), "Пам’ят".len());
        assert_eq!(typed_end("Пам'яттю", Revision::V9), "Пам'я".len());
        assert_eq!(typed_end("України", Revision::V10), "Украї".len());
        assert_eq!(typed_end("maʼnolar", Revision::V10), "maʼno".len());
        assert_eq!(typed_end("Дім", Revision::V10), "Дім".len());
        assert_eq!(typed_end("iphone14", Revision::V10), "iphone14".len());
    }

    /// Every word of up to six characters from letters, a mark and a digit: a prefix of
    /// itself, at most five letters, and whole when it holds a digit or is short.
    #[test]
    fn every_short_word_is_a_prefix_of_itself() {
        let words = super::super::every_word(&['a', 'ž', 'д', '\u{301}', '7'], 6);
        let letters = |text: &str| text.chars().filter(|&c| !is_combining_mark(c)).count();
        for word in &words {
            let stem = stem(word);
            assert!(word.starts_with(stem.as_ref()), "{word} {stem}");
            if word.contains('7') || letters(word) <= KEPT_LETTERS {
                assert_eq!(stem, word.as_str());
            } else {
                assert_eq!(letters(&stem), KEPT_LETTERS, "{word} {stem}");
                assert!(!word[stem.len()..].starts_with('\u{301}'), "{word} {stem}");
            }
        }
    }
}
