//! CSV and TSV: one table block per row, content_type "table", the header line carried
//! with every row so every chunk starts with it.

use super::text::decode_raw_text;
use super::{Block, ContentType, Document, ParseError, Parsed};
use crate::source::RawDocument;

pub(super) fn parse(raw: &RawDocument, delimiter: u8) -> Result<Parsed, ParseError> {
    let text = decode_raw_text(raw)?;
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .flexible(true)
        .from_reader(text.as_bytes());
    let separator = if delimiter == b'\t' { "\t" } else { ", " };
    let header = reader
        .headers()
        .map_err(|e| ParseError::Corrupt(format!("unreadable header row: {e}")))?
        .iter()
        .collect::<Vec<_>>()
        .join(separator);
    let mut blocks = Vec::new();
    for (index, record) in reader.records().enumerate() {
        let record = record.map_err(|e| ParseError::Corrupt(format!("row {}: {e}", index + 2)))?;
        let row = record.iter().collect::<Vec<_>>().join(separator);
        if row.trim().is_empty() {
            continue;
        }
        blocks.push(Block {
            text: row,
            kind: ContentType::Table,
            header: Some(header.clone()),
            ..Default::default()
        });
    }
    if blocks.is_empty() {
        return Err(ParseError::NoText);
    }
    let title = Document::stem_of(raw);
    Ok(Parsed::one(Document::from_raw(raw, title, blocks)))
}

#[cfg(test)]
mod tests {
    use crate::parse::{document_of, raw_for_test, AutoParser, ContentType, ParseError, Parser};

    #[test]
    fn rows_carry_the_header() {
        let doc = document_of("prices.csv", "item,price\n\"gpu, big\",100\ncpu,5\n");
        assert_eq!(doc.blocks.len(), 2);
        assert!(doc
            .blocks
            .iter()
            .all(|b| b.kind == ContentType::Table && b.header.as_deref() == Some("item, price")));
        assert_eq!(doc.blocks[0].text, "gpu, big, 100");
        let tsv = document_of("t.tsv", "a\tb\n1\t2\n");
        assert_eq!(tsv.blocks[0].text, "1\t2");
        assert_eq!(
            AutoParser.parse(&raw_for_test("h.csv", "only,header\n")).unwrap_err(),
            ParseError::NoText
        );
    }
}
