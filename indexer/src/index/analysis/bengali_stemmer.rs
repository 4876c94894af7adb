//! Bengali's light stemmer, as Lucene's Bengali analyzer reads a word (its `BengaliNormalizer`
//! then its `BengaliStemmer`): spellings that sound alike made one (UzZaman and Khan's
//! phonetic reading: long `ী` and `ূ` signs as short, chandrabindu out, the three sibilants as
//! `স`, `ণ` as `ন`, `ড়` and `ঢ়` as `র`, khanda ta as `ত`, `ঙ` as anusvara, a `য` or `ব` joined
//! below a consonant, ja-phala and ba-phala, read as the sound they make, a visarga as the
//! letter it doubles), then one ending taken off, the longest that fits: the verb endings of
//! Sengupta and Chaudhuri's analysis (`িয়াছিলাম`, `ছিলেন`, `লাম`, `তে`, ...), plural and case
//! endings (`দের`, `গুলো`, `রা`, `কে`, `ের`), classifiers (`টা`, `টি`, `খানা`) or a final vowel
//! sign, each only where enough of the word stays. Snowball has no Bengali stemmer.
//!
//! Two departures from Lucene's code, both where its rules cannot fire: its rule for `ক্ষ`
//! looks for a vowel sign `ি` after the virama where the sibilant `ষ` stands, so it never
//! matches; here `ক্ষ` reads as `খ` (`কখ` inside a word), as its comment says. And its
//! endings are compared before nothing normalizes them, so the ending `ী` (its normalizer has
//! made every `ী` an `ি`) never matches; here every ending is in the words' normal form, and
//! `য়` is written as NFKC leaves it, `য` and nukta.

use std::borrow::Cow;

use super::light_endings::{without_ending, EndingGroups};

const VIRAMA: char = '\u{09CD}';
const NUKTA: char = '\u{09BC}';

/// Endings by group, each group taken off a word of more characters than its `more_than`,
/// groups tried in order (Lucene's, longest first). Written in normal form.
const ENDINGS: &EndingGroups = &[
    (
        9,
        &[
            "িয\u{09BC}াছিলাম",
            "িতেছিলাম",
            "িতেছিলেন",
            "ইতেছিলেন",
            "িয\u{09BC}াছিলেন",
            "ইয\u{09BC}াছিলেন",
        ],
    ),
    (
        8,
        &[
            "িতেছিলি",
            "িতেছিলে",
            "িয\u{09BC}াছিলা",
            "িয\u{09BC}াছিলে",
            "িতেছিলা",
            "িয\u{09BC}াছিলি",
            "য\u{09BC}েদেরকে",
        ],
    ),
    (
        7,
        &[
            "িতেছিস",
            "িতেছেন",
            "িয\u{09BC}াছিস",
            "িয\u{09BC}াছেন",
            "েছিলাম",
            "েছিলেন",
            "েদেরকে",
        ],
    ),
    (
        6,
        &[
            "িতেছি",
            "িতেছা",
            "িতেছে",
            "ছিলাম",
            "ছিলেন",
            "িয\u{09BC}াছি",
            "িয\u{09BC}াছা",
            "িয\u{09BC}াছে",
            "েছিলে",
            "েছিলা",
            "য\u{09BC}েদের",
            "দেরকে",
        ],
    ),
    (
        5,
        &[
            "িলাম",
            "িলেন",
            "িতাম",
            "িতেন",
            "িবেন",
            "ছিলি",
            "ছিলে",
            "ছিলা",
            "তেছে",
            "িতেছ",
            "খানা",
            "খানি",
            "গুলো",
            "গুলি",
            "য\u{09BC}েরা",
            "েদের",
        ],
    ),
    (
        4,
        &[
            "লাম",
            "িলি",
            "ইলি",
            "িলে",
            "ইলে",
            "লেন",
            "িলা",
            "ইলা",
            "তাম",
            "িতি",
            "ইতি",
            "িতে",
            "ইতে",
            "তেন",
            "িতা",
            "িবা",
            "ইবা",
            "িবি",
            "ইবি",
            "বেন",
            "িবে",
            "ইবে",
            "ছেন",
            "য\u{09BC}োন",
            "য\u{09BC}ের",
            "েরা",
            "দের",
        ],
    ),
    (
        3,
        &[
            "িস", "েন", "লি", "লে", "লা", "তি", "তে", "তা", "বি", "বে", "বা", "ছি", "ছা", "ছে", "ুন", "ুক", "টা", "টি", "নি",
            "ের", "রা", "কে",
        ],
    ),
    (2, &["ি", "া", "ো", "ে", "ব", "ত"]),
];

/// `word`'s stem: its normal form ([`normalize`]) with one ending taken off.
pub fn stem(word: &str) -> Cow<'_, str> {
    without_ending(normalize(word), ENDINGS)
}

/// Whether [`normalize`] may change a word holding `c` (its rules for `ক`, `য` and `ব` read
/// them after a virama only).
fn changes(c: char) -> bool {
    matches!(
        c,
        '\u{0981}'
            | '\u{0983}'
            | '\u{0999}'
            | '\u{09A3}'
            | '\u{09B6}'
            | '\u{09B7}'
            | NUKTA
            | '\u{09C0}'
            | '\u{09C2}'
            | VIRAMA
            | '\u{09CE}'
            | '\u{09DC}'
            | '\u{09DD}'
    )
}

/// Bengali's spellings that sound alike made one, in one pass over the word from its start
/// as Lucene's normalizer makes them (each rule reads the word as the rules before have left
/// it).
fn normalize(word: &str) -> Cow<'_, str> {
    if !word.chars().any(changes) {
        return Cow::Borrowed(word);
    }
    let mut s: Vec<char> = word.chars().collect();
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            // Chandrabindu out.
            '\u{0981}' => {
                s.remove(i);
                continue;
            }
            // Long i and u signs as short.
            '\u{09C0}' => s[i] = '\u{09BF}',
            '\u{09C2}' => s[i] = '\u{09C1}',
            // Khio (ka, virama, ssa) as kha: at the start the three letters, inside a word
            // the virama and ssa (ka stays, the sound doubled).
            '\u{0995}' if s.get(i + 1) == Some(&VIRAMA) && s.get(i + 2) == Some(&'\u{09B7}') => {
                if i == 0 {
                    s.splice(0..3, ['\u{0996}']);
                } else {
                    s.splice(i + 1..i + 3, ['\u{0996}']);
                    i += 1;
                }
            }
            // Nga as anusvara.
            '\u{0999}' => s[i] = '\u{0982}',
            // Ja-phala: after the word's first consonant as the vowel sign e (an aa sign after
            // it dropped too); elsewhere left out with its virama.
            '\u{09AF}' if i >= 1 && s[i - 1] == VIRAMA && s.get(i + 1) != Some(&NUKTA) => {
                if i == 2 {
                    s[1] = '\u{09C7}';
                    let end = if s.get(3) == Some(&'\u{09BE}') { 4 } else { 3 };
                    s.drain(2..end);
                    continue;
                }
                s.drain(i - 1..=i);
                i -= 1;
                continue;
            }
            // Ba-phala: after the word's first consonant, or after a conjunct further in, left
            // out with its virama; after another consonant, that consonant doubled.
            '\u{09AC}' if i >= 1 && s[i - 1] == VIRAMA => {
                if i == 2 || (i >= 5 && s[i - 3] == VIRAMA) {
                    s.drain(i - 1..=i);
                    i -= 1;
                    continue;
                }
                if i >= 2 {
                    s[i - 1] = s[i - 2];
                    s.remove(i);
                    continue;
                }
            }
            // Visarga: at the end of a short word as ha, of a longer one left out; inside a
            // word as the letter after it (the sound doubled).
            '\u{0983}' => {
                if i + 1 < s.len() {
                    s[i] = s[i + 1];
                } else if s.len() <= 3 {
                    s[i] = '\u{09B9}';
                } else {
                    s.remove(i);
                    continue;
                }
            }
            // The sibilants as sa, retroflex na as na, khanda ta as ta.
            '\u{09B6}' | '\u{09B7}' => s[i] = '\u{09B8}',
            '\u{09A3}' => s[i] = '\u{09A8}',
            '\u{09CE}' => s[i] = '\u{09A4}',
            // Rra and rha (NFKC writes them as dda and ddha with a nukta) as ra.
            '\u{09DC}' | '\u{09DD}' => s[i] = '\u{09B0}',
            '\u{09A1}' | '\u{09A2}' if s.get(i + 1) == Some(&NUKTA) => {
                s.splice(i..i + 2, ['\u{09B0}']);
            }
            _ => {}
        }
        i += 1;
    }
    Cow::Owned(s.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use unicode_normalization::UnicodeNormalization;

    fn stem_of(word: &str) -> String {
        // Words reach the stemmer NFKC-normalized.
        stem(&word.nfkc().collect::<String>()).into_owned()
    }

    #[test]
    fn bengali_endings_come_off_and_sounds_read_alike() {
        for (word, want) in [
            // Plurals and cases: `ছেলেরা` ("the boys"), `ছেলেদের` ("of the boys"),
            // `বইগুলো` ("the books"), `বাড়িতে` ("at home", its `ড়` read as `র`) and `বাড়ি`.
            ("ছেলেরা", "ছেল"),
            ("ছেলেদের", "ছেল"),
            ("বইগুলো", "বই"),
            ("বাড়িতে", "বার"),
            ("বাড়ি", "বার"),
            // Verbs: `করেছিলাম` ("I had done"), `করছিলেন`, `যাচ্ছিলাম`.
            ("করেছিলাম", "কর"),
            ("করছিলেন", "কর"),
            // Sibilants as `স`, `ণ` as `ন`: `দেশ` ("country"), `গণনা` ("counting").
            ("দেশ", "দেস"),
            ("গণনা", "গনন"),
            // Ja-phala after the first consonant as `ে`; ba-phala left out; chandrabindu out.
            ("ব্যাংক", "বেংক"),
            ("স্বাধীন", "সাধিন"),
            ("চাঁদ", "চাদ"),
            // Khio as kha.
            ("ক্ষমা", "খম"),
            ("পক্ষে", "পকখ"),
            // Too short to lose anything.
            ("বই", "বই"),
            ("মা", "মা"),
        ] {
            assert_eq!(stem_of(word), want, "{word}");
        }
        // The forms of one word meet.
        for family in [["বাংলাদেশ", "বাংলাদেশের", "বাংলাদেশে"], ["শিক্ষক", "শিক্ষকেরা", "শিক্ষকদের"]]
        {
            let stems: Vec<String> = family.iter().map(|w| stem_of(w)).collect();
            assert!(stems.iter().all(|s| *s == stems[0]), "{family:?}: {stems:?}");
        }
        assert!(matches!(normalize("বই"), Cow::Borrowed(_)));
        assert!(matches!(stem("বই"), Cow::Borrowed(_)));
        for (_, endings) in ENDINGS.iter() {
            for ending in endings.iter() {
                assert_eq!(normalize(ending), *ending, "endings are in normal form");
            }
        }
    }

    /// Every word of up to four of the letters and signs the rules read (viramas, ya, ba, ka,
    /// ssa, visarga and nukta at a word's start, middle and end), and longer ones built from
    /// them, is read without a panic and never grows.
    #[test]
    fn any_word_is_read_and_none_grows() {
        const LETTERS: [char; 14] = [
            '\u{0995}', VIRAMA, '\u{09AF}', '\u{09AC}', '\u{09B7}', '\u{0983}', NUKTA, '\u{09A1}', '\u{09BE}',
            '\u{0981}', '\u{09BF}', '\u{09C7}', '\u{0999}', '\u{09B0}',
        ];
        let mut word = String::new();
        for n in 0..LETTERS.len().pow(4) {
            word.clear();
            let mut rest = n;
            for _ in 0..4 {
                word.push(LETTERS[rest % LETTERS.len()]);
                rest /= LETTERS.len();
            }
            for end in 1..=word.chars().count() {
                let part: String = word.chars().take(end).collect();
                assert!(normalize(&part).chars().count() <= end, "{part:?}");
                assert!(stem(&part).chars().count() <= end, "{part:?}");
            }
            let long = word.repeat(5);
            assert!(stem(&long).chars().count() <= long.chars().count(), "{long:?}");
        }
    }
}
