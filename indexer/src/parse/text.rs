//! Plain text: decoding (UTF-8, UTF-8/16 with BOM, UTF-16 without one, legacy encodings) with
//! precise errors, one block per file.

use encoding_rs::{Encoding, UTF_16BE, UTF_16LE};

use super::legacy_encoding::{declared_in_content_type, decode_iso_2022_jp, decode_legacy};
use super::{Block, Document, ParseError, Parsed};
use crate::source::RawDocument;

/// Decodes text bytes, or says exactly why they are not text.
#[cfg(test)]
pub(crate) fn decode_text(bytes: &[u8]) -> Result<String, ParseError> {
    decode_text_declared(bytes, None)
}

/// A file's text ([`decode_text_declared`]) in the encoding its source declared, if any (the
/// `charset` of its `Content-Type`).
pub(crate) fn decode_raw_text(raw: &RawDocument) -> Result<String, ParseError> {
    decode_text_declared(&raw.bytes, declared_by_source(raw))
}

/// The encoding a file's source declared for it (the `charset` of its `Content-Type`).
pub(crate) fn declared_by_source(raw: &RawDocument) -> Option<&'static Encoding> {
    raw.content_type.as_deref().and_then(declared_in_content_type)
}

/// Decodes text bytes, or says exactly why they are not text; bytes that are not UTF-8 (and
/// have no byte order mark) are read in the encoding declared for them, if any
/// ([`decode_legacy`]).
pub(crate) fn decode_text_declared(bytes: &[u8], declared: Option<&'static Encoding>) -> Result<String, ParseError> {
    if bytes.is_empty() {
        return Err(ParseError::Empty);
    }
    if let Some(rest) = bytes.strip_prefix(b"\xFF\xFE\0\0") {
        return decode_utf32(rest, u32::from_le_bytes);
    }
    if let Some(rest) = bytes.strip_prefix(b"\0\0\xFE\xFF") {
        return decode_utf32(rest, u32::from_be_bytes);
    }
    if let Some((encoding, bom)) = utf16_encoding(bytes) {
        let read = if encoding == UTF_16LE {
            u16::from_le_bytes
        } else {
            u16::from_be_bytes
        };
        return decode_utf16(&bytes[bom..], read);
    }
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if let Some(pos) = bytes.iter().take(8192).position(|b| *b == 0) {
        return Err(ParseError::Binary(format!("NUL byte at offset {pos}")));
    }
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => decode_iso_2022_jp(text).unwrap_or_else(|| text.to_string()),
        Err(_) => decode_legacy(bytes, declared)?,
    };
    if text.trim().is_empty() {
        return Err(ParseError::Empty);
    }
    Ok(text)
}

/// The UTF-16 that bytes are in and the length of their byte order mark: by the mark (not
/// UTF-32's, which starts as UTF-16LE's does), else by their zero bytes ([`utf16_without_bom`]).
pub(crate) fn utf16_encoding(bytes: &[u8]) -> Option<(&'static Encoding, usize)> {
    match bytes {
        [0xFF, 0xFE, 0, 0, ..] | [0, 0, 0xFE, 0xFF, ..] => None,
        [0xFF, 0xFE, ..] => Some((UTF_16LE, 2)),
        [0xFE, 0xFF, ..] => Some((UTF_16BE, 2)),
        _ => utf16_without_bom(bytes).map(|encoding| (encoding, 0)),
    }
}

/// UTF-16 without a byte order mark, told as text editors tell it: in text of Latin,
/// Greek or Cyrillic letters, digits and punctuation most code units have a zero high byte,
/// so the first KiB has zeros at nearly every second byte and hardly any at the others.
/// (Text all in other scripts has no zero bytes to tell it by: it is not told apart.)
pub(crate) fn utf16_without_bom(bytes: &[u8]) -> Option<&'static Encoding> {
    let head = &bytes[..bytes.len().min(1024) & !1];
    let pairs = head.len() / 2;
    if pairs < 4 {
        return None;
    }
    let zeros_at = |parity: usize| head.iter().skip(parity).step_by(2).filter(|b| **b == 0).count();
    let (even, odd) = (zeros_at(0), zeros_at(1));
    let many = |zeros: usize| zeros * 10 >= pairs * 3;
    let few = |zeros: usize| zeros * 20 <= pairs;
    match (many(even), few(even), many(odd), few(odd)) {
        (_, true, true, _) => Some(UTF_16LE),
        (true, _, _, true) => Some(UTF_16BE),
        _ => None,
    }
}

/// UTF-32 after its byte order mark (rare, but what some subtitle and export tools write).
fn decode_utf32(bytes: &[u8], read: fn([u8; 4]) -> u32) -> Result<String, ParseError> {
    let mut text = String::with_capacity(bytes.len() / 4);
    for (i, unit) in bytes.chunks_exact(4).enumerate() {
        let unit = read([unit[0], unit[1], unit[2], unit[3]]);
        let char =
            char::from_u32(unit).ok_or_else(|| ParseError::Corrupt(format!("invalid UTF-32 at code unit {i}")))?;
        text.push(char);
    }
    if text.trim().is_empty() {
        return Err(ParseError::Empty);
    }
    Ok(text)
}

fn decode_utf16(bytes: &[u8], read: fn([u8; 2]) -> u16) -> Result<String, ParseError> {
    let units = bytes.chunks_exact(2).map(|c| read([c[0], c[1]]));
    let mut text = String::with_capacity(bytes.len() / 2);
    for (i, unit) in char::decode_utf16(units).enumerate() {
        text.push(unit.map_err(|_| ParseError::Corrupt(format!("invalid UTF-16 at code unit {i}")))?);
    }
    if text.trim().is_empty() {
        return Err(ParseError::Empty);
    }
    Ok(text)
}

/// `text`'s words with one space between each, none around: runs of white space (line
/// breaks, tabs, wide spaces) collapsed as a page shows them.
pub(crate) fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

pub(super) fn parse(raw: &RawDocument) -> Result<Parsed, ParseError> {
    let text = decode_raw_text(raw)?;
    let title = Document::stem_of(raw);
    Ok(Parsed::one(Document::from_raw(
        raw,
        title,
        vec![Block::text(text, &[])],
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{document_of, raw_for_test, AutoParser, Parser};

    #[test]
    fn bytes_that_are_not_utf8_are_read_in_their_encoding() {
        assert_eq!(
            decode_text(b"caf\xe9 au lait, cr\xe8me br\xfbl\xe9e").unwrap(),
            "café au lait, crème brûlée"
        );
        assert_eq!(decode_text(b"   \n "), Err(ParseError::Empty));
        assert!(matches!(decode_text(b"a\0b"), Err(ParseError::Binary(_))));
    }

    #[test]
    fn a_charset_the_source_declares_is_the_encoding_of_text_that_is_not_utf8() {
        // Mac OS Roman, which no guess gives: "ß" and "ö" would read as "§" and "š".
        let (mac, _, _) = encoding_rs::MACINTOSH.encode("Die Straße zum Kai öffnet um sechs.");
        let with = |name: &str, bytes: &[u8], content_type: Option<&str>| {
            let raw = RawDocument {
                content_type: content_type.map(str::to_string),
                ..raw_for_test(name, bytes.to_vec())
            };
            AutoParser
                .parse(&raw)
                .unwrap()
                .documents
                .remove(0)
                .blocks
                .remove(0)
                .text
        };
        let text = "Die Straße zum Kai öffnet um sechs.";
        assert_eq!(with("pier.txt", &mac, Some("text/plain; charset=\"macintosh\"")), text);
        assert_ne!(with("pier.txt", &mac, None), text, "guessed otherwise");
        assert_ne!(
            with("pier.txt", &mac, Some("text/plain; charset=utf-16")),
            text,
            "a charset that is not ASCII-compatible is not taken"
        );
        // A page's own charset gives way to its source's, as to a transport's.
        let mut page = b"<html><head><meta charset=\"windows-1252\"></head><body><p>".to_vec();
        page.extend_from_slice(&mac);
        page.extend_from_slice(b"</p></body></html>");
        assert_eq!(with("pier.html", &page, Some("text/html;charset=x-mac-roman")), text);
        // A page or source that says UTF-8 of bytes that are not is guessed past: Windows-1252
        // here (a page saved in an editor's code page under a template's `<meta charset>`).
        let (latin, _, _) = encoding_rs::WINDOWS_1252.encode("Die Straße zum Kai öffnet um sechs, für alle Fähren.");
        let mut page = b"<html><head><meta charset=\"utf-8\"></head><body><p>".to_vec();
        page.extend_from_slice(&latin);
        page.extend_from_slice(b"</p></body></html>");
        let expected = "Die Straße zum Kai öffnet um sechs, für alle Fähren.";
        assert_eq!(with("pier.html", &page, None), expected);
        assert_eq!(with("pier.txt", &latin, Some("text/plain; charset=UTF-8")), expected);
        // UTF-8 stays UTF-8 whatever is declared.
        assert_eq!(
            with("pier.md", "Grüße".as_bytes(), Some("text/markdown; charset=iso-8859-5")),
            "Grüße"
        );
    }

    #[test]
    fn boms_are_honoured() {
        assert_eq!(decode_text(b"\xEF\xBB\xBFhi").unwrap(), "hi");
        assert_eq!(decode_text(b"\xFF\xFEh\0i\0").unwrap(), "hi");
        assert_eq!(decode_text(b"\xFE\xFF\0h\0i").unwrap(), "hi");
        let utf32 = |text: &str, write: fn(u32) -> [u8; 4]| -> Vec<u8> {
            ['\u{feff}']
                .into_iter()
                .chain(text.chars())
                .flat_map(|c| write(c as u32))
                .collect()
        };
        assert_eq!(decode_text(&utf32("Zoë 🌊", u32::to_le_bytes)).unwrap(), "Zoë 🌊");
        assert_eq!(decode_text(&utf32("Zoë 🌊", u32::to_be_bytes)).unwrap(), "Zoë 🌊");
        let surrogate = [&b"\xFF\xFE\0\0"[..], &0xD800u32.to_le_bytes()].concat();
        assert_eq!(
            decode_text(&surrogate),
            Err(ParseError::Corrupt("invalid UTF-32 at code unit 0".into()))
        );
    }

    #[test]
    fn utf16_without_a_bom_is_read() {
        let text = "Grüße aus Köln: the quay opens at 6.";
        let le: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
        let be: Vec<u8> = text.encode_utf16().flat_map(u16::to_be_bytes).collect();
        assert_eq!(decode_text(&le).unwrap(), text);
        assert_eq!(decode_text(&be).unwrap(), text);
        // Under any extension, not refused as binary.
        let doc = document_of("notes.log", le);
        assert_eq!(doc.blocks[0].text, text);
        // Bytes with a NUL here and there are still binary.
        assert!(matches!(
            decode_text(b"abcdefgh\0ijklmnopqrstuvwx"),
            Err(ParseError::Binary(_))
        ));
    }

    #[test]
    fn text_file_becomes_one_document() {
        let parsed = AutoParser
            .parse(&raw_for_test("notes/today.txt", "Hello.\n\nWorld."))
            .unwrap();
        let doc = &parsed.documents[0];
        assert_eq!(doc.title, "today");
        assert_eq!(doc.file_name, "today.txt");
        assert_eq!(doc.blocks[0].text, "Hello.\n\nWorld.");
        assert_eq!(doc.doc_id.len(), 32);
        assert_eq!(
            AutoParser.parse(&raw_for_test("e.txt", "")).unwrap_err(),
            ParseError::Empty
        );
    }
}
