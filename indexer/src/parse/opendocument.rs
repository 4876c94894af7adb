//! What OpenDocument's formats (ODT, ODS, ODP) share: the inline elements of their text
//! (`text:s`, `text:tab`, `text:line-break`), their tables' element names, and the parts of a
//! file whose text is left out.

use quick_xml::events::{BytesStart, Event};

use super::ooxml::{local_attribute, local_name, Package, PartReader};
use super::ParseError;

/// An OpenDocument file's package and its `content.xml`: fails a file whose content is
/// encrypted ([`refuse_encrypted`]) or that has none.
pub(super) fn open_content<'a>(bytes: &'a [u8], format: &'static str) -> Result<(Package<'a>, String), ParseError> {
    let mut package = Package::open(bytes, format)?;
    refuse_encrypted(&mut package, format)?;
    let xml = package
        .part("content.xml")?
        .ok_or_else(|| ParseError::Corrupt(format!("{format} has no content.xml")))?;
    Ok((package, xml))
}

/// Fails a file whose content is encrypted (saved with a password): its manifest gives
/// `content.xml` encryption data. A manifest that cannot be read changes nothing (the content
/// is read, or fails, on its own).
fn refuse_encrypted(package: &mut Package, format: &'static str) -> Result<(), ParseError> {
    let Some(manifest) = package.part("META-INF/manifest.xml")? else {
        return Ok(());
    };
    let mut reader = PartReader::new(&manifest, format, "META-INF/manifest.xml");
    let mut entry: Option<String> = None;
    while let Ok(event) = reader.next() {
        match event {
            Event::Start(e) | Event::Empty(e) => match local_name(e.name().as_ref()) {
                b"file-entry" => entry = local_attribute(&e, b"full-path"),
                b"encryption-data" if entry.as_deref() == Some("content.xml") => {
                    return Err(ParseError::Encrypted(format.into()))
                }
                _ => {}
            },
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(())
}

/// The whole number `element`'s attribute named `name` (without its prefix) holds, if any.
pub(super) fn count_attribute(element: &BytesStart, name: &[u8]) -> Option<usize> {
    local_attribute(element, name)?.trim().parse().ok()
}

/// The spaces a `text:s` stands for (`text:c`, 1 when it names none; at most 8: a run of
/// spaces is layout, and a file of many `text:s` naming a million each must not make
/// gigabytes of them).
fn spaces(element: &BytesStart) -> usize {
    count_attribute(element, b"c").unwrap_or(1).min(8)
}

/// Appends what an inline element of a paragraph stands for (spaces, a tab, a line break) to
/// `paragraph`; other elements add nothing.
pub(super) fn push_inline(element: &BytesStart, paragraph: &mut String) {
    match local_name(element.name().as_ref()) {
        b"s" => paragraph.push_str(&" ".repeat(spaces(element))),
        b"tab" => paragraph.push('\t'),
        b"line-break" => paragraph.push('\n'),
        _ => {}
    }
}

/// Whether an element (by its full name) holds text that is not the document's: tracked
/// deletions, comments, a note's mark (`text:note-citation`, the `1` after a word), generated
/// indexes (a table of contents, lists of figures, an alphabetical index), a shape's `svg:title` and `svg:desc` (alternative text, not what is
/// shown; a `text:title` field shows the document's title and is read).
pub(super) fn is_left_out(name: &[u8]) -> bool {
    match local_name(name) {
        b"tracked-changes" | b"annotation" | b"note-citation" => true,
        // Indexes the application generates: a table of contents (the headings' words again,
        // with page numbers), lists of figures and tables, an alphabetical index.
        b"table-of-content" | b"illustration-index" | b"table-index" | b"object-index" | b"alphabetical-index" => {
            name.starts_with(b"text:")
        }
        b"title" | b"desc" => !name.starts_with(b"text:"),
        _ => false,
    }
}

/// OpenDocument's table elements as [`super::ooxml::TableText`] names them.
pub(super) fn table_part(name: &[u8]) -> &[u8] {
    match name {
        b"table-cell" => b"tc",
        b"table-row" => b"tr",
        b"table" => b"tbl",
        _ => b"",
    }
}

/// Test fixtures: minimal OpenDocument files.
#[cfg(test)]
pub(crate) mod fixtures {
    /// An OpenDocument file of `kind` (`text`, `spreadsheet`, `presentation`) whose body is
    /// `body_xml`, with a title in its meta.xml if given.
    pub fn opendocument(kind: &str, body_xml: &str, title: Option<&str>) -> Vec<u8> {
        let ns = [
            ("office", "urn:oasis:names:tc:opendocument:xmlns:office:1.0"),
            ("text", "urn:oasis:names:tc:opendocument:xmlns:text:1.0"),
            ("table", "urn:oasis:names:tc:opendocument:xmlns:table:1.0"),
            ("draw", "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"),
            ("presentation", "urn:oasis:names:tc:opendocument:xmlns:presentation:1.0"),
            ("svg", "urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0"),
            ("dc", "http://purl.org/dc/elements/1.1/"),
        ]
        .map(|(prefix, uri)| format!(r#" xmlns:{prefix}="{uri}""#))
        .concat();
        let mut parts = vec![
            (
                "mimetype".to_string(),
                format!("application/vnd.oasis.opendocument.{kind}"),
            ),
            (
                "content.xml".to_string(),
                format!(
                    r#"<?xml version="1.0" encoding="UTF-8"?><office:document-content{ns}><office:body><office:{kind}>{body_xml}</office:{kind}></office:body></office:document-content>"#
                ),
            ),
        ];
        if let Some(title) = title {
            parts.push((
                "meta.xml".to_string(),
                format!(r#"<?xml version="1.0"?><office:document-meta{ns}><office:meta><dc:title>{title}</dc:title></office:meta></office:document-meta>"#),
            ));
        }
        crate::parse::ooxml::fixtures::package(&parts)
    }
}

#[cfg(test)]
mod tests {
    use crate::parse::{document_of, ooxml::fixtures::package};
    use crate::parse::{raw_for_test, AutoParser, ParseError, Parser};

    #[test]
    fn a_file_saved_with_a_password_is_encrypted() {
        let manifest = |content_entry: &str| {
            format!(
                r#"<?xml version="1.0"?><manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"><manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.oasis.opendocument.spreadsheet"/>{content_entry}</manifest:manifest>"#
            )
        };
        let encrypted_entry = r#"<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"><manifest:encryption-data manifest:checksum-type="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0#sha256-1k"><manifest:algorithm manifest:algorithm-name="http://www.w3.org/2001/04/xmlenc#aes256-cbc"/></manifest:encryption-data></manifest:file-entry>"#;
        let file = |manifest: String, content: &str| {
            package(&[
                (
                    "mimetype".to_string(),
                    "application/vnd.oasis.opendocument.spreadsheet".to_string(),
                ),
                ("META-INF/manifest.xml".to_string(), manifest),
                ("content.xml".to_string(), content.to_string()),
            ])
        };
        // The encrypted content is bytes no XML reader could take.
        let locked = file(manifest(encrypted_entry), "\u{1}\u{7f}");
        let err = AutoParser.parse(&raw_for_test("budget.ods", locked)).unwrap_err();
        assert_eq!(err, ParseError::Encrypted("ODS".into()));
        // A manifest naming content.xml without encryption data changes nothing.
        let plain_entry = r#"<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>"#;
        let open = file(
            manifest(plain_entry),
            r#"<office:document-content xmlns:office="o" xmlns:table="t" xmlns:text="x"><office:body><office:spreadsheet><table:table table:name="S"><table:table-row><table:table-cell><text:p>open</text:p></table:table-cell></table:table-row></table:table></office:spreadsheet></office:body></office:document-content>"#,
        );
        let doc = document_of("budget.ods", open);
        assert_eq!(doc.blocks[0].text, "open");
    }
}
