//! Words a PDF hyphenates at a line's end, made whole again. Typesetting breaks a long word
//! over two lines with a hyphen (`Donau-` / `dampfschiff`, `infor-` / `mation`); read as
//! drawn, that is two words, and neither lane finds `Donaudampfschiff` or `information`. A
//! line that ends in a letter and a hyphen, followed on the same page by a line of the same
//! size that begins with a lowercase letter, gets that line's first word back. Whether the
//! hyphen stays is read from the document itself, as no dictionary can say it for every
//! language: where the document writes the word with a hyphen elsewhere (`well-known`) more
//! often than without (`wellknown`), or the part before the break already holds a hyphen
//! (`state-of-the-` / `art`), the hyphen is the word's own and stays; otherwise it was a
//! break and goes. A soft hyphen (U+00AD) always goes: it marks only where a word may break.

use std::collections::HashMap;

use unicode_normalization::char::is_combining_mark;

use super::pdf_headings::PageLines;
use super::pdf_text::Line;

/// Characters drawn at a line's end where a word breaks: the hyphen-minus, Unicode's hyphen
/// and the soft hyphen.
const BREAK_HYPHENS: [char; 3] = ['-', '\u{2010}', '\u{AD}'];

/// Joins, page by page, every word hyphenated at a line's end (see the module's notes). A
/// line whose only word went up to the line before is left out, so no blank line (a
/// paragraph's end) appears where there was none.
pub fn join_hyphenated_words(pages: &mut [PageLines]) {
    let spellings = Spellings::of(pages);
    for page in pages.iter_mut() {
        let mut lines: Vec<Line> = Vec::with_capacity(page.lines.len());
        for mut line in std::mem::take(&mut page.lines) {
            if let Some(last) = lines.last_mut() {
                if let Some(found) = break_between(&last.text, &line.text, last.size_key() == line.size_key()) {
                    let keep = found.keeps_hyphen(&spellings);
                    let (first, rest) = split_first_word(&line.text);
                    last.text.truncate(found.hyphen_at);
                    if keep {
                        last.text.push('-');
                    }
                    last.text.push_str(first);
                    // The word that came up may itself end in a break, with the next line.
                    if rest.is_empty() {
                        continue;
                    }
                    line.text = rest.to_string();
                }
            }
            lines.push(line);
        }
        page.lines = lines;
    }
}

/// A word broken between two lines: where the hyphen ends the first, and the word's two
/// parts as the document spells them elsewhere (lowercase), with and without the hyphen.
struct Break {
    hyphen_at: usize,
    soft: bool,
    compound_before: bool,
    joined: String,
    hyphenated: String,
}

impl Break {
    fn keeps_hyphen(&self, spellings: &Spellings) -> bool {
        !self.soft && (self.compound_before || spellings.count(&self.hyphenated) > spellings.count(&self.joined))
    }
}

/// The break between `line` and `next` (drawn at the same size where `same_size`), if `line`
/// ends in a letter and a hyphen and `next` begins with a lowercase letter.
fn break_between(line: &str, next: &str, same_size: bool) -> Option<Break> {
    if !same_size {
        return None;
    }
    let (hyphen_at, hyphen) = line.char_indices().next_back()?;
    if !BREAK_HYPHENS.contains(&hyphen) {
        return None;
    }
    let before = &line[..hyphen_at];
    if !before.chars().next_back()?.is_alphabetic() {
        return None;
    }
    let after = next.trim_start();
    if !after.chars().next()?.is_lowercase() {
        return None;
    }
    let left = trailing_word(before);
    let right = leading_word(after);
    Some(Break {
        hyphen_at,
        soft: hyphen == '\u{AD}',
        compound_before: left.contains(is_hyphen),
        joined: spelling(&format!("{left}{right}")),
        hyphenated: spelling(&format!("{left}-{right}")),
    })
}

/// How often the document writes each way a broken word could be spelt (lowercase, a
/// hyphen as `-`): only those ways are counted, in one pass over its text.
struct Spellings {
    counts: HashMap<String, u32>,
}

impl Spellings {
    fn of(pages: &[PageLines]) -> Self {
        let mut counts = HashMap::new();
        for pair in pages.iter().flat_map(|page| page.lines.windows(2)) {
            if let Some(found) = break_between(&pair[0].text, &pair[1].text, pair[0].size_key() == pair[1].size_key()) {
                counts.insert(found.joined, 0);
                counts.insert(found.hyphenated, 0);
            }
        }
        if !counts.is_empty() {
            for line in pages.iter().flat_map(|page| &page.lines) {
                for (_, word) in words(&line.text) {
                    if let Some(count) = counts.get_mut(&spelling(word)) {
                        *count += 1;
                    }
                }
            }
        }
        Self { counts }
    }

    fn count(&self, spelling: &str) -> u32 {
        self.counts.get(spelling).copied().unwrap_or(0)
    }
}

/// A word as [`Spellings`] counts it: lowercase, Unicode's hyphen as `-`.
fn spelling(word: &str) -> String {
    word.to_lowercase().replace('\u{2010}', "-")
}

fn is_hyphen(c: char) -> bool {
    c == '-' || c == '\u{2010}'
}

/// A character of a word as [`Spellings`] reads words: a letter, digit or mark.
fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || is_combining_mark(c)
}

/// The longest part of a word before a break weighed, in bytes (a longer one is weighed by
/// its end): a line of endless "words" costs no more to read than one of words.
const MAX_WORD_BYTES: usize = 256;

/// The word `text` ends with: its last run of word characters and hyphens between them, read
/// backwards, at most [`MAX_WORD_BYTES`] of it.
fn trailing_word(text: &str) -> &str {
    let mut start = text.len();
    let mut chars = text.char_indices().rev().peekable();
    while let Some((at, c)) = chars.next() {
        if text.len() - at > MAX_WORD_BYTES {
            break;
        }
        let inside = start < text.len() && start == at + c.len_utf8();
        if is_word_char(c) {
            start = at;
        } else if !(inside && is_hyphen(c) && chars.peek().is_some_and(|&(_, before)| is_word_char(before))) {
            break;
        }
    }
    &text[start..]
}

/// The word `text` begins with (see [`trailing_word`]).
fn leading_word(text: &str) -> &str {
    words(text)
        .next()
        .filter(|(at, _)| *at == 0)
        .map_or("", |(_, word)| word)
}

/// `text`'s first whitespace-delimited word (a word with its punctuation, `schiff,`) and what
/// follows it, its leading spaces left out.
fn split_first_word(text: &str) -> (&str, &str) {
    let text = text.trim_start();
    let end = text.find(char::is_whitespace).unwrap_or(text.len());
    (&text[..end], text[end..].trim_start())
}

/// The words of `text` with where each begins: runs of word characters, a hyphen between two
/// of them inside the run (`well-known` is one word).
fn words(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut rest = text.char_indices().peekable();
    std::iter::from_fn(move || {
        let (start, _) = rest.by_ref().find(|&(_, c)| is_word_char(c))?;
        let mut end = start;
        while let Some(&(at, c)) = rest.peek() {
            if is_word_char(c) {
                rest.next();
                end = at + c.len_utf8();
            } else if is_hyphen(c) {
                // A hyphen stays inside the word only with a word character after it.
                let mut ahead = rest.clone();
                ahead.next();
                match ahead.peek() {
                    Some(&(_, next)) if is_word_char(next) => {
                        rest.next();
                    }
                    _ => break,
                }
            } else {
                break;
            }
        }
        Some((start, &text[start..end]))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines of one page of 10-point `lines` once joined.
    fn joined(lines: &[&str]) -> Vec<String> {
        let sized: Vec<(f32, &str)> = lines.iter().map(|&text| (10.0, text)).collect();
        let mut pages = [PageLines::of(1, &sized)];
        join_hyphenated_words(&mut pages);
        pages[0].lines.iter().map(|line| line.text.clone()).collect()
    }

    #[test]
    fn a_word_broken_at_a_line_end_is_whole_again() {
        assert_eq!(
            joined(&["Die Donau-", "dampfschifffahrt fuhr nach Wien."]),
            ["Die Donaudampfschifffahrt", "fuhr nach Wien."]
        );
        // Its punctuation comes with it; a line left with nothing goes (no blank line).
        assert_eq!(
            joined(&["the infor-", "mation, as", "said: infor-", "mation.", "Next"]),
            ["the information,", "as", "said: information.", "Next"]
        );
        // A word broken over three lines; Unicode's hyphen; leading spaces.
        assert_eq!(
            joined(&["Donau-", "dampf\u{2010}", "   schiff fuhr"]),
            ["Donaudampfschiff", "fuhr"]
        );
        // Scripts with case: Cyrillic and Greek.
        assert_eq!(joined(&["инфор-", "мация"]), ["информация"]);
        assert_eq!(joined(&["πληρο-", "φορία"]), ["πληροφορία"]);
    }

    #[test]
    fn the_hyphen_stays_where_the_document_writes_the_word_with_it() {
        assert_eq!(
            joined(&["a well-", "known fact; it is well-known", "and well-known"]),
            ["a well-known", "fact; it is well-known", "and well-known"]
        );
        // Written without it more often than with it: a break.
        assert_eq!(
            joined(&["an e-", "mail, an email, another email, an e-mail"]),
            ["an email,", "an email, another email, an e-mail"]
        );
        // A compound hyphenated before the break keeps it.
        assert_eq!(
            joined(&["state-of-the-", "art methods"]),
            ["state-of-the-art", "methods"]
        );
        // A soft hyphen marks only where a word may break, whatever else the document writes.
        assert_eq!(
            joined(&["Donau\u{AD}", "dampf and donau-dampf"]),
            ["Donaudampf", "and donau-dampf"]
        );
    }

    #[test]
    fn lines_that_are_no_broken_word_are_left_as_they_are() {
        for lines in [
            &["East-", "West relations"][..], // a capital after the break: a name or a noun
            &["pages 10-", "20 and more"],    // a range
            &["a list -", "item"],            // a dash, no word before it
            &["the end-", "", "then more"],   // a blank line between
            &["a word-", "— and a dash"],     // no letter after
            &["東京-", "大阪"],               // no case to tell a word's start by
        ] {
            assert_eq!(joined(lines), lines, "{lines:?}");
        }
        // Lines drawn at other sizes (a heading and its body), and pages, are not joined.
        let mut pages = [
            PageLines::of(1, &[(14.0, "Intro-"), (10.0, "duction text"), (10.0, "the infor-")]),
            PageLines::of(2, &[(10.0, "mation")]),
        ];
        join_hyphenated_words(&mut pages);
        let texts: Vec<&str> = pages.iter().flat_map(|p| &p.lines).map(|l| l.text.as_str()).collect();
        assert_eq!(texts, ["Intro-", "duction text", "the infor-", "mation"]);
    }

    #[test]
    fn many_broken_lines_are_joined_in_one_pass() {
        // A page of 200,000 lines, each a word broken into the next: one word, read in linear time.
        let lines: Vec<&str> = std::iter::once("Start")
            .chain(std::iter::repeat_n("ab-", 200_000))
            .chain(["end"])
            .collect();
        let mut one = joined(&lines);
        assert_eq!(one.len(), 2);
        let word = one.pop().unwrap();
        assert_eq!(word.len(), 200_000 * 2 + 3);
        assert!(word.starts_with("ababab") && word.ends_with("abend"));
    }
}
