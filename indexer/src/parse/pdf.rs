//! PDF: text per page (pdf-extract over lopdf, [`super::pdf_text`]), 1-based page numbers, and
//! heading paths from the outline or from font sizes ([`super::pdf_headings`]);
//! password-protected, scanned-only and corrupt files are told apart.

use std::collections::BTreeMap;

use lopdf::{Document as PdfDocument, Object, ObjectId};

use super::pdf_fonts::set_aside_damaged_font_parts;
use super::pdf_headings::{blocks, PageLines};
use super::pdf_hyphens::join_hyphenated_words;
use super::pdf_outline::outline;
use super::pdf_page_tree::{cut_parent_loops, give_pages_a_media_box};
use super::pdf_text::{page_lines, Line};
use super::{Document, ParseError, Parsed};
use crate::source::RawDocument;

fn has_images(pdf: &PdfDocument) -> bool {
    pdf.objects.values().any(|object| match object {
        Object::Stream(stream) => stream
            .dict
            .get(b"Subtype")
            .and_then(Object::as_name)
            .map(|n| n == b"Image")
            .unwrap_or(false),
        _ => false,
    })
}

fn pdf_title(pdf: &PdfDocument) -> Option<String> {
    let info = pdf.trailer.get(b"Info").ok()?;
    let info = match info {
        Object::Reference(id) => pdf.get_dictionary(*id).ok()?,
        Object::Dictionary(dict) => dict,
        _ => return None,
    };
    let title = info.get(b"Title").ok()?.as_str().ok()?;
    let title = String::from_utf8_lossy(title).trim().to_string();
    (!title.is_empty()).then_some(title)
}

/// Bytes the streams text is read from may inflate to, all of a file's together: 20 times
/// the file, at least 64 MiB and at most 1 GiB (text compresses 3-10 times; a stream of a
/// hundred times more is a bomb, and the text extractor would hold all of it).
fn inflate_budget(file_bytes: usize) -> u64 {
    (file_bytes as u64).saturating_mul(20).clamp(64 << 20, 1 << 30)
}

/// Checks that the file's Flate streams (images left out: their pixels are never read)
/// inflate to no more than `budget` bytes together, counting them through a sink: memory
/// stays flat, and a bomb fails here with its own message before anything holds it.
fn check_inflated_size(pdf: &PdfDocument, budget: u64) -> Result<(), ParseError> {
    use std::io::Read;
    let mut total = 0u64;
    for object in pdf.objects.values() {
        let Object::Stream(stream) = object else { continue };
        let is_image = stream
            .dict
            .get(b"Subtype")
            .and_then(Object::as_name)
            .map(|n| n == b"Image")
            .unwrap_or(false);
        let filter = match stream.dict.get(b"Filter") {
            Ok(Object::Name(name)) => Some(name.as_slice()),
            Ok(Object::Array(filters)) => filters.first().and_then(|f| f.as_name().ok()),
            _ => None,
        };
        if is_image || filter != Some(b"FlateDecode".as_slice()) {
            continue;
        }
        let mut decoder = flate2::read::ZlibDecoder::new(stream.content.as_slice()).take(budget - total + 1);
        // A stream that does not inflate cleanly counts what it gave (the extractor reports it).
        total += std::io::copy(&mut decoder, &mut std::io::sink()).unwrap_or(0);
        if total > budget {
            return Err(ParseError::Inflates {
                part: "PDF streams".into(),
                mib: budget >> 20,
            });
        }
    }
    Ok(())
}

/// Why a page's text could not be read: the reader's error, or where it stopped (panicked)
/// on what the page holds.
enum Unread {
    Failed(pdf_extract::OutputError),
    Stopped(String),
}

impl std::fmt::Display for Unread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unread::Failed(e) => write!(f, "{e}"),
            Unread::Stopped(why) => write!(f, "the PDF reader stopped: {why}"),
        }
    }
}

/// Page `page`'s lines; the PDF reader's panic on a page is that page's error, so one page
/// it cannot read does not lose the others.
fn read_page(pdf: &PdfDocument, page: u32) -> Result<Vec<Line>, Unread> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| page_lines(pdf, page))) {
        Ok(read) => read.map_err(Unread::Failed),
        Err(panic) => Err(Unread::Stopped(
            panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "no reason given".into()),
        )),
    }
}

/// Every page's lines, in order (`page_tree`: the pages' numbers and dictionaries). A page whose text cannot be read is left out and told in
/// the second value (a warning); the first page's error is the file's when no page can be read.
fn pages_of(
    pdf: &PdfDocument,
    page_tree: &BTreeMap<u32, ObjectId>,
) -> Result<(Vec<PageLines>, Option<String>), ParseError> {
    let mut pages = Vec::new();
    let mut unread = Vec::new();
    let mut first_error = None;
    for &page in page_tree.keys() {
        match read_page(pdf, page) {
            Ok(lines) => pages.push(PageLines { page, lines }),
            Err(e) => {
                tracing::debug!("PDF page {page}: text could not be extracted: {e}");
                unread.push(page);
                first_error.get_or_insert(e);
            }
        }
    }
    match (pages.is_empty(), first_error) {
        (true, Some(e)) => Err(match e {
            Unread::Failed(pdf_extract::OutputError::PdfError(lopdf::Error::Decryption(_))) => {
                ParseError::PasswordProtected
            }
            other => ParseError::Corrupt(format!("PDF text could not be extracted: {other}")),
        }),
        (_, first_error) => {
            let warning = first_error.map(|e| unread_pages_warning(&unread, pages.len() + unread.len(), &e));
            Ok((pages, warning))
        }
    }
}

/// Pages listed in a warning at most.
const PAGES_NAMED: usize = 10;

/// The warning for `unread` pages of `count`, the first of which failed with `first`.
fn unread_pages_warning(unread: &[u32], count: usize, first: &Unread) -> String {
    let mut named: Vec<String> = unread.iter().take(PAGES_NAMED).map(u32::to_string).collect();
    if unread.len() > PAGES_NAMED {
        named.push(format!("and {} more", unread.len() - PAGES_NAMED));
    }
    let (noun, pronoun) = match unread.len() {
        1 => ("page", "it was"),
        _ => ("pages", "they were"),
    };
    format!(
        "{noun} {} of {count}: text could not be extracted ({first}); {pronoun} left out",
        named.join(", ")
    )
}

pub(super) fn parse(raw: &RawDocument) -> Result<Parsed, ParseError> {
    let mut pdf = PdfDocument::load_mem(&raw.bytes).map_err(|e| match e {
        lopdf::Error::Decryption(_) => ParseError::PasswordProtected,
        other => ParseError::Corrupt(format!("PDF could not be parsed: {other}")),
    })?;
    if pdf.is_encrypted() {
        // Opened with the empty user password, as a viewer would, or not at all.
        if pdf.authenticate_password("").is_err() || pdf.decrypt("").is_err() {
            return Err(ParseError::PasswordProtected);
        }
    }
    // The pages' numbers and dictionaries (mending fonts and parent links below leaves them).
    let page_tree = pdf.get_pages();
    let page_count = page_tree.len();
    if page_count == 0 {
        return Err(ParseError::Corrupt("PDF has no pages".into()));
    }
    check_inflated_size(&pdf, inflate_budget(raw.bytes.len()))?;
    let damaged_fonts = set_aside_damaged_font_parts(&mut pdf);
    let parent_loops = cut_parent_loops(&mut pdf, page_tree.values().copied());
    give_pages_a_media_box(&mut pdf, page_tree.values().copied());
    let (mut pages, unread_pages) = pages_of(&pdf, &page_tree)?;
    join_hyphenated_words(&mut pages);
    let blocks = blocks(&pages, &outline(&pdf));
    if blocks.is_empty() {
        return Err(if has_images(&pdf) {
            ParseError::ScannedOnly
        } else {
            ParseError::NoText
        });
    }
    let title = pdf_title(&pdf).unwrap_or_else(|| Document::stem_of(raw));
    let mut document = Document::from_raw(raw, title, blocks)
        .with_warnings(damaged_fonts.into_iter().chain(parent_loops).chain(unread_pages));
    document.metadata.insert("page_count".into(), page_count.into());
    Ok(Parsed::one(document))
}

/// Test fixtures: small PDFs built with lopdf.
#[cfg(test)]
pub(crate) mod fixtures {
    use lopdf::content::{Content, Operation};
    use lopdf::{dictionary, Document, Object, Stream};

    /// A line of a fixture page: its font size and text.
    pub struct PdfLine {
        pub size: f32,
        pub text: &'static str,
    }

    impl PdfLine {
        pub fn new(size: f32, text: &'static str) -> Self {
            Self { size, text }
        }
    }

    /// A PDF whose pages hold the given texts, one line per page, at 12 points.
    pub fn pdf_with_pages(pages: &[&'static str]) -> Document {
        let pages: Vec<Vec<PdfLine>> = pages.iter().map(|text| vec![PdfLine::new(12.0, text)]).collect();
        let pages: Vec<&[PdfLine]> = pages.iter().map(Vec::as_slice).collect();
        pdf_with_lines(&pages)
    }

    /// A PDF whose pages hold the given lines, from the top down, each 1.3 times its size
    /// below the one before, and a blank line's height more after a line larger than the next.
    pub fn pdf_with_lines(pages: &[&[PdfLine]]) -> Document {
        let mut doc = Document::with_version("1.5");
        let pages_id = doc.new_object_id();
        let font_id = doc.add_object(dictionary! {
            "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica", "Encoding" => "WinAnsiEncoding",
        });
        let resources_id = doc.add_object(dictionary! { "Font" => dictionary! { "F1" => font_id } });
        let mut kids = Vec::new();
        for lines in pages {
            let mut operations = Vec::new();
            let mut y = 760.0f32;
            let mut previous: Option<f32> = None;
            for line in lines.iter() {
                if let Some(previous) = previous {
                    y -= previous * 1.3 + if previous > line.size { line.size * 1.5 } else { 0.0 };
                }
                previous = Some(line.size);
                operations.extend([
                    Operation::new("BT", vec![]),
                    Operation::new("Tf", vec!["F1".into(), line.size.into()]),
                    Operation::new("Td", vec![72.into(), y.into()]),
                    Operation::new("Tj", vec![Object::string_literal(line.text)]),
                    Operation::new("ET", vec![]),
                ]);
            }
            let content = Content { operations };
            let content_id = doc.add_object(Stream::new(dictionary! {}, content.encode().unwrap()));
            let page_id = doc.add_object(dictionary! {
                "Type" => "Page", "Parent" => pages_id, "Contents" => content_id,
            });
            kids.push(page_id.into());
        }
        let count = kids.len() as i64;
        doc.objects.insert(
            pages_id,
            Object::Dictionary(dictionary! {
                "Type" => "Pages", "Kids" => kids, "Count" => count,
                "Resources" => resources_id, "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
            }),
        );
        let catalog_id = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
        doc.trailer.set("Root", catalog_id);
        doc
    }

    /// The document with an outline of (level, title, page number) entries, in order (a level
    /// at most one deeper than the entry before).
    pub fn with_outline(mut doc: Document, entries: &[(usize, &str, u32)]) -> Document {
        let pages = doc.get_pages();
        let mut parents: Vec<u32> = Vec::new();
        for &(level, title, page) in entries {
            parents.truncate(level - 1);
            let bookmark = lopdf::Bookmark::new(title.to_string(), [0.0; 3], 0, pages[&page]);
            let id = doc.add_bookmark(bookmark, parents.last().copied());
            parents.push(id);
        }
        let outline = doc.build_outline().expect("an outline");
        let catalog = doc.catalog_mut().unwrap();
        catalog.set("Outlines", outline);
        doc
    }

    pub fn to_bytes(mut doc: Document) -> Vec<u8> {
        let mut out = Vec::new();
        doc.save_to(&mut out).unwrap();
        out
    }

    /// The same document, encrypted with a user password.
    pub fn encrypted(doc: Document) -> Vec<u8> {
        use lopdf::encryption::{EncryptionState, EncryptionVersion, Permissions};
        let mut doc = doc;
        let id = Object::string_literal(b"0123456789abcdef".to_vec());
        doc.trailer.set("ID", vec![id.clone(), id]);
        let state = EncryptionState::try_from(EncryptionVersion::V1 {
            document: &doc,
            owner_password: "owner",
            user_password: "secret",
            permissions: Permissions::default(),
        })
        .unwrap();
        doc.encrypt(&state).unwrap();
        to_bytes(doc)
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::*;
    use crate::parse::{document_of, raw_for_test, AutoParser, ParseError, Parser};

    #[test]
    fn two_page_pdf_keeps_page_numbers() {
        let bytes = to_bytes(pdf_with_pages(&["Alpha page text", "Beta page text"]));
        let doc = document_of("report.pdf", bytes);
        assert_eq!(doc.blocks.len(), 2, "{:?}", doc.blocks);
        assert_eq!(doc.blocks[0].page, Some(1));
        assert!(doc.blocks[0].text.contains("Alpha"), "{:?}", doc.blocks[0]);
        assert_eq!(doc.blocks[1].page, Some(2));
        assert!(doc.blocks[1].text.contains("Beta"));
        assert_eq!(doc.metadata["page_count"], 2);
        assert!(
            doc.blocks.iter().all(|b| b.heading_path.is_empty()),
            "one size, no outline: no headings"
        );
    }

    #[test]
    fn headings_come_from_font_sizes_without_an_outline() {
        let bytes = to_bytes(pdf_with_lines(&[
            &[
                PdfLine::new(20.0, "Field Guide"),
                PdfLine::new(11.0, "Birds of the northern coast, and where to see them."),
                PdfLine::new(15.0, "Gulls"),
                PdfLine::new(11.0, "Gulls nest on the cliffs in spring."),
            ],
            &[
                PdfLine::new(11.0, "They winter inland."),
                PdfLine::new(15.0, "Terns"),
                PdfLine::new(11.0, "Terns dive for sand eels."),
            ],
        ]));
        let doc = document_of("guide.pdf", bytes);
        let path_of = |needle: &str| {
            let block = doc.blocks.iter().find(|b| b.text.contains(needle)).unwrap();
            (block.page.unwrap(), block.heading_path.clone())
        };
        assert_eq!(
            path_of("cliffs"),
            (1, vec!["Field Guide".to_string(), "Gulls".to_string()])
        );
        assert_eq!(
            path_of("inland"),
            (2, vec!["Field Guide".to_string(), "Gulls".to_string()])
        );
        assert_eq!(
            path_of("sand eels"),
            (2, vec!["Field Guide".to_string(), "Terns".to_string()])
        );
        assert_eq!(path_of("northern coast"), (1, vec!["Field Guide".to_string()]));
    }

    #[test]
    fn words_hyphenated_at_line_ends_are_whole_in_the_text() {
        let bytes = to_bytes(pdf_with_lines(&[&[
            PdfLine::new(11.0, "The Danube steamship company, the Donau-"),
            PdfLine::new(11.0, "dampfschifffahrtsgesellschaft, kept a well-"),
            PdfLine::new(11.0, "known fleet; its well-known ships sailed to Vienna."),
        ]]));
        let doc = document_of("fleet.pdf", bytes);
        let text = &doc.blocks[0].text;
        assert!(
            text.contains("the Donaudampfschifffahrtsgesellschaft,\nkept a well-known\nfleet;"),
            "{text:?}"
        );
    }

    /// A page that is its own parent, and no media box in the tree: the reader followed the
    /// loop without end (until the worker's deadline); now the loop is cut, and both pages are
    /// read as US Letter.
    #[test]
    fn a_page_tree_that_loops_is_read_once_its_loop_is_cut() {
        let mut doc = pdf_with_pages(&["Looping page text", "Second page text"]);
        let pages = doc.get_pages();
        let (first, second) = (pages[&1], pages[&2]);
        let tree = doc
            .get_dictionary(second)
            .unwrap()
            .get(b"Parent")
            .unwrap()
            .as_reference()
            .unwrap();
        let resources = doc.get_dictionary(tree).unwrap().get(b"Resources").unwrap().clone();
        let looping = doc.get_dictionary_mut(first).unwrap();
        looping.set("Parent", first);
        looping.set("Resources", resources);
        doc.get_dictionary_mut(tree).unwrap().remove(b"MediaBox");
        let doc = document_of("loop.pdf", to_bytes(doc));
        let texts: Vec<&str> = doc.blocks.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(texts, ["Looping page text", "Second page text"]);
        assert_eq!(
            doc.warnings,
            ["the page tree's parent links looped once; the loop was cut"]
        );
    }

    #[test]
    fn headings_come_from_the_outline_when_there_is_one() {
        let pdf = pdf_with_lines(&[
            &[
                PdfLine::new(12.0, "Setup"),
                PdfLine::new(12.0, "Install the package first."),
            ],
            &[
                PdfLine::new(12.0, "Then configure it."),
                PdfLine::new(12.0, "Usage"),
                PdfLine::new(12.0, "Run it daily."),
            ],
        ]);
        let pdf = with_outline(pdf, &[(1, "Setup", 1), (2, "Install", 1), (1, "Usage", 2)]);
        let doc = document_of("manual.pdf", to_bytes(pdf));
        let path_of = |needle: &str| {
            doc.blocks
                .iter()
                .find(|b| b.text.contains(needle))
                .unwrap()
                .heading_path
                .clone()
        };
        assert_eq!(path_of("Install the package"), ["Setup", "Install"], "{:?}", doc.blocks);
        assert_eq!(
            path_of("configure"),
            ["Setup", "Install"],
            "a page goes on under the last heading"
        );
        assert_eq!(path_of("daily"), ["Usage"]);
    }

    #[test]
    fn password_protected_pdf_says_so() {
        let bytes = encrypted(pdf_with_pages(&["Top secret"]));
        let err = AutoParser.parse(&raw_for_test("locked.pdf", bytes)).unwrap_err();
        assert_eq!(err, ParseError::PasswordProtected);
        assert_eq!(
            err.to_string(),
            "PDF is password-protected. Please upload an unlocked version."
        );
    }

    #[test]
    fn a_flate_bomb_fails_with_its_own_message() {
        use std::io::Write;
        // 200 MiB of spaces in a 200 KB stream: past the 64 MiB floor of a small file's budget.
        let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        let spaces = vec![b' '; 1 << 20];
        for _ in 0..200 {
            encoder.write_all(&spaces).unwrap();
        }
        let bomb = encoder.finish().unwrap();
        let mut doc = pdf_with_pages(&["Alpha"]);
        doc.add_object(lopdf::Stream::new(
            lopdf::dictionary! { "Filter" => "FlateDecode" },
            bomb,
        ));
        let err = AutoParser.parse(&raw_for_test("bomb.pdf", to_bytes(doc))).unwrap_err();
        assert_eq!(
            err,
            ParseError::Inflates {
                part: "PDF streams".into(),
                mib: 64
            }
        );
        assert!(
            err.to_string()
                .starts_with("PDF streams: more than 64 MiB once inflated"),
            "{err}"
        );
    }

    #[test]
    fn a_page_that_cannot_be_read_is_left_out_and_told() {
        let mut pdf = pdf_with_pages(&["Alpha page text", "Beta page text", "Gamma page text"]);
        // Page 2 sets a font by a number, not a name: the PDF reader stops (panics) on it.
        let page_two = pdf.get_pages()[&2];
        let broken = pdf.add_object(lopdf::Stream::new(
            lopdf::dictionary! {},
            b"BT 1 12 Tf 72 760 Td (Beta page text) Tj ET".to_vec(),
        ));
        pdf.get_object_mut(page_two)
            .and_then(lopdf::Object::as_dict_mut)
            .unwrap()
            .set("Contents", broken);
        let doc = document_of("report.pdf", to_bytes(pdf));
        let pages: Vec<_> = doc.blocks.iter().map(|b| (b.page, b.text.as_str())).collect();
        assert_eq!(pages, [(Some(1), "Alpha page text"), (Some(3), "Gamma page text")]);
        assert_eq!(doc.warnings.len(), 1, "{:?}", doc.warnings);
        assert!(
            doc.warnings[0].starts_with("page 2 of 3: text could not be extracted (")
                && doc.warnings[0].ends_with("); it was left out"),
            "{:?}",
            doc.warnings
        );
        // A whole PDF has no warnings.
        let bytes = to_bytes(pdf_with_pages(&["Alpha page text"]));
        let doc = document_of("whole.pdf", bytes);
        assert!(doc.warnings.is_empty(), "{:?}", doc.warnings);
    }

    #[test]
    fn a_font_whose_map_or_program_is_damaged_is_read_by_its_encoding() {
        use lopdf::{dictionary, Object, Stream};
        let mut pdf = pdf_with_pages(&["Alpha page text", "Beta page text"]);
        // Binary junk where a character map and a Type 1 font program belong (as a damaged
        // Flate stream reads once it cannot be inflated): the PDF reader stops on either.
        let junk = b"\x00\xff\xfe\x01 junk \x9c".to_vec();
        let map = pdf.add_object(Stream::new(dictionary! {}, junk.clone()));
        let program = pdf.add_object(Stream::new(dictionary! {}, junk));
        let descriptor = pdf
            .add_object(dictionary! { "Type" => "FontDescriptor", "FontName" => "Helvetica", "FontFile" => program });
        let font = pdf
            .objects
            .values_mut()
            .filter_map(|o| o.as_dict_mut().ok())
            .find(|d| d.get(b"Type").and_then(Object::as_name).ok() == Some(b"Font"))
            .unwrap();
        font.set("ToUnicode", map);
        font.set("FontDescriptor", descriptor);
        let doc = document_of("fonts.pdf", to_bytes(pdf));
        let pages: Vec<_> = doc.blocks.iter().map(|b| (b.page, b.text.as_str())).collect();
        assert_eq!(pages, [(Some(1), "Alpha page text"), (Some(2), "Beta page text")]);
        let told = |part: &str| format!("the {part} of font Helvetica could not be read (");
        assert_eq!(doc.warnings.len(), 2, "{:?}", doc.warnings);
        assert!(
            doc.warnings[0].starts_with(&told("character map (ToUnicode)")),
            "{:?}",
            doc.warnings
        );
        assert!(
            doc.warnings[1].starts_with(&told("Type 1 font program (FontFile)")),
            "{:?}",
            doc.warnings
        );
        assert!(
            doc.warnings[1].ends_with("); its text was read by the encoding the font states or the standard one, which may give other characters"),
            "{:?}",
            doc.warnings
        );
    }

    #[test]
    fn truncated_pdf_is_corrupt() {
        let bytes = to_bytes(pdf_with_pages(&["Alpha"]));
        let err = AutoParser
            .parse(&raw_for_test("broken.pdf", bytes[..bytes.len() / 3].to_vec()))
            .unwrap_err();
        assert!(matches!(err, ParseError::Corrupt(_)), "{err:?}");
        let err = AutoParser
            .parse(&raw_for_test("fake.pdf", "not a pdf at all"))
            .unwrap_err();
        assert!(matches!(err, ParseError::Corrupt(_)), "{err:?}");
    }
}
