//! PDF: text per page (pdf-extract over lopdf), 1-based page numbers; password-protected,
//! scanned-only and corrupt files are told apart.

use lopdf::{Document as PdfDocument, Object};

use super::{Block, Document, ParseError, Parsed};
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

pub(super) fn parse(raw: &RawDocument) -> Result<Parsed, ParseError> {
    let pdf = PdfDocument::load_mem(&raw.bytes).map_err(|e| match e {
        lopdf::Error::Decryption(_) => ParseError::PasswordProtected,
        other => ParseError::Corrupt(format!("PDF could not be parsed: {other}")),
    })?;
    if pdf.is_encrypted() && pdf.authenticate_password("").is_err() {
        return Err(ParseError::PasswordProtected);
    }
    let page_count = pdf.get_pages().len();
    if page_count == 0 {
        return Err(ParseError::Corrupt("PDF has no pages".into()));
    }
    check_inflated_size(&pdf, inflate_budget(raw.bytes.len()))?;
    let pages = pdf_extract::extract_text_from_mem_by_pages(&raw.bytes).map_err(|e| match e {
        pdf_extract::OutputError::PdfError(lopdf::Error::Decryption(_)) => ParseError::PasswordProtected,
        other => ParseError::Corrupt(format!("PDF text could not be extracted: {other}")),
    })?;
    let blocks: Vec<Block> = pages
        .iter()
        .enumerate()
        .filter(|(_, text)| !text.trim().is_empty())
        .map(|(i, text)| Block {
            text: text.trim().to_string(),
            page: Some(i as u32 + 1),
            ..Default::default()
        })
        .collect();
    if blocks.is_empty() {
        return Err(if has_images(&pdf) {
            ParseError::ScannedOnly
        } else {
            ParseError::NoText
        });
    }
    let title = pdf_title(&pdf).unwrap_or_else(|| Document::stem_of(raw));
    let mut document = Document::from_raw(raw, title, blocks);
    document.metadata.insert("page_count".into(), page_count.into());
    Ok(Parsed::one(document))
}

/// Test fixtures: small PDFs built with lopdf.
#[cfg(test)]
pub(crate) mod fixtures {
    use lopdf::content::{Content, Operation};
    use lopdf::{dictionary, Document, Object, Stream};

    /// A PDF whose pages hold the given texts, one line per page.
    pub fn pdf_with_pages(pages: &[&str]) -> Document {
        let mut doc = Document::with_version("1.5");
        let pages_id = doc.new_object_id();
        let font_id = doc.add_object(dictionary! {
            "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica", "Encoding" => "WinAnsiEncoding",
        });
        let resources_id = doc.add_object(dictionary! { "Font" => dictionary! { "F1" => font_id } });
        let mut kids = Vec::new();
        for text in pages {
            let content = Content {
                operations: vec![
                    Operation::new("BT", vec![]),
                    Operation::new("Tf", vec!["F1".into(), 12.into()]),
                    Operation::new("Td", vec![72.into(), 700.into()]),
                    Operation::new("Tj", vec![Object::string_literal(*text)]),
                    Operation::new("ET", vec![]),
                ],
            };
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
    use crate::parse::{raw_for_test, AutoParser, ParseError, Parser};

    #[test]
    fn two_page_pdf_keeps_page_numbers() {
        let bytes = to_bytes(pdf_with_pages(&["Alpha page text", "Beta page text"]));
        let doc = AutoParser
            .parse(&raw_for_test("report.pdf", bytes))
            .unwrap()
            .documents
            .remove(0);
        assert_eq!(doc.blocks.len(), 2, "{:?}", doc.blocks);
        assert_eq!(doc.blocks[0].page, Some(1));
        assert!(doc.blocks[0].text.contains("Alpha"), "{:?}", doc.blocks[0]);
        assert_eq!(doc.blocks[1].page, Some(2));
        assert!(doc.blocks[1].text.contains("Beta"));
        assert_eq!(doc.metadata["page_count"], 2);
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
