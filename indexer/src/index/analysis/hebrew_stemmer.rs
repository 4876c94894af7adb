//! Hebrew's attached particles taken off ([`super::Revision::V8`] on). Hebrew writes seven
//! one-letter particles on the front of the word they belong to, several in a row: `ו`
//! ("and"), `ה` ("the"), `ב` ("in"), `כ` ("as"), `ל` ("to"), `מ` ("from") and `ש` ("that"), so
//! "the book" (`הספר`), "in the book" (`בספר`) and "and to the book" (`ולספר`) are one word
//! each, and a search for `ספר` found none of them. Snowball and Lucene have no Hebrew
//! stemmer (Hebrew search engines read words by a dictionary of their forms, as HebMorph
//! does with hspell's). Without one, this stemmer takes those letters off the front while
//! more than three letters stay: Hebrew's words are built on roots of three letters, so a
//! word of three is left whole, and a longer one that begins with one of the seven letters
//! as part of itself loses it too (`שלום`, "peace", is `לום`), as every form of it does,
//! whatever particles they carry: the forms of a word still meet, and it may meet another
//! word's (the cost of a light stemmer, as Arabic's light stemmers take `ال` and `و` off).
//! Points and cantillation are stepped over and kept (they are folded after stemming,
//! [`super::normalize`]); they are no letters.

use std::borrow::Cow;

use super::normalize::is_hebrew_point;

/// The letters of Hebrew's attached particles.
const PARTICLES: [char; 7] = ['ו', 'ה', 'ב', 'כ', 'ל', 'מ', 'ש'];

/// The fewest letters the stemmer leaves: a root's.
const SHORTEST_STEM: usize = 3;

/// `word`'s stem: its leading particle letters taken off while more than
/// [`SHORTEST_STEM`] letters stay.
pub fn stem(word: &str) -> Cow<'_, str> {
    Cow::Borrowed(without_particles(word))
}

/// The bytes of the particles (with their points) [`stem`] takes off the front of `word`.
pub fn particles_len(word: &str) -> usize {
    word.len() - without_particles(word).len()
}

fn without_particles(word: &str) -> &str {
    let mut letters = word.chars().filter(|&c| !is_hebrew_point(c)).count();
    let mut rest = word;
    while letters > SHORTEST_STEM {
        let mut chars = rest.chars();
        match chars.next() {
            Some(first) if PARTICLES.contains(&first) => {}
            _ => break,
        }
        rest = chars.as_str().trim_start_matches(is_hebrew_point);
        letters -= 1;
    }
    rest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn particles_come_off_the_front() {
        for (word, want) in [
            // "the book", "in the book", "and to the book": the book.
            ("הספר", "ספר"),
            ("בספר", "ספר"),
            ("ולספר", "ספר"),
            ("ספר", "ספר"),
            // "and when the children": particles in a row, down to a root's three letters.
            ("וכשהילדים", "ילדים"),
            // A word beginning with one of the letters as part of itself loses it too, as
            // every form of it does: "peace", "and peace", "in peace" meet.
            ("שלום", "לום"),
            ("ושלום", "לום"),
            ("בשלום", "לום"),
            // Three letters stay whole, and so does a shorter word.
            ("מלך", "מלך"),
            ("בן", "בן"),
            ("ב", "ב"),
            ("", ""),
            // Points are stepped over and kept; they are no letters.
            ("הַסֵּפֶר", "סֵּפֶר"),
            ("וְהַבַּיִת", "בַּיִת"),
            // A word of other letters (digits after a particle) keeps what is not Hebrew.
            ("ב2024", "2024"),
        ] {
            assert_eq!(stem(word), want, "{word}");
        }
    }

    #[test]
    fn the_particles_length_counts_their_points() {
        assert_eq!(particles_len("העוגיות"), "ה".len());
        assert_eq!(particles_len("וְהַבַּיִת"), "וְהַ".len());
        assert_eq!(particles_len("ספר"), 0);
    }

    /// Every word of up to four of the letters the stemmer reads, points between: no panic,
    /// never longer, never fewer than three letters taken down to.
    #[test]
    fn every_short_word_is_read() {
        let words = super::super::every_word(&['ו', 'ה', 'ב', 'ש', 'א', 'ך', '\u{05B8}', '\u{05BC}'], 4);
        for word in &words {
            let stem = stem(word);
            assert!(word.ends_with(stem.as_ref()), "{word} {stem}");
            let letters = |text: &str| text.chars().filter(|&c| !is_hebrew_point(c)).count();
            assert!(letters(&stem) >= letters(word).min(SHORTEST_STEM), "{word} {stem}");
        }
    }
}
