//! DOCX (zip + WordprocessingML): paragraphs as blocks, `Heading N` / `Title` styles
//! giving heading paths, tables as table blocks (cells joined by ` | `).

use std::io::{Cursor, Read};

use quick_xml::events::Event;
use quick_xml::Reader;

use super::{Block, ContentType, Document, ParseError, Parsed};
use crate::source::RawDocument;

/// Bytes one part of a DOCX may inflate to (the text of a 10,000-page document is far less).
const MAX_PART_BYTES: u64 = 128 << 20;

fn read_part(archive: &mut zip::ZipArchive<Cursor<&[u8]>>, name: &str) -> Result<Option<String>, ParseError> {
    let mut file = match archive.by_name(name) {
        Ok(file) => file,
        Err(zip::result::ZipError::FileNotFound) => return Ok(None),
        Err(e) => return Err(ParseError::Corrupt(format!("DOCX part {name}: {e}"))),
    };
    // Read no further than the budget: a part's declared size is whatever the file says.
    let mut bytes = Vec::new();
    (&mut file)
        .take(MAX_PART_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| ParseError::Corrupt(format!("DOCX part {name}: {e}")))?;
    if bytes.len() as u64 > MAX_PART_BYTES {
        return Err(ParseError::Inflates {
            part: format!("DOCX part {name}"),
            mib: MAX_PART_BYTES >> 20,
        });
    }
    String::from_utf8(bytes).map(Some).map_err(|e| {
        ParseError::Corrupt(format!(
            "DOCX part {name}: not UTF-8 at byte {}",
            e.utf8_error().valid_up_to()
        ))
    })
}

/// Heading level of a paragraph style: `Title` is 0, `Heading1` / `heading 1` is 1.
fn heading_level(style: &str) -> Option<usize> {
    let lower = style.to_ascii_lowercase().replace(' ', "");
    if lower == "title" {
        return Some(0);
    }
    lower.strip_prefix("heading").and_then(|n| n.parse().ok())
}

fn local_name(name: &[u8]) -> &[u8] {
    name.rsplit(|b| *b == b':').next().unwrap_or(name)
}

fn core_title(core: &str) -> Option<String> {
    let start = core.find("<dc:title>")? + "<dc:title>".len();
    let end = core[start..].find("</dc:title>")? + start;
    let title = core[start..end].trim().to_string();
    (!title.is_empty()).then_some(title)
}

#[derive(Default)]
struct Body {
    blocks: Vec<Block>,
    headings: Vec<(usize, String)>,
    paragraph: String,
    style: Option<String>,
    cell: Vec<String>,
    row: Vec<String>,
    rows: Vec<String>,
    table_depth: usize,
    first_heading: Option<String>,
}

impl Body {
    fn path(&self) -> Vec<String> {
        self.headings.iter().map(|(_, h)| h.clone()).collect()
    }

    fn end_paragraph(&mut self) {
        let text = self.paragraph.trim().to_string();
        self.paragraph.clear();
        let style = self.style.take();
        if text.is_empty() {
            return;
        }
        if self.table_depth > 0 {
            self.cell.push(text);
            return;
        }
        if let Some(level) = style.as_deref().and_then(heading_level) {
            self.first_heading.get_or_insert_with(|| text.clone());
            self.headings.retain(|(l, _)| *l < level);
            self.headings.push((level, text.clone()));
        }
        self.blocks.push(Block::text(text, &self.path()));
    }

    fn end_table(&mut self) {
        let text = std::mem::take(&mut self.rows).join("\n");
        if !text.is_empty() {
            self.blocks.push(Block {
                text,
                heading_path: self.path(),
                kind: ContentType::Table,
                ..Default::default()
            });
        }
    }
}

pub(super) fn parse(raw: &RawDocument) -> Result<Parsed, ParseError> {
    let mut archive = zip::ZipArchive::new(Cursor::new(&raw.bytes[..]))
        .map_err(|e| ParseError::Corrupt(format!("DOCX is not a readable ZIP archive: {e}")))?;
    let xml = read_part(&mut archive, "word/document.xml")?
        .ok_or_else(|| ParseError::Corrupt("DOCX has no word/document.xml".into()))?;
    let mut reader = Reader::from_str(&xml);
    let mut body = Body::default();
    loop {
        let event = reader
            .read_event()
            .map_err(|e| ParseError::Corrupt(format!("DOCX XML at byte {}: {e}", reader.buffer_position())))?;
        match event {
            Event::Start(e) | Event::Empty(e) if local_name(e.name().as_ref()) == b"pStyle" => {
                body.style = e
                    .attributes()
                    .flatten()
                    .find(|a| local_name(a.key.as_ref()) == b"val")
                    .map(|a| String::from_utf8_lossy(&a.value).into_owned());
            }
            Event::Start(e) | Event::Empty(e) => match local_name(e.name().as_ref()) {
                b"tab" => body.paragraph.push('\t'),
                b"br" | b"cr" => body.paragraph.push('\n'),
                b"tbl" => body.table_depth += 1,
                _ => {}
            },
            Event::Text(t) => {
                let text = t
                    .unescape()
                    .map_err(|e| ParseError::Corrupt(format!("DOCX text: {e}")))?;
                body.paragraph.push_str(&text);
            }
            Event::End(e) => match local_name(e.name().as_ref()) {
                b"p" => body.end_paragraph(),
                b"tc" => {
                    let cell = std::mem::take(&mut body.cell).join(" ");
                    body.row.push(cell);
                }
                b"tr" => {
                    let row = std::mem::take(&mut body.row).join(" | ");
                    body.rows.push(row);
                }
                b"tbl" => {
                    body.table_depth = body.table_depth.saturating_sub(1);
                    if body.table_depth == 0 {
                        body.end_table();
                    }
                }
                _ => {}
            },
            Event::Eof => break,
            _ => {}
        }
    }
    let title = read_part(&mut archive, "docProps/core.xml")?
        .as_deref()
        .and_then(core_title)
        .or(body.first_heading)
        .unwrap_or_else(|| Document::stem_of(raw));
    Ok(Parsed::one(Document::from_raw(raw, title, body.blocks)))
}

/// Test fixtures: minimal DOCX files.
#[cfg(test)]
pub(crate) mod fixtures {
    use std::io::Write;

    /// A DOCX whose body is the given WordprocessingML paragraphs/tables.
    pub fn docx(body_xml: &str) -> Vec<u8> {
        let mut out = std::io::Cursor::new(Vec::new());
        let mut zip = zip::ZipWriter::new(&mut out);
        let options = zip::write::SimpleFileOptions::default();
        zip.start_file("[Content_Types].xml", options).unwrap();
        zip.write_all(
            br#"<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>"#,
        )
        .unwrap();
        zip.start_file("word/document.xml", options).unwrap();
        let xml = format!(
            r#"<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>{body_xml}</w:body></w:document>"#
        );
        zip.write_all(xml.as_bytes()).unwrap();
        zip.finish().unwrap();
        out.into_inner()
    }

    pub fn paragraph(style: Option<&str>, text: &str) -> String {
        let style = style
            .map(|s| format!(r#"<w:pPr><w:pStyle w:val="{s}"/></w:pPr>"#))
            .unwrap_or_default();
        format!("<w:p>{style}<w:r><w:t>{text}</w:t></w:r></w:p>")
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::*;
    use crate::parse::{raw_for_test, AutoParser, ContentType, ParseError, Parser};

    #[test]
    fn headings_paragraphs_and_tables() {
        let table = format!(
            "<w:tbl><w:tr><w:tc>{}</w:tc><w:tc>{}</w:tc></w:tr><w:tr><w:tc>{}</w:tc><w:tc>{}</w:tc></w:tr></w:tbl>",
            paragraph(None, "k"),
            paragraph(None, "v"),
            paragraph(None, "1"),
            paragraph(None, "2")
        );
        let body = [
            paragraph(Some("Heading1"), "Plan"),
            paragraph(None, "Buy GPUs &amp; disks."),
            paragraph(Some("Heading2"), "Costs"),
            table,
        ]
        .concat();
        let doc = AutoParser
            .parse(&raw_for_test("plan.docx", docx(&body)))
            .unwrap()
            .documents
            .remove(0);
        assert_eq!(doc.title, "Plan");
        assert_eq!(doc.blocks[1].text, "Buy GPUs & disks.");
        assert_eq!(doc.blocks[1].heading_path, ["Plan"]);
        let table = doc.blocks.last().unwrap();
        assert_eq!(table.kind, ContentType::Table);
        assert_eq!(table.text, "k | v\n1 | 2");
        assert_eq!(table.heading_path, ["Plan", "Costs"]);
    }

    #[test]
    fn broken_docx_is_corrupt() {
        let mut bytes = docx(&paragraph(None, "x"));
        bytes.truncate(bytes.len() / 2);
        let err = AutoParser.parse(&raw_for_test("half.docx", bytes)).unwrap_err();
        assert!(matches!(err, ParseError::Corrupt(_)), "{err:?}");
    }
}
