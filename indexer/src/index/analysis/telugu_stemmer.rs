//! Telugu's light stemmer, as Lucene's Telugu analyzer reads a word (its `TeluguNormalizer`
//! then its `TeluguStemmer`): spelling variants made one (a long vowel, independent or a
//! sign, as its short one; candrabindu as anusvara; visarga and joiners left out; a
//! diphthong or a vowel written in two parts as its one character), then one ending taken
//! off, the longest that fits: a plural (`ళ్ళు`, `డ్లు`, `లు`), a case or postposition (`ని`,
//! `ను`, `కి`, `లో`, `చే`, `పై`, ...), or a final vowel sign, each only where enough of the word
//! stays. Snowball has no Telugu stemmer.

use std::borrow::Cow;

use super::light_endings::{without_ending, EndingGroups};

/// Endings by group, the longest first (in normal form, as the words are compared): four
/// characters off a word of more than five, two off one of more than three (Lucene's list
/// writes `చే` and `లో` with their long vowels, which its normalizer has made short in every
/// word by then, so they never match there), a vowel sign off one of more than two (long
/// ones are short by then).
const ENDINGS: &EndingGroups = &[
    (5, &["ళ్ళు", "డ్లు"]),
    (
        3,
        &[
            "డు", "ము", "వు", "లు", "ని", "ను", "చె", "కై", "లొ", "ది", "కి", "సు", "వై", "పై",
        ],
    ),
    (2, &["\u{0C3F}", "\u{0C41}", "\u{0C46}", "\u{0C4A}", "\u{0C3E}"]),
];

/// `word`'s stem: its normal form ([`normalize`]) with one ending taken off.
pub fn stem(word: &str) -> Cow<'_, str> {
    without_ending(normalize(word), ENDINGS)
}

/// Telugu's spelling variants made one, in one pass over the word as Lucene's normalizer
/// makes them: the long vowels `ఆ`, `ఈ`, `ఊ`, `ఐ`, `ఔ` and the long vowel signs as their short
/// ones (`ఐ` and `ఔ` as `ఏ` and `ఓ`), candrabindu as anusvara, visarga and joiners left out,
/// `ె` + `ౖ` as `ై`, and `ఒ` + `ౕ` as `ఓ`, `ఒ` + `ౌ` as `ఔ`.
fn normalize(word: &str) -> Cow<'_, str> {
    let pair = |c: char, next: Option<char>| match (c, next) {
        ('\u{0C46}', Some('\u{0C56}')) => Some('\u{0C48}'),
        ('\u{0C12}', Some('\u{0C55}')) => Some('\u{0C13}'),
        ('\u{0C12}', Some('\u{0C4C}')) => Some('\u{0C14}'),
        _ => None,
    };
    let single = |c: char| match c {
        '\u{0C00}' | '\u{0C01}' => Some(Some('\u{0C02}')),
        '\u{0C03}' | '\u{200C}' | '\u{200D}' => Some(None),
        '\u{0C06}' => Some(Some('\u{0C05}')),
        '\u{0C08}' => Some(Some('\u{0C07}')),
        '\u{0C0A}' => Some(Some('\u{0C09}')),
        '\u{0C10}' => Some(Some('\u{0C0F}')),
        '\u{0C14}' => Some(Some('\u{0C13}')),
        '\u{0C40}' => Some(Some('\u{0C3F}')),
        '\u{0C42}' => Some(Some('\u{0C41}')),
        '\u{0C47}' => Some(Some('\u{0C46}')),
        '\u{0C4B}' => Some(Some('\u{0C4A}')),
        _ => None,
    };
    // Most words hold no variant: read them without a copy (a pair begins with `ె` or `ఒ`).
    if word
        .chars()
        .all(|c| single(c).is_none() && !matches!(c, '\u{0C46}' | '\u{0C12}'))
    {
        return Cow::Borrowed(word);
    }
    let chars: Vec<char> = word.chars().collect();
    let mut out = String::with_capacity(word.len());
    let mut i = 0;
    while i < chars.len() {
        if let Some(joined) = pair(chars[i], chars.get(i + 1).copied()) {
            out.push(joined);
            i += 2;
            continue;
        }
        match single(chars[i]) {
            Some(normal) => out.extend(normal),
            None => out.push(chars[i]),
        }
        i += 1;
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn telugu_endings_come_off_and_long_vowels_read_short() {
        for (word, want) in [
            // Plurals and cases: `పుస్తకాలు` ("books"), `పుస్తకంలో` ("in the book"), its `లో`
            // read in normal form.
            ("పుస్తకాలు", "పుస్తకా"),
            ("పుస్తకంలో", "పుస్తకం"),
            ("పిల్లలకి", "పిల్లల"),
            ("అమ్మాయిళ్ళు", "అమ్మాయి"),
            // A final vowel sign, long read as short first: `రాముడు`'s `డు`, `దేవీ` as `దెవి`.
            ("రాముడు", "రాము"),
            ("దేవీ", "దెవ"),
            // Too short to lose anything; visarga and joiners out, candrabindu as anusvara.
            ("లో", "లొ"),
            ("దుఃఖం", "దుఖం"),
            ("క\u{200C}ల", "కల"),
            ("\u{0C01}అ", "\u{0C02}అ"),
        ] {
            assert_eq!(stem(word), want, "{word}");
        }
        // A vowel written in two parts is its one character.
        assert_eq!(normalize("\u{0C12}\u{0C55}"), "\u{0C13}");
        assert_eq!(normalize("క\u{0C46}\u{0C56}"), "క\u{0C48}");
        assert!(matches!(normalize("కల"), Cow::Borrowed(_)));
        for ending in ENDINGS.iter().flat_map(|(_, endings)| endings.iter()) {
            assert_eq!(normalize(ending), *ending, "endings are in normal form");
        }
    }
}
