//! Office packages, Office Open XML's (DOCX, PPTX, XLSX), OpenDocument's (ODT) and EPUB's: a ZIP
//! archive of XML parts, read part by part within a budget of inflated bytes (a part's declared
//! size is whatever the file says), and the relationships that name one part from another.

use std::io::{Cursor, Read};

use super::ParseError;

/// Bytes one part may inflate to (the text of a 10,000-page document is far less).
const MAX_PART_BYTES: u64 = 128 << 20;

/// Bytes all the parts read from one package may inflate to together: a presentation of
/// thousands of slides, each under the part limit, is still bounded.
const MAX_PACKAGE_BYTES: u64 = 256 << 20;

/// A package being read: its archive, and what is left of its inflation budget.
pub(super) struct Package<'a> {
    archive: zip::ZipArchive<Cursor<&'a [u8]>>,
    /// `DOCX`, `PPTX`, `XLSX`, `ODT` or `EPUB`: named in every error.
    format: &'static str,
    budget: u64,
}

impl<'a> Package<'a> {
    pub fn open(bytes: &'a [u8], format: &'static str) -> Result<Self, ParseError> {
        if is_encrypted_office_package(bytes) {
            return Err(ParseError::Encrypted(format.into()));
        }
        let archive = zip::ZipArchive::new(Cursor::new(bytes))
            .map_err(|e| ParseError::Corrupt(format!("{format} is not a readable ZIP archive: {e}")))?;
        Ok(Self {
            archive,
            format,
            budget: MAX_PACKAGE_BYTES,
        })
    }

    /// The part `name` as text (none when the package has no such part).
    pub fn part(&mut self, name: &str) -> Result<Option<String>, ParseError> {
        let Some(bytes) = self.part_bytes(name)? else {
            return Ok(None);
        };
        String::from_utf8(bytes).map(Some).map_err(|e| {
            ParseError::Corrupt(format!(
                "{} part {name}: not UTF-8 at byte {}",
                self.format,
                e.utf8_error().valid_up_to()
            ))
        })
    }

    /// The part `name`'s bytes (none when the package has no such part).
    pub fn part_bytes(&mut self, name: &str) -> Result<Option<Vec<u8>>, ParseError> {
        let format = self.format;
        let mut file = match self.archive.by_name(name) {
            Ok(file) => file,
            Err(zip::result::ZipError::FileNotFound) => return Ok(None),
            Err(e) => return Err(ParseError::Corrupt(format!("{format} part {name}: {e}"))),
        };
        let limit = MAX_PART_BYTES.min(self.budget);
        // Room for the size the package states, up to the limit: a part read into a growing
        // vector held its old and new buffers at once as it doubled (a bomb's 128 MiB part
        // took over 300 MiB), and an understated size only grows it from there.
        let mut bytes = Vec::with_capacity(file.size().min(limit + 1) as usize);
        (&mut file)
            .take(limit + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| ParseError::Corrupt(format!("{format} part {name}: {e}")))?;
        if bytes.len() as u64 > limit {
            return Err(ParseError::Inflates {
                part: match limit < MAX_PART_BYTES {
                    true => format!("{format} parts up to {name}"),
                    false => format!("{format} part {name}"),
                },
                mib: limit >> 20,
            });
        }
        self.budget -= bytes.len() as u64;
        Ok(Some(bytes))
    }

    /// The format the package is read as (`DOCX`, `PPTX`, ...), for errors.
    pub fn format(&self) -> &'static str {
        self.format
    }

    /// The document title the package's core properties give (`docProps/core.xml`'s `dc:title`).
    pub fn core_title(&mut self) -> Result<Option<String>, ParseError> {
        self.title_in("docProps/core.xml")
    }

    /// The `dc:title` of part `name` (OpenDocument's is `meta.xml`).
    pub fn title_in(&mut self, name: &str) -> Result<Option<String>, ParseError> {
        Ok(self.part(name)?.as_deref().and_then(core_title))
    }

    /// The part the first of `relationships` whose type ends with `kind` (`/styles`) names:
    /// (its name, its text); none where no relationship has that type or the part is missing.
    pub fn related_part(
        &mut self,
        relationships: &[Relationship],
        kind: &str,
    ) -> Result<Option<(String, String)>, ParseError> {
        let Some(related) = relationships.iter().find(|r| r.kind.ends_with(kind)) else {
            return Ok(None);
        };
        Ok(self.part(&related.part)?.map(|xml| (related.part.clone(), xml)))
    }

    /// The relationships of part `source` (from its `_rels/<name>.rels`), their targets
    /// resolved to part names: `(id, type, part name)`, in the file's order.
    pub fn relationships(&mut self, source: &str) -> Result<Vec<Relationship>, ParseError> {
        let (folder, file) = source.rsplit_once('/').unwrap_or(("", source));
        let rels_name = match folder {
            "" => format!("_rels/{file}.rels"),
            folder => format!("{folder}/_rels/{file}.rels"),
        };
        let Some(xml) = self.part(&rels_name)? else {
            return Ok(Vec::new());
        };
        let mut reader = PartReader::new(&xml, self.format, &rels_name);
        let mut found = Vec::new();
        loop {
            match reader.next()? {
                quick_xml::events::Event::Start(e) | quick_xml::events::Event::Empty(e)
                    if local_name(e.name().as_ref()) == b"Relationship" =>
                {
                    let external = attribute(&e, b"TargetMode").is_some_and(|m| m == "External");
                    if let (Some(id), Some(kind), Some(target), false) = (
                        attribute(&e, b"Id"),
                        attribute(&e, b"Type"),
                        attribute(&e, b"Target"),
                        external,
                    ) {
                        found.push(Relationship {
                            id,
                            kind,
                            part: resolve(folder, &target),
                        });
                    }
                }
                quick_xml::events::Event::Eof => break,
                _ => {}
            }
        }
        Ok(found)
    }
}

/// Whether `bytes` are what Office saves for a package with a password: an OLE compound file
/// holding the package encrypted, as its `EncryptedPackage` stream (named in UTF-16 in the
/// compound file's directory).
pub(super) fn is_encrypted_office_package(bytes: &[u8]) -> bool {
    const OLE: &[u8] = b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1";
    let stream: Vec<u8> = "EncryptedPackage".encode_utf16().flat_map(u16::to_le_bytes).collect();
    bytes.starts_with(OLE) && bytes.windows(stream.len()).any(|w| w == stream)
}

/// A part's XML read event by event, its errors naming the format and the part. Of markup
/// compatibility's alternatives (`mc:AlternateContent`: the same content for newer readers,
/// `mc:Choice`, and for older ones, `mc:Fallback`, as Word writes each text box twice) only the
/// first is read: the text is read the same whatever markup carries it, so the others would
/// give it again.
pub(super) struct PartReader<'x> {
    reader: quick_xml::Reader<&'x [u8]>,
    format: &'static str,
    part: &'x str,
    /// For each `mc:AlternateContent` open, whether one of its alternatives was read.
    alternates: Vec<bool>,
}

impl<'x> PartReader<'x> {
    pub fn new(xml: &'x str, format: &'static str, part: &'x str) -> Self {
        Self {
            reader: quick_xml::Reader::from_str(xml),
            format,
            part,
            alternates: Vec::new(),
        }
    }

    /// The next event, past the alternatives not read.
    pub fn next(&mut self) -> Result<quick_xml::events::Event<'x>, ParseError> {
        use quick_xml::events::Event;
        loop {
            let event = self.reader.read_event().map_err(|e| self.corrupt(e))?;
            match &event {
                Event::Start(e) => match local_name(e.name().as_ref()) {
                    b"AlternateContent" => self.alternates.push(false),
                    b"Choice" | b"Fallback" => match self.alternates.last_mut() {
                        Some(true) => {
                            self.skip(e)?;
                            continue;
                        }
                        Some(read) => *read = true,
                        None => {}
                    },
                    _ => {}
                },
                Event::End(e) if local_name(e.name().as_ref()) == b"AlternateContent" => {
                    self.alternates.pop();
                }
                _ => {}
            }
            return Ok(event);
        }
    }

    /// Skips what the element `start` (just read) holds, to its end.
    pub fn skip(&mut self, start: &quick_xml::events::BytesStart) -> Result<(), ParseError> {
        self.reader.read_to_end(start.name()).map_err(|e| self.corrupt(e))?;
        Ok(())
    }

    fn corrupt(&self, error: quick_xml::Error) -> ParseError {
        ParseError::Corrupt(format!(
            "{} part {}: XML at byte {}: {error}",
            self.format,
            self.part,
            self.reader.buffer_position()
        ))
    }

    /// A text event's text, its entities replaced.
    pub fn text(&self, text: &quick_xml::events::BytesText<'x>) -> Result<String, ParseError> {
        text.unescape()
            .map(|t| t.into_owned())
            .map_err(|e| ParseError::Corrupt(format!("{} part {}: text: {e}", self.format, self.part)))
    }
}

/// A table's text as its elements end (DrawingML's and WordprocessingML's tables are alike):
/// a cell's paragraphs joined by a space, a row's cells by ` | `, the rows by line breaks. A
/// table inside a table is read into the outer one's cell (its rows joined by `; `), each table
/// open keeping its own rows.
#[derive(Default)]
pub(super) struct TableText {
    open: Vec<TableLevel>,
}

/// One open table's cell, row and rows so far.
#[derive(Default)]
struct TableLevel {
    cell: Vec<String>,
    row: Vec<String>,
    rows: Vec<String>,
}

impl TableText {
    /// Whether a table is being read (a paragraph ending now is a cell's).
    pub fn inside(&self) -> bool {
        !self.open.is_empty()
    }

    /// A table (`tbl`) starts.
    pub fn start(&mut self) {
        self.open.push(TableLevel::default());
    }

    /// A paragraph of the current cell.
    pub fn paragraph(&mut self, text: String) {
        if let Some(table) = self.open.last_mut() {
            table.cell.push(text);
        }
    }

    /// An element ends (by local name: `tc`, `tr`, `tbl`; others change nothing): the table's
    /// text once the outermost table ends, if it holds any.
    pub fn end(&mut self, name: &[u8]) -> Option<String> {
        let table = self.open.last_mut()?;
        match name {
            b"tc" => {
                let cell = std::mem::take(&mut table.cell).join(" ");
                table.row.push(cell);
            }
            b"tr" => {
                let row = std::mem::take(&mut table.row).join(" | ");
                table.rows.push(row);
            }
            b"tbl" => {
                let rows = self.open.pop().map(|t| t.rows).unwrap_or_default();
                let rows: Vec<String> = rows
                    .into_iter()
                    .filter(|r| !r.trim_matches([' ', '|']).is_empty())
                    .collect();
                match self.open.last_mut() {
                    Some(outer) if !rows.is_empty() => outer.cell.push(rows.join("; ")),
                    Some(_) => {}
                    None => return (!rows.is_empty()).then(|| rows.join("\n")),
                }
            }
            _ => {}
        }
        None
    }
}

/// One relationship of a part.
#[derive(Clone)]
pub(super) struct Relationship {
    pub id: String,
    /// The relationship type's URI (`.../relationships/slide`, `.../notesSlide`, ...).
    pub kind: String,
    /// The target's part name.
    pub part: String,
}

/// `target` (relative to `folder`, or absolute from the package root) as a part name.
pub(super) fn resolve(folder: &str, target: &str) -> String {
    let mut parts: Vec<&str> = match target.strip_prefix('/') {
        Some(_) => Vec::new(),
        None => folder.split('/').filter(|p| !p.is_empty()).collect(),
    };
    for piece in target.trim_start_matches('/').split('/') {
        match piece {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            piece => parts.push(piece),
        }
    }
    parts.join("/")
}

/// The value of `element`'s attribute named `key` (with its prefix, if it has one), its
/// entities replaced.
pub(super) fn attribute(element: &quick_xml::events::BytesStart, key: &[u8]) -> Option<String> {
    element
        .attributes()
        .flatten()
        .find(|a| a.key.as_ref() == key)
        .and_then(|a| a.unescape_value().ok().map(|v| v.into_owned()))
}

/// The value of `element`'s attribute named `name` under whatever prefix the file gives it
/// (`w:val`, `table:name`), its entities replaced, if it has one.
pub(super) fn local_attribute(element: &quick_xml::events::BytesStart, name: &[u8]) -> Option<String> {
    element
        .attributes()
        .flatten()
        .find(|a| local_name(a.key.as_ref()) == name)
        .and_then(|a| a.unescape_value().ok().map(|v| v.into_owned()))
}

/// An element or attribute name without its namespace prefix.
pub(super) fn local_name(name: &[u8]) -> &[u8] {
    name.rsplit(|b| *b == b':').next().unwrap_or(name)
}

fn core_title(core: &str) -> Option<String> {
    element_text(core, "dc:title")
}

/// The text of the first `<tag>` element of `xml` (a package's title: `dc:title`, HWPX's
/// `opf:title`), its entities replaced; none where it is missing or blank.
pub(super) fn element_text(xml: &str, tag: &str) -> Option<String> {
    let start = xml.find(&format!("<{tag}>"))? + tag.len() + 2;
    let end = xml[start..].find(&format!("</{tag}>"))? + start;
    let title = quick_xml::escape::unescape(xml[start..end].trim())
        .ok()?
        .trim()
        .to_string();
    (!title.is_empty()).then_some(title)
}

/// Test fixtures: a package of given parts.
#[cfg(test)]
pub(crate) mod fixtures {
    use std::io::Write;

    /// The relationship types' namespace.
    pub const REL: &str = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";

    /// A package of `parts` (name, XML) besides its content types.
    pub fn package(parts: &[(String, String)]) -> Vec<u8> {
        let mut out = std::io::Cursor::new(Vec::new());
        let mut zip = zip::ZipWriter::new(&mut out);
        let options = zip::write::SimpleFileOptions::default();
        zip.start_file("[Content_Types].xml", options).unwrap();
        zip.write_all(
            br#"<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>"#,
        )
        .unwrap();
        for (name, xml) in parts {
            // OpenDocument's and EPUB's `mimetype` is stored, as their standards ask.
            let options = match name.as_str() {
                "mimetype" => options.compression_method(zip::CompressionMethod::Stored),
                _ => options,
            };
            zip.start_file(name.as_str(), options).unwrap();
            zip.write_all(xml.as_bytes()).unwrap();
        }
        zip.finish().unwrap();
        out.into_inner()
    }

    /// The package `bytes` without its part `name` (a file that lost a part).
    pub fn without_part(bytes: &[u8], name: &str) -> Vec<u8> {
        let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
        let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        for i in 0..archive.len() {
            let part = archive.by_index_raw(i).unwrap();
            if part.name() != name {
                out.raw_copy_file(part).unwrap();
            }
        }
        out.finish().unwrap().into_inner()
    }

    /// A part's relationships part holding `relationships` (id, type's last word, target).
    pub fn relationships(relationships: &[(String, &str, String)]) -> String {
        let listed: String = relationships
            .iter()
            .map(|(id, kind, target)| format!(r#"<Relationship Id="{id}" Type="{REL}/{kind}" Target="{target}"/>"#))
            .collect();
        format!(
            r#"<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">{listed}</Relationships>"#
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only the first of markup compatibility's alternatives is read, at any depth; an
    /// alternative group of a fallback alone reads it.
    #[test]
    fn only_the_first_alternative_is_read() {
        let xml = concat!(
            r#"<r xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006">"#,
            r#"<mc:AlternateContent><mc:Choice Requires="wps"><t>box</t>"#,
            r#"<mc:AlternateContent><mc:Choice Requires="a14"><t>inner</t></mc:Choice><mc:Fallback><t>inner again</t></mc:Fallback></mc:AlternateContent>"#,
            r#"</mc:Choice><mc:Choice Requires="w14"><t>box again</t></mc:Choice><mc:Fallback><t>box in VML</t><mc:Fallback/></mc:Fallback></mc:AlternateContent>"#,
            r#"<t>after</t><mc:AlternateContent><mc:Fallback><t>only fallback</t></mc:Fallback></mc:AlternateContent></r>"#,
        );
        let mut reader = PartReader::new(xml, "DOCX", "word/document.xml");
        let mut texts = Vec::new();
        loop {
            match reader.next().unwrap() {
                quick_xml::events::Event::Text(t) => texts.push(reader.text(&t).unwrap()),
                quick_xml::events::Event::Eof => break,
                _ => {}
            }
        }
        assert_eq!(texts, ["box", "inner", "after", "only fallback"]);
    }

    #[test]
    fn targets_resolve_from_their_parts_folder() {
        assert_eq!(resolve("ppt", "slides/slide1.xml"), "ppt/slides/slide1.xml");
        assert_eq!(
            resolve("ppt/slides", "../notesSlides/notesSlide1.xml"),
            "ppt/notesSlides/notesSlide1.xml"
        );
        assert_eq!(resolve("xl", "/xl/worksheets/sheet2.xml"), "xl/worksheets/sheet2.xml");
        assert_eq!(resolve("", "../../x.xml"), "x.xml");
    }

    #[test]
    fn a_table_inside_a_cell_is_read_into_it_and_the_rows_around_it_are_kept() {
        let mut table = TableText::default();
        let row = |table: &mut TableText, cells: &[&str]| {
            for cell in cells {
                table.paragraph(cell.to_string());
                assert_eq!(table.end(b"tc"), None);
            }
            assert_eq!(table.end(b"tr"), None);
        };
        table.start();
        row(&mut table, &["Item", "Detail"]);
        table.paragraph("Pumps".into());
        table.end(b"tc");
        table.paragraph("see:".into());
        table.start();
        row(&mut table, &["P1", "ok"]);
        row(&mut table, &["P3", "seal worn"]);
        assert_eq!(table.end(b"tbl"), None, "the inner table ends inside the outer one");
        assert!(table.inside());
        table.end(b"tc");
        table.end(b"tr");
        row(&mut table, &["Valves", "ok"]);
        assert_eq!(
            table.end(b"tbl").as_deref(),
            Some("Item | Detail\nPumps | see: P1 | ok; P3 | seal worn\nValves | ok")
        );
        assert!(!table.inside());
    }

    #[test]
    fn core_titles_are_unescaped() {
        assert_eq!(
            core_title("<cp:coreProperties><dc:title>Q3 &amp; Q4 plan</dc:title></cp:coreProperties>").as_deref(),
            Some("Q3 & Q4 plan")
        );
        assert_eq!(core_title("<dc:title> </dc:title>"), None);
    }

    #[test]
    fn an_office_file_saved_with_a_password_is_encrypted() {
        use crate::parse::{raw_for_test, AutoParser, Parser};
        // An OLE compound file's header, then its directory naming the encrypted package.
        let ole = |stream: &str| {
            let mut bytes = b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1".to_vec();
            bytes.resize(1024, 0);
            bytes.extend(stream.encode_utf16().flat_map(u16::to_le_bytes));
            bytes.resize(4096, 0);
            bytes
        };
        let locked = ole("EncryptedPackage");
        let err = AutoParser
            .parse(&raw_for_test("plan.docx", locked.clone()))
            .unwrap_err();
        assert_eq!(err, ParseError::Encrypted("DOCX".into()));
        let err = AutoParser.parse(&raw_for_test("upload", locked)).unwrap_err();
        assert_eq!(err, ParseError::Encrypted("Office file".into()));
        // A Word 97-2003 file is a compound file too: read, not called encrypted.
        let old = super::super::compound_file::fixtures::REPORT_DOC;
        assert!(AutoParser.parse(&raw_for_test("upload", old)).is_ok());
    }
}
