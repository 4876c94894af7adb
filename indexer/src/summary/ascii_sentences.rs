//! Unicode's sentences (UAX #29) of an ASCII text, as `unicode-segmentation` 1.13's
//! `unicode_sentences` gives them, without its per-character search of the Unicode tables:
//! the same state machine (ported from its `sentence.rs`, MIT / Apache-2.0) over the ASCII
//! characters' sentence break categories, read from a match. Most prose of most corpora is
//! ASCII, and that search was most of the cost of cutting a document into sentences; any
//! other text takes the crate's path. The test compares both on seeded texts over every
//! ASCII character and on every paragraph of the sample corpus.

/// A character's sentence break category (those ASCII characters have: no OLetter, Sep,
/// Extend or Format among them).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Category {
    Other,
    Cr,
    Lf,
    Sp,
    Lower,
    Upper,
    Numeric,
    ATerm,
    STerm,
    Close,
    SContinue,
}

/// The categories of the ASCII characters (Unicode's SentenceBreakProperty, as the crate's tables have them).
fn category(byte: u8) -> Category {
    match byte {
        b'\t' | 0x0b | 0x0c | b' ' => Category::Sp,
        b'\n' => Category::Lf,
        b'\r' => Category::Cr,
        b'!' | b'?' => Category::STerm,
        b'.' => Category::ATerm,
        b'"' | b'\'' | b'(' | b')' | b'[' | b']' | b'{' | b'}' => Category::Close,
        b',' | b'-' | b':' | b';' => Category::SContinue,
        b'0'..=b'9' => Category::Numeric,
        b'A'..=b'Z' => Category::Upper,
        b'a'..=b'z' => Category::Lower,
        _ => Category::Other,
    }
}

/// What the machine remembers of the characters before (the crate's `StatePart`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Part {
    Sot,
    Other,
    Cr,
    Lf,
    ATerm,
    UpperLower,
    ClosePlus,
    SpPlus,
    STerm,
}

/// The last four parts, the latest last.
type State = [Part; 4];

fn advance(state: State, category: Category) -> State {
    match (state[3], category) {
        (Part::ClosePlus, Category::Close) | (Part::SpPlus, Category::Sp) => state,
        _ => [
            state[1],
            state[2],
            state[3],
            match category {
                Category::Cr => Part::Cr,
                Category::Lf => Part::Lf,
                Category::ATerm => Part::ATerm,
                Category::Upper | Category::Lower => Part::UpperLower,
                Category::Close => Part::ClosePlus,
                Category::Sp => Part::SpPlus,
                Category::STerm => Part::STerm,
                _ => Part::Other,
            },
        ],
    }
}

/// The part before the trailing spaces and closing marks (SB8's and SB8a's `SATerm Close* Sp*`).
fn before_close_and_spaces(state: &State) -> Part {
    let mut at = if state[3] == Part::SpPlus { 2 } else { 3 };
    if state[at] == Part::ClosePlus {
        at -= 1;
    }
    state[at]
}

/// SB8: after `ATerm Close* Sp*`, no break when a lower-case letter comes before any letter,
/// terminal or line break (`ahead` starts at the character being placed).
fn sb8(state: &State, ahead: &[u8]) -> bool {
    if before_close_and_spaces(state) != Part::ATerm {
        return false;
    }
    for &byte in ahead {
        match category(byte) {
            Category::Lower => return true,
            Category::Upper | Category::Cr | Category::Lf | Category::STerm | Category::ATerm => return false,
            _ => continue,
        }
    }
    false
}

fn sb8a(state: &State) -> bool {
    matches!(before_close_and_spaces(state), Part::STerm | Part::ATerm)
}

fn sb9(state: &State) -> bool {
    let at = if state[3] == Part::ClosePlus { 2 } else { 3 };
    matches!(state[at], Part::STerm | Part::ATerm)
}

fn sb11(state: &State) -> bool {
    let mut at = match state[3] {
        Part::Cr | Part::Lf => 2,
        _ => 3,
    };
    if state[at] == Part::SpPlus {
        at -= 1;
    }
    if state[at] == Part::ClosePlus {
        at -= 1;
    }
    matches!(state[at], Part::STerm | Part::ATerm)
}

/// Whether there is a sentence boundary before the character of `category` that starts
/// `ahead`, `before` being the state after the characters before it.
fn breaks_before(before: &State, category: Category, ahead: &[u8]) -> bool {
    use Category as C;
    if before[3] == Part::Sot {
        return true;
    }
    if category == C::Lf && before[3] == Part::Cr {
        return false;
    }
    if matches!(before[3], Part::Cr | Part::Lf) {
        return true;
    }
    if category == C::Numeric && before[3] == Part::ATerm {
        return false;
    }
    if category == C::Upper && before[2] == Part::UpperLower && before[3] == Part::ATerm {
        return false;
    }
    if sb8(before, ahead) {
        return false;
    }
    if matches!(category, C::SContinue | C::STerm | C::ATerm) && sb8a(before) {
        return false;
    }
    if matches!(category, C::Close | C::Sp | C::Cr | C::Lf) && sb9(before) {
        return false;
    }
    if matches!(category, C::Sp | C::Cr | C::Lf) && sb8a(before) {
        return false;
    }
    sb11(before)
}

/// The sentences of the ASCII `text` that hold a letter or digit, in order (what
/// `unicode_sentences` gives).
pub fn ascii_sentences(text: &str) -> Vec<&str> {
    debug_assert!(text.is_ascii());
    let bytes = text.as_bytes();
    let mut bounds = Vec::new();
    let mut state: State = [Part::Sot; 4];
    for (at, &byte) in bytes.iter().enumerate() {
        let category = category(byte);
        let before = state;
        state = advance(state, category);
        if breaks_before(&before, category, &bytes[at..]) {
            bounds.push(at);
        }
    }
    if !bytes.is_empty() {
        bounds.push(bytes.len());
    }
    bounds
        .windows(2)
        .map(|pair| &text[pair[0]..pair[1]])
        .filter(|sentence| sentence.bytes().any(|b| b.is_ascii_alphanumeric()))
        .collect()
}

#[cfg(test)]
mod tests {
    use unicode_segmentation::UnicodeSegmentation;

    use super::*;

    fn crate_sentences(text: &str) -> Vec<&str> {
        text.unicode_sentences().collect()
    }

    /// Seeded texts over every ASCII character, prose-like characters more often.
    fn seeded_texts(count: usize) -> Vec<String> {
        let mut state = 0x5e47_e4ce_u64;
        let mut next = move |below: usize| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 33) as usize) % below
        };
        const PROSE: &[u8] = b"aaaeeiounrstlhAEIOTNS .... ??!!,,;:--\"\"''()[]{}  \t\n\r0123456789";
        (0..count)
            .map(|_| {
                let length = next(120);
                (0..length)
                    .map(|_| match next(4) {
                        0 => next(128) as u8 as char,
                        _ => PROSE[next(PROSE.len())] as char,
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn ascii_texts_get_the_crate_s_sentences() {
        let mut texts = seeded_texts(40_000);
        texts.extend(
            [
                "",
                " ",
                ".",
                "Mr. Smith went to Washington. He saw the U.S. Capitol.",
                "etc. and more. It was (quite) good.\" Then: \"Yes!\"  ok",
                "Version 2.5 is out... see e.g. the notes. 3. Item",
                "He said \"stop.\" then left.\r\nNew line here.\n\nParagraph.",
                "a.b.c. D.E. f",
            ]
            .map(String::from),
        );
        for text in &texts {
            assert_eq!(ascii_sentences(text), crate_sentences(text), "{text:?}");
        }
    }

    #[test]
    fn every_ascii_text_of_the_shared_datasets_gets_the_crate_s_sentences() {
        let shared = std::env::var_os("QUARRY_SHARED_DIR")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared"));
        let mut compared = 0;
        for set in ["msmarco-5k", "cranfield-en", "xquadr-de", "jsquad-ja"] {
            let corpus = std::fs::read_to_string(shared.join("datasets").join(set).join("corpus.jsonl")).unwrap();
            for line in corpus.lines() {
                let row: serde_json::Value = serde_json::from_str(line).unwrap();
                let text = row["text"].as_str().unwrap_or_default();
                if text.is_ascii() {
                    assert_eq!(ascii_sentences(text), crate_sentences(text), "{set}: {text:?}");
                    compared += 1;
                }
            }
        }
        assert!(compared > 5_000, "{compared} texts");
    }
}
