//! Files embedded in a document's text as base64 (a JSON record's attachment, a file inside a
//! SOAP message or other XML, a data URI, a PEM certificate's body, a MIME part saved as text)
//! are no words to search: read as text they cost the model thousands of tokens of noise, make
//! chunks that match nothing, and skew the collection's language counts (a picture reads as
//! Welsh). They are left out of every document, whatever its format, before it is chunked, and
//! the document says so. (The FictionBook and Evernote readers leave their pictures out
//! themselves, and the e-mail reader decodes its parts.)
//!
//! A run of encoded data is found by its shape alone: whitespace-separated pieces of the
//! base64 alphabet (standard or URL-safe, `=` only at the end), each at least
//! [`PIECE_CHARS`] long and holding upper case, lower case and digits (a long German word, a
//! hex digest, a DNA sequence have not all three; a piece after the first needs only the
//! length), [`RUN_CHARS`] in all at least (no identifier in prose is that long); after such
//! pieces one shorter piece of the alphabet with all three or padding, a MIME body's last
//! line, goes with them. A data URI's `data:...;base64,` goes with its data.

use super::Document;

/// A piece of a run of encoded data is this long at least...
const PIECE_CHARS: usize = 40;
/// ...and a run this long in all.
const RUN_CHARS: usize = 256;

/// Leaves the runs of encoded data out of `document`'s blocks (a transcript's blocks, whose
/// times mark byte offsets, are left as they are) and notes what was left out in its
/// warnings. Returns the characters left out.
pub fn leave_out_encoded_data(document: &mut Document) -> usize {
    let mut left_out = 0;
    let mut runs = 0;
    for block in document.blocks.iter_mut().filter(|b| b.times.is_empty()) {
        let found = encoded_runs(&block.text);
        if found.is_empty() {
            continue;
        }
        runs += found.len();
        left_out += found.iter().map(|(start, end)| end - start).sum::<usize>();
        block.text = without(&block.text, &found);
    }
    if runs > 0 {
        document.warn(format!(
            "left out {} of base64-encoded data in {} (an embedded file or picture: no text to search)",
            characters(left_out),
            match runs {
                1 => "one place".to_string(),
                n => format!("{n} places"),
            }
        ));
    }
    left_out
}

/// `count` characters, in thousands where there are that many.
fn characters(count: usize) -> String {
    match count {
        c if c >= 1_000_000 => format!("{:.1} M characters", c as f64 / 1e6),
        c if c >= 1000 => format!("{} k characters", c / 1000),
        c => format!("{c} characters"),
    }
}

/// `text` with the byte ranges `runs` (in order, apart) taken out, the white space left
/// where a run was taken out of a line kept to one.
fn without(text: &str, runs: &[(usize, usize)]) -> String {
    let mut kept = String::with_capacity(text.len() - runs.iter().map(|(s, e)| e - s).sum::<usize>());
    let mut from = 0;
    for &(start, end) in runs {
        let before = &text[from..start];
        kept.push_str(before.trim_end_matches([' ', '\t']));
        let mut rest = end;
        // The white space between the run and what follows: kept to one break or space.
        let after = &text[end..];
        let spaces = after.len() - after.trim_start().len();
        if spaces > 0 {
            let gap = &after[..spaces];
            let sep = if gap.contains('\n') { "\n" } else { " " };
            if !kept.is_empty() && !kept.ends_with(char::is_whitespace) {
                kept.push_str(sep);
            }
            rest += spaces;
        }
        from = rest;
    }
    kept.push_str(&text[from..]);
    kept
}

/// The byte ranges of `text` that are runs of encoded data, in order.
fn encoded_runs(text: &str) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    // Most texts have no stretch of the alphabet long enough: told without splitting them.
    if !has_stretch(bytes, PIECE_CHARS) {
        return Vec::new();
    }
    let mut runs = Vec::new();
    // The run being gathered: its start, its end, its characters.
    let mut open: Option<(usize, usize, usize)> = None;
    for (start, end) in pieces(bytes) {
        let piece = Piece::of(&bytes[start..end]);
        match (piece, open) {
            (Some(p), None) if p.is_full() => open = Some((start + p.data_at, start + p.data_end, p.len())),
            // A line of a run carries it on though it lacks a kind of character.
            (Some(p), Some((run_start, _, chars))) if p.carries_on() => {
                open = Some((run_start, start + p.data_end, chars + p.len()))
            }
            _ => {
                if let Some((run_start, run_end, chars)) = open.take() {
                    if chars >= RUN_CHARS {
                        // A MIME body's last, shorter line goes with the run.
                        let tail = piece.filter(Piece::is_tail).map(|p| start + p.data_end);
                        runs.push((run_start, tail.unwrap_or(run_end)));
                    }
                }
                if let Some(p) = piece.filter(|p| p.is_full()) {
                    open = Some((start + p.data_at, start + p.data_end, p.len()));
                }
            }
        }
    }
    if let Some((run_start, run_end, chars)) = open {
        if chars >= RUN_CHARS {
            runs.push((run_start, run_end));
        }
    }
    runs
}

/// Whether `bytes` hold `len` bytes of the alphabet in a row.
fn has_stretch(bytes: &[u8], len: usize) -> bool {
    let mut row = 0;
    for &b in bytes {
        row = if in_alphabet(b) { row + 1 } else { 0 };
        if row >= len {
            return true;
        }
    }
    false
}

fn in_alphabet(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'-' | b'_' | b'=')
}

/// The white-space-separated pieces of `bytes` (ASCII white space: encoded data has no other).
fn pieces(bytes: &[u8]) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut at = 0;
    std::iter::from_fn(move || {
        while at < bytes.len() && bytes[at].is_ascii_whitespace() {
            at += 1;
        }
        if at >= bytes.len() {
            return None;
        }
        let start = at;
        while at < bytes.len() && !bytes[at].is_ascii_whitespace() {
            at += 1;
        }
        Some((start, at))
    })
}

/// A piece of the alphabet, and where in the piece its data is.
#[derive(Clone, Copy)]
struct Piece {
    data_at: usize,
    data_end: usize,
    /// Upper case, lower case and digits in it.
    mixed: bool,
    /// Whether it ends in padding.
    padded: bool,
}

impl Piece {
    /// `piece` as data: quotes and brackets around it off, a data URI's head (wherever in the
    /// piece it begins) with its data; `None` where what is left is not of the alphabet.
    fn of(piece: &[u8]) -> Option<Piece> {
        let quote = |b: &u8| matches!(b, b'"' | b'\'' | b'(' | b')' | b'[' | b']' | b'<' | b'>' | b',' | b';');
        let (data_at, data, head) = match find(piece, b"data:") {
            Some(uri) => {
                let comma = uri + find(&piece[uri..], b";base64,")? + 8;
                let len = piece[comma..].iter().take_while(|&&b| in_alphabet(b)).count();
                (uri, &piece[comma..comma + len], comma - uri)
            }
            None => {
                let at = piece.iter().position(|b| !quote(b))?;
                let end = piece.iter().rposition(|b| !quote(b))? + 1;
                (at, &piece[at..end], 0)
            }
        };
        if data.is_empty() || !data.iter().all(|&b| in_alphabet(b)) {
            return None;
        }
        // `=` pads the end only (`key=value` is no data).
        let padding = data.iter().rev().take_while(|&&b| b == b'=').count();
        if padding > 2 || data[..data.len() - padding].contains(&b'=') {
            return None;
        }
        let has = |test: fn(&u8) -> bool| data.iter().any(test);
        Some(Piece {
            data_at,
            data_end: data_at + head + data.len(),
            mixed: has(u8::is_ascii_uppercase) && has(u8::is_ascii_lowercase) && has(u8::is_ascii_digit),
            padded: padding > 0,
        })
    }

    /// Whether the piece is data that starts a run.
    fn is_full(&self) -> bool {
        self.mixed && self.len() >= PIECE_CHARS
    }

    /// Whether the piece carries on a run it follows.
    fn carries_on(&self) -> bool {
        self.data_at == 0 && self.len() >= PIECE_CHARS
    }

    /// Whether the piece may end a run: a MIME body's shorter last line.
    fn is_tail(&self) -> bool {
        self.data_at == 0 && (self.mixed || self.padded)
    }

    fn len(&self) -> usize {
        self.data_end - self.data_at
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{raw_for_test, Block};

    /// `bytes` as base64 in MIME's lines of 76.
    fn mime_lines(bytes: &[u8]) -> String {
        use base64::Engine;
        let all = base64::engine::general_purpose::STANDARD.encode(bytes);
        all.as_bytes()
            .chunks(76)
            .map(|line| std::str::from_utf8(line).unwrap())
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn noise(len: usize) -> Vec<u8> {
        (0..len as u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect()
    }

    fn left(text: &str) -> (String, usize, Vec<String>) {
        let raw = raw_for_test("t.txt", text.to_string());
        let mut doc = Document::from_raw(&raw, "t".into(), vec![Block::text(text, &[])]);
        let out = leave_out_encoded_data(&mut doc);
        (doc.blocks[0].text.clone(), out, doc.warnings)
    }

    #[test]
    fn mime_lines_a_single_blob_and_a_data_uri_are_left_out_and_the_words_around_them_kept() {
        let body = mime_lines(&noise(3000));
        let (text, out, warnings) = left(&format!("Cover of the book:\n{body}\nThe end."));
        assert_eq!(text, "Cover of the book:\nThe end.");
        assert_eq!(out, body.len());
        assert_eq!(warnings.len(), 1);
        assert!(
            warnings[0].contains("4 k characters") && warnings[0].contains("one place"),
            "{warnings:?}"
        );

        // A line without digits in the middle of a body does not cut it in two.
        let mut lines: Vec<&str> = body.lines().collect();
        let letters = "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5eiAu"
            .replace(|c: char| c.is_ascii_digit(), "Q");
        lines.insert(20, &letters);
        let (text, _, warnings) = left(&format!("Cover:\n{}\nThe end.", lines.join("\n")));
        assert_eq!(text, "Cover:\nThe end.");
        assert!(warnings[0].contains("one place"), "{warnings:?}");

        let one_line = body.replace('\n', "");
        let (text, _, _) = left(&format!("attachment: {one_line}\ntitle: rec"));
        assert_eq!(text, "attachment:\ntitle: rec");

        let (text, _, _) = left(&format!("logo <img src=\"data:image/png;base64,{one_line}\"> here"));
        assert_eq!(text, "logo <img src=\"\"> here");

        let pem = format!(
            "-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----",
            mime_lines(&noise(900))
        );
        let (text, _, _) = left(&pem);
        assert_eq!(text, "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----");
    }

    #[test]
    fn long_words_digests_sequences_and_short_keys_are_text() {
        for text in [
            // A German compound, hex digests, a protein: not all three kinds of character.
            "Donaudampfschifffahrtselektrizitätenhauptbetriebswerkbauunterbeamtengesellschaft",
            &"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 ".repeat(8),
            &"MKWVTFISLLLLFSSAYSRGVFRRDTHKSEIAHRFKDLGEEHFKGLVLIAFSQYLQQCPFDEHVKLVNELTEFAKTCVADESHAGCEK".repeat(4),
            // One key, shorter than a run.
            "token: eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9eyJzdWIiOiIxMjM0NTY3ODkwIn0",
            // Words and numbers.
            &"Section 42 of the Act applies to 1999 filings and later. ".repeat(20),
        ] {
            let (kept, out, warnings) = left(text);
            assert_eq!((kept.as_str(), out), (text, 0));
            assert!(warnings.is_empty());
        }
    }

    #[test]
    fn any_text_is_cut_on_its_characters_and_leaving_out_twice_leaves_nothing_more() {
        // Texts of base64 pieces, words, data URIs, quotes and multibyte characters in any
        // order: no cut falls inside a character, the text is only shortened, and a second
        // pass finds nothing.
        let parts = [
            "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAxMjM0NTY3ODk",
            "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAxMjM0NTY3ODk",
            "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAxMjM0NTY3ODkQUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAxMjM0NTY3ODkQUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAxMjM0NTY3ODkQUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAxMjM0NTY3ODk",
            "TWFu==",
            "\"data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk1",
            "Häuser",
            "東京タワー",
            "(",
            ")\"",
            "key=value",
            "-----BEGIN",
        ];
        let mut state: u64 = 0x5EED;
        let mut next = |below: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % below as u64) as usize
        };
        let mut with_runs = 0;
        for _ in 0..2000 {
            // Apart as a text's words are (a file glued to a word is read as neither).
            let text: String = (0..next(60))
                .map(|_| [parts[next(parts.len())], ["\n", " ", "\r\n", "\t"][next(4)]].concat())
                .collect();
            let (once, out, _) = left(&text);
            with_runs += usize::from(out > 0);
            assert!(once.len() + out <= text.len() + 1, "{text:?}");
            if out == 0 {
                assert_eq!(once, text);
            }
            let (twice, again, _) = left(&once);
            assert_eq!((twice.as_str(), again), (once.as_str(), 0), "{text:?}");
        }
        assert!(with_runs > 200, "{with_runs} of 2000 texts had a run to leave out");
    }

    #[test]
    fn a_transcripts_blocks_keep_their_bytes_where_their_times_point() {
        let body = mime_lines(&noise(1000));
        let raw = raw_for_test("t.vtt", body.clone());
        let mut block = Block::text(body.clone(), &[]);
        block.times.push(crate::parse::TimeMark { at: 0, seconds: 1 });
        let mut doc = Document::from_raw(&raw, "t".into(), vec![block]);
        assert_eq!(leave_out_encoded_data(&mut doc), 0);
        assert_eq!(doc.blocks[0].text, body);
    }
}
