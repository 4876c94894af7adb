//! Typing errors made on purpose, for the "did you mean" benchmark (`bench-suggest`): one
//! error in a word — two neighbours swapped, a letter left out, doubled or changed to its
//! neighbour in the alphabet — chosen by a seed, never at the word's first letter (where
//! people rarely slip), so each run mistypes the same words the same way.

/// A small seeded generator (64-bit linear congruential, Knuth's constants): enough to pick
/// error kinds and places reproducibly.
pub struct Seeded(u64);

impl Seeded {
    pub fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407))
    }

    /// A number below `n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n as u64) as usize
    }
}

/// `word` with one typing error (None: a word of fewer than 4 characters). The result may
/// happen to be another real word; the caller checks.
pub fn mistype(word: &str, draw: &mut Seeded) -> Option<String> {
    let mut chars: Vec<char> = word.chars().collect();
    if chars.len() < 4 {
        return None;
    }
    // A place after the first letter with a letter after it.
    let at = 1 + draw.below(chars.len() - 2);
    match draw.below(4) {
        0 if chars[at] != chars[at + 1] => chars.swap(at, at + 1),
        1 => {
            chars.remove(at);
        }
        2 => chars.insert(at, chars[at]),
        _ => {
            let c = chars[at];
            chars[at] = match c {
                'z' => 'y',
                'Z' => 'Y',
                c if c.is_ascii_alphabetic() => (c as u8 + 1) as char,
                c => char::from_u32(c as u32 + 1).unwrap_or(c),
            };
        }
    }
    Some(chars.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_mistyped_word_is_one_typing_error_away_and_keeps_its_first_letter() {
        let mut draw = Seeded::new(7);
        for word in ["temperature", "Hydrogen", "über", "ferry", "mississippi", "Straße"] {
            for _ in 0..50 {
                let typed = mistype(word, &mut draw).unwrap();
                let errors = quarry_indexer::index::TypingErrors::from(word).to(&typed);
                // A swap of two equal neighbours changes nothing: the draw then changes a letter.
                assert_eq!(errors, Some(1), "{word} -> {typed}");
                assert_eq!(typed.chars().next(), word.chars().next(), "{word} -> {typed}");
            }
        }
        assert_eq!(mistype("sea", &mut draw), None);
        let (mut a, mut b) = (Seeded::new(3), Seeded::new(3));
        assert_eq!(mistype("reproducible", &mut a), mistype("reproducible", &mut b));
    }
}
