//! ZIP archives (`.zip`, and any ZIP that is no Office package or book): each file it holds
//! parsed as its format, its documents named `<uri>#member=<path>` (a JSONL member's lines
//! under that). The archive is split by quarry's own reader ([`super::zip_reader`]) where it
//! is read, and its files are parsed in parallel by the parser that read it, so each file a
//! worker parses has the worker's deadline and memory limit to itself. A member that is no
//! document (a picture, a program) is left out; one that fails (a locked PDF, a bomb) is the
//! archive's failed item and the others are indexed. Each file inflates within its limit and
//! all of them within the archive's budget; archives inside archives are read three deep; a
//! macOS fork (`__MACOSX/`) and hidden files are left out.

use bytes::Bytes;
use rayon::prelude::*;

use super::compressed;
use super::seven_zip;
use super::tar_reader;
use super::zip_reader::{Entry, MemberError, ZipReader};
use super::{Format, ItemFailure, ParseError, Parsed, Parser};
use crate::source::RawDocument;

/// Archives read inside one another, the outermost counted.
const MAX_NESTED_ARCHIVES: usize = 3;
/// What names a member in its documents' URIs.
const MEMBER: &str = "#member=";
/// Bytes one file of an archive may inflate to (as one part of an Office package).
const MAX_MEMBER_BYTES: u64 = 128 << 20;
/// Bytes all of a ZIP archive's files may inflate to together: this many times the archive's
/// own bytes, and never less than [`MIN_ARCHIVE_BUDGET`] (documents compress a few times; a
/// bomb, a thousand).
const MAX_INFLATION_RATIO: u64 = 100;
const MIN_ARCHIVE_BUDGET: u64 = 1 << 30;

/// What all of the files of a ZIP archive of `archive_bytes` may inflate to together.
fn zip_budget(archive_bytes: u64) -> u64 {
    MIN_ARCHIVE_BUDGET.max(archive_bytes * MAX_INFLATION_RATIO)
}

/// Whether a member is a file a person put in the archive: not a folder, not a macOS
/// resource fork or a hidden file (`.DS_Store`).
fn is_a_document_file(name: &str) -> bool {
    let file_name = name.rsplit('/').next().unwrap_or(name);
    !name.ends_with('/') && !name.starts_with("__MACOSX/") && !file_name.is_empty() && !file_name.starts_with('.')
}

/// One file of an archive, and where its bytes are.
struct Archived<'a> {
    name: &'a str,
    /// The size the archive states (a ZIP's directory; a tar's header, which is the size).
    stated: u64,
    bytes: Stored<'a>,
}

enum Stored<'a> {
    Zip(&'a ZipReader, &'a Entry),
    /// A tar archive's file: its bytes, as they are.
    Plain(&'a Bytes),
    /// A 7z archive's file, unpacked (or why it could not be).
    Unpacked(&'a Result<Bytes, MemberError>),
}

impl Stored<'_> {
    fn read(&self, limit: u64) -> Result<Bytes, MemberError> {
        match self {
            Self::Zip(archive, entry) => archive.read(entry, limit),
            Self::Plain(bytes) if bytes.len() as u64 > limit => Err(MemberError::Inflates(limit >> 20)),
            Self::Plain(bytes) => Ok(Bytes::clone(bytes)),
            Self::Unpacked(bytes) => (*bytes).clone(),
        }
    }
}

fn refuse_deep_nesting(raw: &RawDocument, format: &str) -> Result<(), ParseError> {
    match raw.uri.matches(MEMBER).count() >= MAX_NESTED_ARCHIVES {
        true => Err(ParseError::Corrupt(format!(
            "{format}: an archive inside {MAX_NESTED_ARCHIVES} others is not read"
        ))),
        false => Ok(()),
    }
}

/// A ZIP archive's files, each parsed by `members` (this process's parser, or the one that
/// sends a format to a worker).
pub(super) fn parse(raw: &RawDocument, members: &dyn Parser) -> Result<Parsed, ParseError> {
    refuse_deep_nesting(raw, "ZIP")?;
    // An archive whose directory cannot be read (cut short) is read by its files' headers.
    let (archive, recovered) = ZipReader::open_or_recover(raw.bytes.clone())
        .map_err(|why| ParseError::Corrupt(format!("ZIP is not a readable archive: {why}")))?;
    let files: Vec<Archived> = archive
        .entries()
        .iter()
        .filter(|e| is_a_document_file(&e.name))
        .map(|e| Archived {
            name: &e.name,
            stated: e.size,
            bytes: Stored::Zip(&archive, e),
        })
        .collect();
    // ZIP's files inflate one by one: their budget is the archive's.
    let budget = zip_budget(raw.bytes.len() as u64);
    let mut parsed = parse_files(raw, &files, budget, members);
    if let Some(why) = recovered {
        parsed.failures.push(ItemFailure {
            uri: raw.uri.clone(),
            reason: format!("ZIP: {why}"),
        });
    }
    Ok(parsed)
}

/// The bytes a file of `format` states it holds once read: an archive's files' sizes (within
/// its budget), a compressed file's inflated size, else its own size. What a parse of it
/// will hold in memory, where the file does not lie (a lie costs only its limits).
pub fn stated_contents_size(format: Format, bytes: &Bytes) -> u64 {
    let own = bytes.len() as u64;
    match format {
        Format::Compressed | Format::Tar => compressed::stated_inflated_size(bytes).max(own),
        Format::SevenZip => {
            let stated: u64 = seven_zip::stated_sizes(bytes).into_iter().fold(0, u64::saturating_add);
            stated.min(seven_zip::MAX_UNPACKED_BYTES).max(own)
        }
        Format::Zip => match ZipReader::open(bytes.clone()) {
            Ok(archive) => {
                let stated: u64 = archive.entries().iter().map(|e| e.size).fold(0, u64::saturating_add);
                stated.min(zip_budget(own)).max(own)
            }
            Err(_) => own,
        },
        _ => own,
    }
}

/// A tar archive's files (the archive inflated first when it is compressed whole, within
/// [`compressed::MAX_INFLATED_BYTES`]); a header that breaks the archive ends it there, the
/// files before it read and the break the archive's failed item.
pub(super) fn parse_tar(raw: &RawDocument, members: &dyn Parser) -> Result<Parsed, ParseError> {
    refuse_deep_nesting(raw, "TAR")?;
    let bytes = compressed::inflate(&raw.bytes)?;
    let listing = tar_reader::list(&bytes);
    if let (true, Some(why)) = (listing.files.is_empty(), &listing.broken_at) {
        return Err(ParseError::Corrupt(format!("TAR is not a readable archive: {why}")));
    }
    let files: Vec<Archived> = listing
        .files
        .iter()
        .filter(|f| is_a_document_file(&f.name))
        .map(|f| Archived {
            name: &f.name,
            stated: f.bytes.len() as u64,
            bytes: Stored::Plain(&f.bytes),
        })
        .collect();
    // A tar's files are already in memory: the inflation limit was the whole archive's.
    let mut parsed = parse_files(raw, &files, u64::MAX, members);
    if let Some(why) = listing.broken_at {
        parsed.failures.push(ItemFailure {
            uri: raw.uri.clone(),
            reason: format!("TAR: {why}; the files before it are read"),
        });
    }
    Ok(parsed)
}

/// A 7z archive's files: unpacked first, in the archive's order (a solid archive's files are
/// one stream), each within [`MAX_MEMBER_BYTES`] and all of them within
/// [`seven_zip::MAX_UNPACKED_BYTES`], then parsed as a ZIP archive's are.
pub(super) fn parse_7z(raw: &RawDocument, members: &dyn Parser) -> Result<Parsed, ParseError> {
    refuse_deep_nesting(raw, "7Z")?;
    let unpacked = seven_zip::unpack(
        &raw.bytes,
        MAX_MEMBER_BYTES,
        seven_zip::MAX_UNPACKED_BYTES,
        &is_a_document_file,
    )?;
    let files: Vec<Archived> = unpacked
        .iter()
        .map(|f| Archived {
            name: &f.name,
            stated: f.stated,
            bytes: Stored::Unpacked(&f.bytes),
        })
        .collect();
    // The budget was kept as the files were unpacked.
    Ok(parse_files(raw, &files, u64::MAX, members))
}

/// The files parsed in parallel, in order, by `members`; a file that fails is the archive's
/// failed item, "<path>: <what was wrong>".
fn parse_files(raw: &RawDocument, files: &[Archived], budget: u64, members: &dyn Parser) -> Parsed {
    // The budget goes to files in the archive's order, by the sizes it states (each file is
    // then held to its stated size), so which files fail does not depend on timing.
    let mut stated = 0u64;
    let within_budget: Vec<bool> = files
        .iter()
        .map(|file| {
            stated = stated.saturating_add(file.stated);
            stated <= budget
        })
        .collect();
    let read: Vec<Parsed> = files
        .par_iter()
        .zip(within_budget)
        .map(|(file, within_budget)| {
            let uri = format!("{}{MEMBER}{}", raw.uri, file.name);
            let result = match within_budget {
                true => parse_member(raw, file, &uri, members),
                false => Err(over_budget(file.name, budget >> 20)),
            };
            result.unwrap_or_else(|error| {
                // "<path>: <what was wrong>", the path said once.
                let reason = error.as_item_reason();
                let reason = match reason.starts_with(&format!("{}: ", file.name)) {
                    true => reason,
                    false => format!("{}: {reason}", file.name),
                };
                Parsed::failed(ItemFailure { uri, reason })
            })
        })
        .collect();
    read.into_iter().collect()
}

/// A file past its archive's budget: it and the files before it inflate past `mib`.
fn over_budget(name: &str, mib: u64) -> ParseError {
    ParseError::Inflates {
        part: format!("{name} (with the files before it)"),
        mib,
    }
}

/// One file parsed.
fn parse_member(raw: &RawDocument, file: &Archived, uri: &str, members: &dyn Parser) -> Result<Parsed, ParseError> {
    let bytes = file.bytes.read(MAX_MEMBER_BYTES).map_err(|error| match error {
        MemberError::Inflates(mib) => ParseError::Inflates {
            part: file.name.to_string(),
            mib,
        },
        MemberError::OverBudget(mib) => over_budget(file.name, mib),
        MemberError::Encrypted => ParseError::Encrypted("this archived file".into()),
        MemberError::Unreadable(why) => ParseError::Corrupt(why),
    })?;
    match members.parse(&raw.inner(uri.to_string(), file.name.to_string(), bytes)) {
        Err(error) if error.is_no_document() => Ok(Parsed::default()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use crate::parse::compressed::fixtures::{bzip2, gzip, xz};
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
        // Cut short inside the broken PDF (a download that stopped): the files before it are
        // read by their headers, the PDF fails alone, and the archive's failure says why.
        let next_header = archive.windows(8).position(|w| w == b"more.zip").unwrap() - 30;
        let parsed = AutoParser
            .parse(&raw_for_test("bundle.zip", archive[..next_header - 3].to_vec()))
            .unwrap();
        let read: Vec<&str> = parsed.documents.iter().map(|d| d.file_name.as_str()).collect();
        assert_eq!(read, ["pier.docx", "lines.jsonl"]);
        let failures = failures_of(&parsed);
        assert_eq!(failures.last().unwrap().0, "memory://test/bundle.zip", "{failures:?}");
        assert_eq!(
            failures.last().unwrap().1,
            "ZIP: no end of central directory record (not a ZIP archive, or cut short); read by its files' local headers instead: 7 files, then the archive ends inside its last file"
        );
        assert!(
            failures
                .iter()
                .any(|(uri, why)| uri.ends_with("#member=broken.pdf") && why.contains("runs past the end")),
            "{failures:?}"
        );
    }

    #[test]
    fn the_size_a_file_states_it_holds() {
        use super::stated_contents_size;
        let text = "Tide tables for the season. ".repeat(40_000).into_bytes();
        let stated = |name: &str, bytes: Vec<u8>| {
            let bytes = bytes::Bytes::from(bytes);
            stated_contents_size(detect_format(name, &bytes).unwrap(), &bytes)
        };
        assert_eq!(stated("tides.txt", text.clone()), text.len() as u64);
        // A ZIP archive: its files' sizes, whatever they deflate to.
        let zip = zip_of(&[("a.txt", &text), ("b.txt", &text[..1000])]);
        assert!(zip.len() < text.len() / 50);
        assert_eq!(stated("tides.zip", zip), text.len() as u64 + 1000);
        // A compressed file and a compressed tar: the size their streams state.
        let gzipped = gzip(&text);
        assert_eq!(stated("tides.txt.gz", gzipped.clone()), text.len() as u64);
        assert_eq!(stated("tides.tgz", gzipped), text.len() as u64);
        let zstd = zstd::bulk::compress(&text, 3).unwrap();
        assert_eq!(stated("tides.txt.zst", zstd), text.len() as u64);
        // A 7z archive: its files' sizes.
        let seven_zip = crate::parse::seven_zip::fixtures::seven_zip_of(
            &[("a.txt", &text), ("b.txt", &text[..1000])],
            crate::parse::seven_zip::fixtures::Packing::OneBlockEach(sevenz_rust2::EncoderMethod::LZMA2),
        );
        assert_eq!(stated("tides.7z", seven_zip), text.len() as u64 + 1000);
        // A damaged archive states only its own size.
        assert_eq!(stated("cut.zip", b"PK\x03\x04 cut short".to_vec()), 14);
    }

    #[test]
    fn a_tar_archive_compressed_or_not_is_read_as_a_zip_is() {
        use crate::parse::tar_reader::fixtures::tar_of;
        let letter = crate::parse::docx::fixtures::docx("<w:p><w:r><w:t>The pier opens in May.</w:t></w:r></w:p>");
        let tar = tar_of(&[
            ("export/pier.docx", &letter),
            ("export/.hidden", b"left out"),
            ("export/broken.pdf", b"%PDF-1.7 nothing else"),
            ("export/tides.txt", b"Tide tables."),
        ]);
        let (gzipped, xz, bz2) = (gzip(&tar), xz(&tar), bzip2(&tar));
        for (name, bytes) in [
            ("export.tar", tar.clone()),
            ("export.tar.gz", gzipped.clone()),
            ("export.tgz", gzipped),
            ("export.tar.xz", xz.clone()),
            ("export.txz", xz),
            ("export.tar.bz2", bz2.clone()),
            ("export.tbz2", bz2),
        ] {
            let parsed = AutoParser.parse(&raw_for_test(name, bytes)).unwrap();
            let documents: Vec<(String, &str)> = parsed
                .documents
                .iter()
                .map(|d| (d.uri.replace(name, "T"), d.blocks[0].text.as_str()))
                .collect();
            assert_eq!(
                documents,
                [
                    (
                        "memory://test/T#member=export/pier.docx".to_string(),
                        "The pier opens in May."
                    ),
                    ("memory://test/T#member=export/tides.txt".to_string(), "Tide tables."),
                ],
                "{name}"
            );
            let failures = failures_of(&parsed);
            assert_eq!(failures.len(), 1, "{name}: {failures:?}");
            assert!(failures[0].1.starts_with("export/broken.pdf: "), "{failures:?}");
        }
        // Cut in its last file's header: the files before are read, the break is the archive's failure.
        let last = tar.windows(16).position(|w| w == b"export/tides.txt").unwrap();
        let cut = &tar[..last + 100];
        let parsed = AutoParser.parse(&raw_for_test("cut.tar", cut.to_vec())).unwrap();
        assert_eq!(parsed.documents.len(), 1);
        let failures = failures_of(&parsed);
        assert_eq!(failures.len(), 2, "{failures:?}");
        assert_eq!(failures[1].0, "memory://test/cut.tar");
        assert!(
            failures[1].1.starts_with("TAR: the archive is cut short at byte "),
            "{failures:?}"
        );
        // Without an extension: a tar by its `ustar` magic.
        assert_eq!(detect_format("export", &tar).unwrap(), Format::Tar);
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
