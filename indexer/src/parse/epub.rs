//! EPUB (zip + XHTML chapters): the chapters in the book's reading order (its package's spine),
//! each read as an HTML page (headings giving heading paths, tables as table blocks); the
//! title from the package's metadata.

use std::collections::HashMap;

use quick_xml::events::Event;

use super::html::read_page;
use super::ooxml::{local_name, resolve, Package, PartReader};
use super::{Document, ParseError, Parsed};
use crate::source::RawDocument;

/// What the package document (the OPF) says: the title, and the chapters' part names in
/// reading order.
struct Spine {
    title: Option<String>,
    chapters: Vec<String>,
}

/// The package document's part name, from `META-INF/container.xml`'s first `rootfile`.
fn package_document(package: &mut Package) -> Result<String, ParseError> {
    let container = package
        .part("META-INF/container.xml")?
        .ok_or_else(|| ParseError::Corrupt("EPUB has no META-INF/container.xml".into()))?;
    let mut reader = PartReader::new(&container, "EPUB", "META-INF/container.xml");
    loop {
        match reader.next()? {
            Event::Start(e) | Event::Empty(e) if local_name(e.name().as_ref()) == b"rootfile" => {
                let path = e
                    .attributes()
                    .flatten()
                    .find(|a| a.key.as_ref() == b"full-path")
                    .and_then(|a| a.unescape_value().ok().map(|v| v.into_owned()));
                if let Some(path) = path {
                    return Ok(resolve("", &percent_decoded(&path)));
                }
            }
            Event::Eof => return Err(ParseError::Corrupt("EPUB's container names no package document".into())),
            _ => {}
        }
    }
}

/// The spine of the package document `opf` (at part `name`).
fn read_spine(opf: &str, name: &str) -> Result<Spine, ParseError> {
    let folder = name.rsplit_once('/').map_or("", |(folder, _)| folder);
    let mut reader = PartReader::new(opf, "EPUB", name);
    let (mut title, mut in_title) = (None::<String>, false);
    let mut manifest: HashMap<String, String> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    loop {
        match reader.next()? {
            Event::Start(e) | Event::Empty(e) => {
                let attribute = |key: &[u8]| {
                    e.attributes()
                        .flatten()
                        .find(|a| a.key.as_ref() == key)
                        .and_then(|a| a.unescape_value().ok().map(|v| v.into_owned()))
                };
                match local_name(e.name().as_ref()) {
                    b"title" if title.is_none() => in_title = true,
                    b"item" => {
                        if let (Some(id), Some(href)) = (attribute(b"id"), attribute(b"href")) {
                            manifest.insert(id, resolve(folder, &percent_decoded(&href)));
                        }
                    }
                    b"itemref" if attribute(b"linear").as_deref() != Some("no") => {
                        order.extend(attribute(b"idref"));
                    }
                    _ => {}
                }
            }
            Event::Text(t) if in_title => {
                let text = reader.text(&t)?;
                let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
                title = (!text.is_empty()).then_some(text);
            }
            Event::End(e) if local_name(e.name().as_ref()) == b"title" => in_title = false,
            Event::Eof => break,
            _ => {}
        }
    }
    let chapters = order.iter().filter_map(|id| manifest.get(id).cloned()).collect();
    Ok(Spine { title, chapters })
}

/// A URL path with its `%XX` escapes decoded (an href may escape a space in a file name).
fn percent_decoded(href: &str) -> String {
    let bytes = href.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let hex = bytes
            .get(at + 1..at + 3)
            .and_then(|h| u8::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok());
        match (bytes[at], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                at += 3;
            }
            (byte, _) => {
                out.push(byte);
                at += 1;
            }
        }
    }
    // A fragment names a place in the chapter, not another part.
    let decoded = String::from_utf8_lossy(&out).into_owned();
    decoded.split('#').next().unwrap_or_default().to_string()
}

pub(super) fn parse(raw: &RawDocument) -> Result<Parsed, ParseError> {
    let mut package = Package::open(&raw.bytes, "EPUB")?;
    let opf_name = package_document(&mut package)?;
    let opf = package
        .part(&opf_name)?
        .ok_or_else(|| ParseError::Corrupt(format!("EPUB has no package document {opf_name}")))?;
    let spine = read_spine(&opf, &opf_name)?;
    let mut blocks = Vec::new();
    let mut first_heading = None;
    let mut read = std::collections::HashSet::new();
    for chapter in spine.chapters {
        // A spine may name a chapter twice; it is read once.
        if !read.insert(chapter.clone()) {
            continue;
        }
        let Some(xhtml) = package.part(&chapter)? else {
            continue;
        };
        let page = read_page(&xhtml);
        first_heading = first_heading.or(page.first_heading).or(page.title);
        blocks.extend(page.blocks);
    }
    let title = spine.title.or(first_heading).unwrap_or_else(|| Document::stem_of(raw));
    Ok(Parsed::one(Document::from_raw(raw, title, blocks)))
}

/// Test fixtures: minimal EPUB files.
#[cfg(test)]
pub(crate) mod fixtures {
    /// A book of `chapters` (file name, XHTML body) in that reading order, titled `title`.
    pub fn epub(title: &str, chapters: &[(&str, &str)]) -> Vec<u8> {
        let manifest: String = chapters
            .iter()
            .enumerate()
            .map(|(i, (file, _))| format!(r#"<item id="c{i}" href="{file}" media-type="application/xhtml+xml"/>"#))
            .collect();
        let spine: String = (0..chapters.len())
            .map(|i| format!(r#"<itemref idref="c{i}"/>"#))
            .collect();
        let mut parts = vec![
            ("mimetype".to_string(), "application/epub+zip".to_string()),
            (
                "META-INF/container.xml".to_string(),
                r#"<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>"#.to_string(),
            ),
            (
                "OEBPS/content.opf".to_string(),
                format!(r#"<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title id="t">{title}</dc:title></metadata><manifest>{manifest}</manifest><spine>{spine}</spine></package>"#),
            ),
        ];
        for (file, body) in chapters {
            parts.push((
                format!("OEBPS/{}", file.replace("%20", " ")),
                format!(r#"<?xml version="1.0" encoding="UTF-8"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>{file}</title></head><body>{body}</body></html>"#),
            ));
        }
        crate::parse::ooxml::fixtures::package(&parts)
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::epub;
    use super::*;
    use crate::parse::{outline_of, raw_for_test, AutoParser, ContentType, Parser};

    #[test]
    fn chapters_in_reading_order_with_their_headings() {
        let book = epub(
            "Der Zauberberg",
            &[
                ("text/ch2.xhtml", "<h1>Kapitel 2</h1><p>Hans Castorp kam im Sanatorium an.</p>"),
                (
                    "text/chapter%20one.xhtml",
                    "<h1>Kapitel 1</h1><p>Ein einfacher junger Mensch reiste im Hochsommer.</p><table><tr><td>Davos</td><td>1907</td></tr></table>",
                ),
            ],
        );
        let doc = AutoParser
            .parse(&raw_for_test("zauberberg.epub", book))
            .unwrap()
            .documents
            .remove(0);
        assert_eq!(doc.title, "Der Zauberberg");
        assert_eq!(
            outline_of(&doc),
            [
                ("Kapitel 2", vec!["Kapitel 2"], ContentType::Text),
                (
                    "Hans Castorp kam im Sanatorium an.",
                    vec!["Kapitel 2"],
                    ContentType::Text
                ),
                ("Kapitel 1", vec!["Kapitel 1"], ContentType::Text),
                (
                    "Ein einfacher junger Mensch reiste im Hochsommer.",
                    vec!["Kapitel 1"],
                    ContentType::Text
                ),
                ("Davos | 1907", vec!["Kapitel 1"], ContentType::Table),
            ]
        );
    }

    #[test]
    fn hrefs_are_decoded_and_a_book_without_its_container_is_corrupt() {
        assert_eq!(percent_decoded("text/chapter%20one.xhtml#p3"), "text/chapter one.xhtml");
        assert_eq!(percent_decoded("100%.xhtml"), "100%.xhtml");
        let docx = crate::parse::docx::fixtures::docx("");
        let err = AutoParser.parse(&raw_for_test("wrong.epub", docx)).unwrap_err();
        assert_eq!(err, ParseError::Corrupt("EPUB has no META-INF/container.xml".into()));
    }
}
