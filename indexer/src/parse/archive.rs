//! ZIP archives (`.zip`, and any ZIP that is no Office package or book): each file it holds
//! parsed as its format, its documents named `<uri>#member=<path>` (a JSONL member's lines
//! under that). A member that is no document (a picture, a program) is left out; one that
//! fails (a locked PDF, a bomb) is the archive's failed item and the others are indexed.
//! Members are inflated within the package budget of [`Package`] (each within its part
//! limit, all together within the archive's), archives inside archives read three deep; a
//! macOS fork (`__MACOSX/`) and hidden files are left out.

use bytes::Bytes;

use super::ooxml::Package;
use super::{AutoParser, ItemFailure, ParseError, Parsed, Parser};
use crate::source::RawDocument;

/// Archives read inside one another, the outermost counted.
const MAX_NESTED_ARCHIVES: usize = 3;
/// What names a member in its documents' URIs.
const MEMBER: &str = "#member=";

/// Whether a member is a file a person put in the archive: not a folder, not a macOS
/// resource fork or a hidden file (`.DS_Store`).
fn is_a_document_file(name: &str) -> bool {
    let file_name = name.rsplit('/').next().unwrap_or(name);
    !name.ends_with('/') && !name.starts_with("__MACOSX/") && !file_name.is_empty() && !file_name.starts_with('.')
}

pub(super) fn parse(raw: &RawDocument) -> Result<Parsed, ParseError> {
    if raw.uri.matches(MEMBER).count() >= MAX_NESTED_ARCHIVES {
        return Err(ParseError::Corrupt(format!(
            "ZIP: an archive inside {MAX_NESTED_ARCHIVES} others is not read"
        )));
    }
    let mut package = Package::open(&raw.bytes, "ZIP")?;
    let mut parsed = Parsed::default();
    for name in package.part_names().into_iter().filter(|n| is_a_document_file(n)) {
        let uri = format!("{}{MEMBER}{name}", raw.uri);
        // "<path>: <what was wrong>" (the package's own errors name the part: said once).
        let fail = |error: ParseError| {
            let reason = error.as_item_reason();
            let said = reason.strip_prefix(&format!("ZIP part {name}: ")).unwrap_or(&reason);
            ItemFailure {
                uri: uri.clone(),
                reason: format!("{name}: {said}"),
            }
        };
        let bytes = match package.part_bytes(&name) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => continue,
            Err(error) => {
                parsed.failures.push(fail(error));
                continue;
            }
        };
        let member = RawDocument {
            uri: uri.clone(),
            relative_path: name.clone(),
            size: bytes.len() as u64,
            bytes: Bytes::from(bytes),
            etag: raw.etag.clone(),
            source: raw.source.clone(),
        };
        match AutoParser.parse(&member) {
            Ok(one) => {
                parsed.documents.extend(one.documents);
                parsed.failures.extend(one.failures);
            }
            Err(ParseError::Binary(_) | ParseError::Unsupported(_) | ParseError::Empty | ParseError::NoText) => {}
            Err(error) => parsed.failures.push(fail(error)),
        }
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use crate::parse::{detect_format, failures_of, raw_for_test, AutoParser, Format, Parser};

    /// A ZIP archive of `files` (name, bytes), deflated.
    fn zip_of(files: &[(&str, &[u8])]) -> Vec<u8> {
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        for (name, bytes) in files {
            zip.start_file(*name, zip::write::SimpleFileOptions::default()).unwrap();
            zip.write_all(bytes).unwrap();
        }
        zip.finish().unwrap().into_inner()
    }

    #[test]
    fn each_file_is_parsed_as_its_format_and_a_bad_one_fails_alone() {
        let letter = crate::parse::docx::fixtures::docx("<w:p><w:r><w:t>The pier opens in May.</w:t></w:r></w:p>");
        let inner = zip_of(&[("deep/note.txt", b"Buoys are repainted yearly.")]);
        let archive = zip_of(&[
            ("reports/", b""),
            ("reports/pier.docx", &letter),
            (
                "reports/lines.jsonl",
                b"{\"_id\": \"a\", \"text\": \"Tide tables.\"}\nnot json\n",
            ),
            ("photo.png", b"\x89PNG\r\n\x1a\n...."),
            ("__MACOSX/reports/._pier.docx", b"fork"),
            (".DS_Store", b"\x00\x00\x00\x01Bud1"),
            ("broken.pdf", b"%PDF-1.7 nothing else"),
            ("more.zip", &inner),
        ]);
        let parsed = AutoParser.parse(&raw_for_test("bundle.zip", archive.clone())).unwrap();
        let documents: Vec<(&str, &str, &str)> = parsed
            .documents
            .iter()
            .map(|d| (d.uri.as_str(), d.file_name.as_str(), d.blocks[0].text.as_str()))
            .collect();
        assert_eq!(
            documents,
            [
                (
                    "memory://test/bundle.zip#member=reports/pier.docx",
                    "pier.docx",
                    "The pier opens in May."
                ),
                (
                    "memory://test/bundle.zip#member=reports/lines.jsonl#a",
                    "lines.jsonl",
                    "Tide tables."
                ),
                (
                    "memory://test/bundle.zip#member=more.zip#member=deep/note.txt",
                    "note.txt",
                    "Buoys are repainted yearly."
                ),
            ]
        );
        let failures = failures_of(&parsed);
        assert_eq!(failures.len(), 2, "{failures:?}");
        assert_eq!(failures[0].0, "memory://test/bundle.zip#member=reports/lines.jsonl#L2");
        assert!(failures[0].1.starts_with("line 2: invalid JSON"), "{failures:?}");
        assert_eq!(failures[1].0, "memory://test/bundle.zip#member=broken.pdf");
        assert!(failures[1].1.starts_with("broken.pdf: "), "{failures:?}");
        // Without its extension, a ZIP that is no Office package is an archive.
        assert_eq!(detect_format("upload", &archive).unwrap(), Format::Zip);
    }

    #[test]
    fn nested_archives_and_bombs_are_bounded() {
        // Four archives deep: the innermost is not read, and says so.
        let mut nested = zip_of(&[("note.txt", b"Four deep.")]);
        for level in 0..3 {
            nested = zip_of(&[(&format!("level{level}.zip"), &nested)]);
        }
        let parsed = AutoParser.parse(&raw_for_test("nested.zip", nested)).unwrap();
        assert!(parsed.documents.is_empty());
        assert_eq!(
            failures_of(&parsed),
            [(
                "memory://test/nested.zip#member=level2.zip#member=level1.zip#member=level0.zip",
                "level0.zip: ZIP: an archive inside 3 others is not read"
            )]
        );
        // A member that inflates past its limit fails alone; the next is still read.
        let bomb = vec![b'a'; 129 << 20];
        let archive = zip_of(&[("bomb.txt", &bomb), ("after.txt", b"Still read.")]);
        let parsed = AutoParser.parse(&raw_for_test("bomb.zip", archive)).unwrap();
        assert_eq!(parsed.documents.len(), 1);
        assert_eq!(parsed.documents[0].blocks[0].text, "Still read.");
        assert_eq!(
            failures_of(&parsed),
            [(
                "memory://test/bomb.zip#member=bomb.txt",
                "bomb.txt: more than 128 MiB once inflated (a compression bomb, or too large a document); the file is skipped"
            )]
        );
    }
}
