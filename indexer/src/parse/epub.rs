//! EPUB (zip + XHTML chapters): the chapters in the book's reading order (its package's spine),
//! each read as an HTML page (headings giving heading paths, tables as table blocks); the
//! title from the package's metadata.

use std::collections::{HashMap, HashSet};

use quick_xml::events::Event;

use super::html::read_page;
use super::ooxml::{attribute, local_name, resolve, Package, PartReader};
use super::text::collapse_whitespace;
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
                if let Some(path) = attribute(&e, b"full-path") {
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
                let attribute = |key: &[u8]| attribute(&e, key);
                match local_name(e.name().as_ref()) {
                    b"title" if title.is_none() => in_title = true,
                    // The navigation document (EPUB 3's table of contents, `properties="nav"`)
                    // is the chapters' titles again: left out even where the spine lists it.
                    b"item" if !attribute(b"properties").is_some_and(|p| p.split_whitespace().any(|p| p == "nav")) => {
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
                let text = collapse_whitespace(&text);
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

/// Font obfuscation's algorithms (the EPUB standard's and Adobe's): every reader undoes them,
/// and they hide fonts, not text.
const FONT_OBFUSCATION: [&str; 2] = ["http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC"];

/// The parts `META-INF/encryption.xml` lists as encrypted with a key (DRM), fonts' obfuscation
/// aside. A list that cannot be read lists none (the chapters are read, or fail, on their own).
fn encrypted_parts(package: &mut Package) -> Result<HashSet<String>, ParseError> {
    let mut encrypted = HashSet::new();
    let Some(xml) = package.part("META-INF/encryption.xml")? else {
        return Ok(encrypted);
    };
    let mut reader = PartReader::new(&xml, "EPUB", "META-INF/encryption.xml");
    // The current `EncryptedData`'s algorithm and the parts it names.
    let (mut algorithm, mut parts) = (None::<String>, Vec::new());
    while let Ok(event) = reader.next() {
        match event {
            Event::Start(e) | Event::Empty(e) => match local_name(e.name().as_ref()) {
                b"EncryptionMethod" => algorithm = attribute(&e, b"Algorithm"),
                b"CipherReference" => parts.extend(attribute(&e, b"URI")),
                _ => {}
            },
            Event::End(e) if local_name(e.name().as_ref()) == b"EncryptedData" => {
                let obfuscated = algorithm.take().is_some_and(|a| FONT_OBFUSCATION.contains(&a.as_str()));
                for part in parts.drain(..) {
                    if !obfuscated {
                        encrypted.insert(resolve("", &percent_decoded(&part)));
                    }
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(encrypted)
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
    let encrypted = encrypted_parts(&mut package)?;
    if spine.chapters.iter().any(|chapter| encrypted.contains(chapter)) {
        return Err(ParseError::Encrypted("EPUB".into()));
    }
    let mut blocks = Vec::new();
    let mut first_heading = None;
    let mut read = HashSet::new();
    let mut missing = Vec::new();
    for chapter in spine.chapters {
        // A spine may name a chapter twice; it is read once.
        if !read.insert(chapter.clone()) {
            continue;
        }
        let Some(xhtml) = package.part(&chapter)? else {
            missing.push(format!(
                "chapter {chapter}, which the spine names, is not in the file; it was left out"
            ));
            continue;
        };
        let page = read_page(&xhtml);
        first_heading = first_heading.or(page.first_heading).or(page.title);
        blocks.extend(page.blocks);
    }
    let title = spine.title.or(first_heading).unwrap_or_else(|| Document::stem_of(raw));
    Ok(Parsed::one(
        Document::from_raw(raw, title, blocks).with_warnings(missing),
    ))
}

/// Test fixtures: minimal EPUB files.
#[cfg(test)]
pub(crate) mod fixtures {
    /// A book of `chapters` (file name, XHTML body) in that reading order, titled `title`.
    pub fn epub(title: &str, chapters: &[(&str, &str)]) -> Vec<u8> {
        epub_with(title, chapters, &[])
    }

    /// [`epub`] with `more` parts (name, text) besides.
    pub fn epub_with(title: &str, chapters: &[(&str, &str)], more: &[(&str, &str)]) -> Vec<u8> {
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
        parts.extend(more.iter().map(|(name, text)| (name.to_string(), text.to_string())));
        crate::parse::ooxml::fixtures::package(&parts)
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::epub;
    use super::*;
    use crate::parse::{document_of, outline_of, raw_for_test, AutoParser, ContentType, Parser};

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
        let doc = document_of("zauberberg.epub", book);
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
    fn a_chapter_missing_from_the_file_is_told() {
        use crate::parse::ooxml::fixtures::without_part;
        let chapters = [("one.xhtml", "<p>Tides turn.</p>"), ("two.xhtml", "<p>Lost.</p>")];
        let book = epub("Tides", &chapters);
        let whole = AutoParser.parse(&raw_for_test("t.epub", book.clone())).unwrap();
        assert!(whole.documents[0].warnings.is_empty());
        let book = without_part(&book, "OEBPS/two.xhtml");
        let doc = document_of("t.epub", book);
        let texts: Vec<&str> = doc.blocks.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(texts, ["Tides turn."]);
        assert_eq!(
            doc.warnings,
            ["chapter OEBPS/two.xhtml, which the spine names, is not in the file; it was left out"]
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

    #[test]
    fn a_book_under_drm_is_encrypted_and_obfuscated_fonts_are_not() {
        let encryption = |algorithm: &str, uri: &str| {
            format!(
                r#"<?xml version="1.0"?><encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData><enc:EncryptionMethod Algorithm="{algorithm}"/><enc:CipherData><enc:CipherReference URI="{uri}"/></enc:CipherData></enc:EncryptedData></encryption>"#
            )
        };
        let chapters = [("c%201.xhtml", "<p>Chapter text.</p>")];
        let drm = encryption("http://www.w3.org/2001/04/xmlenc#aes128-cbc", "OEBPS/c%201.xhtml");
        let book = super::fixtures::epub_with("Locked", &chapters, &[("META-INF/encryption.xml", &drm)]);
        let err = AutoParser.parse(&raw_for_test("locked.epub", book)).unwrap_err();
        assert_eq!(err, ParseError::Encrypted("EPUB".into()));
        assert_eq!(
            err.to_string(),
            "EPUB is encrypted (saved with a password, or under DRM). Please upload an unlocked version."
        );
        let fonts = encryption("http://www.idpf.org/2008/embedding", "OEBPS/fonts/serif.otf");
        let book = super::fixtures::epub_with("Open", &chapters, &[("META-INF/encryption.xml", &fonts)]);
        let doc = document_of("open.epub", book);
        assert_eq!(doc.blocks[0].text, "Chapter text.");
    }

    #[test]
    fn the_navigation_document_is_left_out_of_the_reading_order() {
        let opf = r#"<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Tides</dc:title></metadata><manifest><item id="nav" href="nav.xhtml" properties="nav scripted"/><item id="c1" href="text/one.xhtml"/><item id="c2" href="text/two.xhtml" properties="svg"/></manifest><spine><itemref idref="nav"/><itemref idref="c1"/><itemref idref="c2"/></spine></package>"#;
        let spine = super::read_spine(opf, "OEBPS/content.opf").unwrap();
        assert_eq!(spine.title.as_deref(), Some("Tides"));
        assert_eq!(spine.chapters, ["OEBPS/text/one.xhtml", "OEBPS/text/two.xhtml"]);
    }
}
