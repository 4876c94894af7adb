//! Persian's light stemmer, as Lucene's Persian analyzer stems (its `PersianStemmer`): the
//! common suffixes taken off in turn, each only where at least two letters stay: the plural
//! endings `ها`, `ان` and (of Arabic loans) `ات`, the comparative `تر` and superlative `ترین`,
//! and the `ی` of the indefinite, the ezafe and adjectives of place (`ایرانی`). Snowball has
//! no Persian stemmer. Words come normalized ([`super::normalize`]): Persian's yeh is Arabic's
//! (U+064A), and a suffix written after a zero-width non-joiner (`کتاب‌ها`) is a word of its own
//! already.

use std::borrow::Cow;

/// The suffixes, in the order they are taken off (normalized: yeh as U+064A).
const SUFFIXES: [&str; 7] = ["ات", "ان", "ترين", "تر", "يي", "ي", "ها"];

/// The fewest letters a suffix leaves.
const SHORTEST_STEM: usize = 2;

/// `word`'s stem.
pub fn stem(word: &str) -> Cow<'_, str> {
    let mut stem = word;
    for suffix in SUFFIXES {
        if let Some(rest) = stem.strip_suffix(suffix) {
            if rest.chars().count() >= SHORTEST_STEM {
                stem = rest;
            }
        }
    }
    Cow::Borrowed(stem)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn persian_suffixes_come_off() {
        for (word, want) in [
            ("كتابها", "كتاب"),
            ("كتابهاي", "كتاب"),
            ("درختان", "درخت"),
            ("اطلاعات", "اطلاع"),
            ("بزرگتر", "بزرگ"),
            ("بزرگترين", "بزرگ"),
            ("ايراني", "ايران"),
            // Two letters stay at least; a word of no suffix is itself.
            ("ها", "ها"),
            ("مان", "مان"),
            ("كتاب", "كتاب"),
        ] {
            assert_eq!(stem(word), want, "{word}");
        }
    }
}
