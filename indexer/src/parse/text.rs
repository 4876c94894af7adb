//! Plain text: decoding (UTF-8, UTF-8/16 with BOM) with precise errors, one block per file.

use super::{Block, Document, ParseError, Parsed};
use crate::source::RawDocument;

/// Decodes text bytes, or says exactly why they are not text.
pub(crate) fn decode_text(bytes: &[u8]) -> Result<String, ParseError> {
    if bytes.is_empty() {
        return Err(ParseError::Empty);
    }
    if let Some(rest) = bytes.strip_prefix(b"\xFF\xFE") {
        return decode_utf16(rest, u16::from_le_bytes);
    }
    if let Some(rest) = bytes.strip_prefix(b"\xFE\xFF") {
        return decode_utf16(rest, u16::from_be_bytes);
    }
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if let Some(pos) = bytes.iter().take(8192).position(|b| *b == 0) {
        return Err(ParseError::Binary(format!("NUL byte at offset {pos}")));
    }
    let text = std::str::from_utf8(bytes).map_err(|e| ParseError::InvalidUtf8(e.valid_up_to()))?;
    if text.trim().is_empty() {
        return Err(ParseError::Empty);
    }
    Ok(text.to_string())
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

pub(super) fn parse(raw: &RawDocument) -> Result<Parsed, ParseError> {
    let text = decode_text(&raw.bytes)?;
    let title = Document::stem_of(raw);
    Ok(Parsed::one(Document::from_raw(raw, title, vec![Block::text(text, &[])])))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{raw_for_test, AutoParser, Parser};

    #[test]
    fn utf8_errors_name_the_byte() {
        assert_eq!(decode_text(b"ok \xC3\x28 bad"), Err(ParseError::InvalidUtf8(3)));
        assert_eq!(decode_text(b"   \n "), Err(ParseError::Empty));
        assert!(matches!(decode_text(b"a\0b"), Err(ParseError::Binary(_))));
    }

    #[test]
    fn boms_are_honoured() {
        assert_eq!(decode_text(b"\xEF\xBB\xBFhi").unwrap(), "hi");
        assert_eq!(decode_text(b"\xFF\xFEh\0i\0").unwrap(), "hi");
        assert_eq!(decode_text(b"\xFE\xFF\0h\0i").unwrap(), "hi");
    }

    #[test]
    fn text_file_becomes_one_document() {
        let parsed = AutoParser.parse(&raw_for_test("notes/today.txt", "Hello.\n\nWorld.")).unwrap();
        let doc = &parsed.documents[0];
        assert_eq!(doc.title, "today");
        assert_eq!(doc.file_name, "today.txt");
        assert_eq!(doc.blocks[0].text, "Hello.\n\nWorld.");
        assert_eq!(doc.doc_id.len(), 32);
        assert_eq!(AutoParser.parse(&raw_for_test("e.txt", "")).unwrap_err(), ParseError::Empty);
    }
}
