//! 7z archives (`.7z`) unpacked by sevenz-rust2 (LZMA, LZMA2, PPMd, bzip2, with their
//! BCJ and delta filters; solid or not): each file's bytes held to the size the archive states
//! for it, every decoder's dictionary or model to [`MAX_DECODER_MEMORY_KIB`], and all files
//! together to [`MAX_UNPACKED_BYTES`] in the archive's order, decoding stopping there. A block
//! that cannot be decoded (encrypted, another method, damaged) fails its own files alone.

use std::io::{Cursor, Read};

use bytes::Bytes;
use sevenz_rust2::{Archive, ArchiveEntry, BlockDecoder, Error, Password};

use super::zip_reader::MemberError;
use super::ParseError;

/// Memory one decoder may take for its dictionary or model (7-Zip's own "ultra" level asks for
/// 64 MiB; an XZ stream's decoder is held to the same 256 MiB).
const MAX_DECODER_MEMORY_KIB: usize = 256 << 10;
/// Bytes all of an archive's files may unpack to: they are held in memory together.
pub(super) const MAX_UNPACKED_BYTES: u64 = super::compressed::MAX_INFLATED_BYTES;

/// One file of the archive a caller kept: its name, the size the archive states, and its
/// bytes or why they could not be read.
pub(super) struct SevenZipFile {
    pub name: String,
    pub stated: u64,
    pub bytes: Result<Bytes, MemberError>,
}

/// What went wrong, in words a person reads.
fn why(error: &Error) -> String {
    match error {
        Error::BadSignature(_) => "it does not start as a 7z archive".into(),
        Error::UnsupportedVersion { major, minor } => format!("7z format version {major}.{minor} is not read"),
        Error::UnsupportedCompressionMethod(method) => {
            format!("it is compressed with {method}, which quarry does not read")
        }
        Error::MaxMemLimited { actaul_kb, .. } => format!(
            "its decoder needs {} MiB of memory, more than the {} MiB allowed",
            actaul_kb >> 10,
            MAX_DECODER_MEMORY_KIB >> 10
        ),
        Error::ChecksumVerificationFailed | Error::NextHeaderCrcMismatch => {
            "its data is damaged (a checksum does not match)".into()
        }
        Error::Io(error, context) if context.is_empty() => format!("its data is damaged ({error})"),
        Error::Io(error, context) => format!("its data is damaged ({context}: {error})"),
        Error::Other(what) | Error::Unsupported(what) => format!("its data is damaged ({what})"),
        other => format!("its data is damaged ({other:?})"),
    }
}

/// The decoder's own error where an I/O error carries one (its readers hand theirs on so).
fn innermost(error: &Error) -> &Error {
    match error {
        Error::Io(io, _) => match io.get_ref().and_then(|inner| inner.downcast_ref::<Error>()) {
            Some(inner) => innermost(inner),
            None => error,
        },
        other => other,
    }
}

/// Why a file (or the archive's header) could not be read. Encrypted data is named so:
/// quarry is built without the AES decoder, and has no password to give it.
fn member_error(error: &Error) -> MemberError {
    match innermost(error) {
        Error::PasswordRequired | Error::MaybeBadPassword(_) => MemberError::Encrypted,
        Error::UnsupportedCompressionMethod(method) if method.starts_with("AES") => MemberError::Encrypted,
        other => MemberError::Unreadable(why(other)),
    }
}

/// The archive's header, held to [`MAX_DECODER_MEMORY_KIB`]: `Err` says why it cannot be read.
fn open(source: &mut Cursor<Bytes>) -> Result<Archive, ParseError> {
    Archive::read_with_memory_limit(source, &Password::empty(), MAX_DECODER_MEMORY_KIB).map_err(|error| {
        match member_error(&error) {
            MemberError::Encrypted => ParseError::Encrypted("7z archive".into()),
            _ => ParseError::Corrupt(format!("7Z is not a readable archive: {}", why(innermost(&error)))),
        }
    })
}

/// A file a person put in the archive (not a folder, not a deletion mark).
fn is_file(entry: &ArchiveEntry) -> bool {
    !entry.is_directory() && !entry.is_anti_item
}

/// A file's path, `/` between its folders.
fn path_of(entry: &ArchiveEntry) -> String {
    entry.name().replace('\\', "/")
}

/// The sizes the archive's files state, in its order (an unreadable archive states none).
pub(super) fn stated_sizes(bytes: &Bytes) -> Vec<u64> {
    match open(&mut Cursor::new(bytes.clone())) {
        Ok(archive) => archive.files.iter().filter(|e| is_file(e)).map(|e| e.size).collect(),
        Err(_) => Vec::new(),
    }
}

/// The files of the archive that `keep` keeps (by path), in its order, each unpacked within
/// `member_limit` bytes. A block is decoded as far as its last file kept (a solid block's files
/// before it are decoded past), and the sizes of all the files so decoded count against
/// `budget` ([`MAX_UNPACKED_BYTES`]); decoding stops where they pass it, and every file kept
/// after that point fails as [`MemberError::OverBudget`].
pub(super) fn unpack(
    bytes: &Bytes,
    member_limit: u64,
    budget: u64,
    keep: &dyn Fn(&str) -> bool,
) -> Result<Vec<SevenZipFile>, ParseError> {
    let mut source = Cursor::new(bytes.clone());
    let archive = open(&mut source)?;
    // Each file's path where it is kept, by its index in the archive.
    let kept: Vec<Option<String>> = archive
        .files
        .iter()
        .map(|entry| Some(path_of(entry)).filter(|path| is_file(entry) && keep(path)))
        .collect();
    let is_kept = |index: usize| kept[index].is_some();
    let over_budget = || Some(Err(MemberError::OverBudget(budget >> 20)));
    // Each kept file's bytes, by its index in the archive.
    let mut read: Vec<Option<Result<Bytes, MemberError>>> = archive.files.iter().map(|_| None).collect();
    let mut decoded_so_far = 0u64;
    for block_index in 0..archive.blocks.len() {
        let first = archive.stream_map.block_first_file_index[block_index];
        let password = Password::empty();
        let decoder = BlockDecoder::new_with_memory_limit(
            1,
            MAX_DECODER_MEMORY_KIB,
            block_index,
            &archive,
            &password,
            &mut source,
        );
        let end = first + decoder.entry_count();
        let Some(last_kept) = (first..end).rev().find(|&i| is_kept(i)) else {
            continue;
        };
        if decoded_so_far > budget {
            for index in (first..=last_kept).filter(|&i| is_kept(i)) {
                read[index] = over_budget();
            }
            continue;
        }
        let mut next = first;
        let decoded = decoder.for_each_entries(&mut |entry: &ArchiveEntry, data: &mut dyn Read| {
            let index = next;
            next += 1;
            decoded_so_far = decoded_so_far.saturating_add(entry.size);
            if decoded_so_far > budget {
                for index in (index..=last_kept).filter(|&i| is_kept(i)) {
                    read[index] = over_budget();
                }
                return Ok(false);
            }
            if is_kept(index) {
                read[index] = Some(match entry.size > member_limit {
                    true => Err(MemberError::Inflates(member_limit >> 20)),
                    false => read_file(data, entry.size),
                });
            }
            // Nothing after the last file kept is decoded.
            Ok(index < last_kept)
        });
        if let Err(error) = decoded {
            // The file being read when the block broke (its rest is checked after it is
            // read) and the block's files not reached share the block's failure.
            let failure = member_error(&error);
            let broken = next.saturating_sub(1).max(first);
            for (index, slot) in read.iter_mut().enumerate().take(end).skip(broken) {
                if is_kept(index) && !matches!(slot, Some(Err(_))) {
                    *slot = Some(Err(failure.clone()));
                }
            }
        }
    }
    Ok(archive
        .files
        .iter()
        .zip(kept)
        .zip(read)
        .filter_map(|((entry, path), bytes)| {
            Some(SevenZipFile {
                name: path?,
                stated: entry.size,
                // A file without data (an empty one) belongs to no block.
                bytes: bytes.unwrap_or_else(|| match entry.has_stream {
                    true => Err(MemberError::Unreadable("not read".into())),
                    false => Ok(Bytes::new()),
                }),
            })
        })
        .collect())
}

/// One file's bytes: `size` of them (the decoder holds a file to its stated size and checks
/// its CRC).
fn read_file(data: &mut dyn Read, size: u64) -> Result<Bytes, MemberError> {
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(size as usize)
        .map_err(|_| MemberError::Unreadable(format!("no memory for its {size} bytes")))?;
    // The last file of a block has its CRC checked only when a read past its end finds the
    // block's end: one more read asks for that.
    let read = data
        .take(size)
        .read_to_end(&mut bytes)
        .and_then(|_| data.read(&mut [0u8; 1]));
    match read {
        Ok(_) => Ok(Bytes::from(bytes)),
        Err(error) => Err(member_error(&Error::from(error))),
    }
}

#[cfg(test)]
pub(crate) mod fixtures {
    use sevenz_rust2::encoder_options::{Bzip2Options, Lzma2Options, PpmdOptions};
    use sevenz_rust2::{ArchiveEntry, ArchiveWriter, EncoderConfiguration, EncoderMethod, SourceReader};

    /// How a test archive is compressed.
    #[derive(Debug, Clone, Copy)]
    pub enum Packing {
        /// Each file in a block of its own, with this method.
        OneBlockEach(EncoderMethod),
        /// All files in one solid block, with this method.
        Solid(EncoderMethod),
    }

    fn method(method: EncoderMethod) -> EncoderConfiguration {
        let configuration = EncoderConfiguration::new(method);
        match method {
            EncoderMethod::PPMD => configuration.with_options(PpmdOptions::from_level(6).into()),
            EncoderMethod::BZIP2 => configuration.with_options(Bzip2Options::from_level(9).into()),
            EncoderMethod::COPY => configuration,
            _ => configuration.with_options(Lzma2Options::from_level(1).into()),
        }
    }

    /// A 7z archive of `files` (name, bytes; a name ending in `/` is a folder).
    pub fn seven_zip_of(files: &[(&str, &[u8])], packing: Packing) -> Vec<u8> {
        let mut writer = ArchiveWriter::new(std::io::Cursor::new(Vec::new())).unwrap();
        let entry = |name: &str| match name.strip_suffix('/') {
            Some(folder) => ArchiveEntry::new_directory(folder),
            None => ArchiveEntry::new_file(name),
        };
        match packing {
            Packing::OneBlockEach(with) => {
                writer.set_content_methods(vec![method(with)]);
                for (name, bytes) in files {
                    writer.push_archive_entry(entry(name), Some(*bytes)).unwrap();
                }
            }
            Packing::Solid(with) => {
                writer.set_content_methods(vec![method(with)]);
                let (folders, files): (Vec<_>, Vec<_>) = files.iter().partition(|(name, _)| name.ends_with('/'));
                for (name, _) in folders {
                    writer.push_archive_entry::<&[u8]>(entry(name), None).unwrap();
                }
                let entries = files.iter().map(|(name, _)| entry(name)).collect();
                let readers = files.iter().map(|(_, bytes)| SourceReader::new(*bytes)).collect();
                writer.push_archive_entries(entries, readers).unwrap();
            }
        }
        writer.finish().unwrap().into_inner()
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::{seven_zip_of, Packing};
    use sevenz_rust2::EncoderMethod;

    use crate::parse::{detect_format, failures_of, raw_for_test, AutoParser, Format, Parser};

    /// (URI with the archive's name as `A`, a text): a document's first block, or a failure's reason.
    type Items = Vec<(String, String)>;

    /// The documents and failures of parsing `bytes` as `name`.
    fn read(name: &str, bytes: Vec<u8>) -> (Items, Items) {
        let parsed = AutoParser.parse(&raw_for_test(name, bytes)).unwrap();
        let documents = parsed
            .documents
            .iter()
            .map(|d| (d.uri.replace(name, "A"), d.blocks[0].text.clone()))
            .collect();
        let failures = failures_of(&parsed)
            .into_iter()
            .map(|(uri, reason)| (uri.replace(name, "A"), reason.to_string()))
            .collect();
        (documents, failures)
    }

    #[test]
    fn a_7z_archive_solid_or_not_is_read_as_a_zip_is() {
        let letter = crate::parse::docx::fixtures::docx("<w:p><w:r><w:t>The pier opens in May.</w:t></w:r></w:p>");
        let files: &[(&str, &[u8])] = &[
            ("export/", b""),
            ("export/pier.docx", &letter),
            ("export/.hidden", b"left out"),
            ("export/broken.pdf", b"%PDF-1.7 nothing else"),
            ("export/photo.png", b"\x89PNG\r\n\x1a\n...."),
            ("export/\u{6f6e}\u{4f4d}.txt", "潮位表。Tide tables.".as_bytes()),
        ];
        for packing in [
            Packing::OneBlockEach(EncoderMethod::LZMA2),
            Packing::Solid(EncoderMethod::LZMA2),
            Packing::Solid(EncoderMethod::PPMD),
            Packing::Solid(EncoderMethod::BZIP2),
        ] {
            let archive = seven_zip_of(files, packing);
            let (documents, failures) = read("export.7z", archive.clone());
            assert_eq!(
                documents,
                [
                    (
                        "memory://test/A#member=export/pier.docx".to_string(),
                        "The pier opens in May.".to_string()
                    ),
                    (
                        "memory://test/A#member=export/潮位.txt".to_string(),
                        "潮位表。Tide tables.".to_string()
                    ),
                ],
                "{packing:?}"
            );
            assert_eq!(failures.len(), 1, "{packing:?}: {failures:?}");
            assert_eq!(failures[0].0, "memory://test/A#member=export/broken.pdf");
            assert!(failures[0].1.starts_with("export/broken.pdf: "), "{failures:?}");
            // Without its extension: a 7z archive by its signature.
            assert_eq!(detect_format("export", &archive).unwrap(), Format::SevenZip);
        }
    }

    #[test]
    fn archives_written_by_7_zip_are_read_and_encrypted_ones_are_named() {
        for name in ["handover.7z", "handover-ppmd.7z"] {
            let bytes = std::fs::read(format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap();
            let (documents, failures) = read(name, bytes);
            assert_eq!(failures, [], "{name}");
            let uris: Vec<&str> = documents.iter().map(|(uri, _)| uri.as_str()).collect();
            assert_eq!(
                uris,
                [
                    "memory://test/A#member=2026/deck.ppt",
                    "memory://test/A#member=2026/pier.txt",
                    "memory://test/A#member=2026/report.doc",
                ],
                "{name}"
            );
            assert_eq!(documents[1].1.trim(), "The pier opens in May.");
        }
        // Files locked with a password: the archive's files, or the archive itself where its
        // names are encrypted too.
        let locked = std::fs::read(format!("{}/tests/fixtures/locked.7z", env!("CARGO_MANIFEST_DIR"))).unwrap();
        let (documents, failures) = read("locked.7z", locked);
        assert!(documents.is_empty());
        assert_eq!(failures.len(), 1, "{failures:?}");
        assert_eq!(failures[0].0, "memory://test/A#member=2026/pier.txt");
        assert!(
            failures[0]
                .1
                .starts_with("2026/pier.txt: this archived file is encrypted"),
            "{failures:?}"
        );
        let locked = std::fs::read(format!("{}/tests/fixtures/locked-names.7z", env!("CARGO_MANIFEST_DIR"))).unwrap();
        assert_eq!(
            AutoParser.parse(&raw_for_test("locked.7z", locked)).unwrap_err(),
            crate::parse::ParseError::Encrypted("7z archive".into())
        );
    }

    #[test]
    fn a_damaged_7z_file_fails_alone_and_a_damaged_archive_is_named() {
        let (first, second) = (
            "Harbour dues are paid monthly. ".repeat(50),
            "Buoys are repainted every spring. ".repeat(50),
        );
        let files: &[(&str, &[u8])] = &[("first.txt", first.as_bytes()), ("second.txt", second.as_bytes())];
        // Each file in its own block: damage in the second's data fails it alone.
        let mut archive = seven_zip_of(files, Packing::OneBlockEach(EncoderMethod::LZMA2));
        let stated = super::stated_sizes(&bytes::Bytes::from(archive.clone()));
        assert_eq!(stated, [1550, 1700]);
        let header_at = 32 + u64::from_le_bytes(archive[12..20].try_into().unwrap()) as usize;
        archive[header_at - 10] ^= 0x55;
        let (documents, failures) = read("pair.7z", archive.clone());
        assert_eq!(documents.len(), 1, "{failures:?}");
        assert!(documents[0].1.starts_with("Harbour dues"), "{documents:?}");
        assert_eq!(failures.len(), 1, "{failures:?}");
        assert_eq!(failures[0].0, "memory://test/A#member=second.txt");
        assert!(failures[0].1.starts_with("second.txt: "), "{failures:?}");
        assert!(failures[0].1.contains("damaged"), "{failures:?}");
        // A damaged header, and a file that is no archive at all: the archive fails, named.
        let mut damaged = seven_zip_of(files, Packing::OneBlockEach(EncoderMethod::LZMA2));
        damaged[9] ^= 0xFF;
        for bytes in [damaged, b"7z but not".to_vec()] {
            let error = AutoParser.parse(&raw_for_test("pair.7z", bytes)).unwrap_err();
            let detail = error.detail().unwrap_or_default();
            assert!(detail.starts_with("7Z is not a readable archive: "), "{error:?}");
        }
    }

    #[test]
    fn a_file_whose_bytes_do_not_match_its_crc_fails_wherever_it_is_in_its_block() {
        let files: &[(&str, &[u8])] = &[
            ("first.txt", b"Harbour dues are paid monthly."),
            ("last.txt", b"Buoys are repainted in spring."),
        ];
        let damaged = |name: &str| {
            (
                format!("memory://test/A#member={name}"),
                format!("{name}: its data is damaged (a checksum does not match)"),
            )
        };
        // (how stored, which file is damaged, the files read, the failures). In a block of
        // its own a file fails alone; in a solid block the files after it fail with it.
        let cases = [
            (
                Packing::OneBlockEach(EncoderMethod::COPY),
                "first.txt",
                vec!["last.txt"],
                vec![damaged("first.txt")],
            ),
            (
                Packing::OneBlockEach(EncoderMethod::COPY),
                "last.txt",
                vec!["first.txt"],
                vec![damaged("last.txt")],
            ),
            (
                Packing::Solid(EncoderMethod::COPY),
                "first.txt",
                vec![],
                vec![damaged("first.txt"), damaged("last.txt")],
            ),
            (
                Packing::Solid(EncoderMethod::COPY),
                "last.txt",
                vec!["first.txt"],
                vec![damaged("last.txt")],
            ),
        ];
        for (packing, name, expected_read, expected_failures) in cases {
            // Stored as they are: a changed byte changes nothing but the CRC.
            let mut archive = seven_zip_of(files, packing);
            let text = files.iter().find(|(file, _)| *file == name).unwrap().1;
            let at = archive.windows(text.len()).position(|w| w == text).unwrap();
            archive[at] ^= 0x20;
            let (documents, failures) = read("pair.7z", archive);
            let read: Vec<&str> = documents
                .iter()
                .map(|(uri, _)| uri.rsplit('=').next().unwrap())
                .collect();
            assert_eq!(read, expected_read, "{packing:?} {name}");
            assert_eq!(failures, expected_failures, "{packing:?} {name}");
        }
    }

    #[test]
    fn decoding_stops_where_the_files_decoded_pass_the_budget() {
        use super::{unpack, MemberError};
        let part = |c: u8| vec![c; 300 << 10];
        let (a, b, c, d) = (part(b'a'), part(b'b'), part(b'c'), part(b'd'));
        let files: &[(&str, &[u8])] = &[("a.txt", &a), ("skipped/.b", &b), ("c.txt", &c), ("d.txt", &d)];
        let keep = |name: &str| !name.contains("/.");
        let outcome = |packing| {
            let archive = bytes::Bytes::from(seven_zip_of(files, packing));
            let unpacked = unpack(&archive, 128 << 20, 1 << 20, &keep).unwrap();
            let outcome: Vec<(String, Result<usize, MemberError>)> = unpacked
                .into_iter()
                .map(|f| (f.name, f.bytes.map(|b| b.len())))
                .collect();
            outcome
        };
        // One block each: the file not kept is left out, not decoded, and does not count.
        assert_eq!(
            outcome(Packing::OneBlockEach(EncoderMethod::LZMA2)),
            [
                ("a.txt".to_string(), Ok(300 << 10)),
                ("c.txt".to_string(), Ok(300 << 10)),
                ("d.txt".to_string(), Ok(300 << 10)),
            ]
        );
        // One solid block: it is left out but decoded past, and counts; the fourth file
        // passes 1 MiB.
        assert_eq!(
            outcome(Packing::Solid(EncoderMethod::LZMA2)),
            [
                ("a.txt".to_string(), Ok(300 << 10)),
                ("c.txt".to_string(), Ok(300 << 10)),
                ("d.txt".to_string(), Err(MemberError::OverBudget(1))),
            ]
        );
    }

    #[test]
    fn a_7z_archive_is_bounded_in_each_file_and_in_its_decoders_memory() {
        // A file past 128 MiB fails alone; the file after it in the same solid block is read.
        let bomb = vec![0u8; 129 << 20];
        let archive = seven_zip_of(
            &[("bomb.txt", &bomb), ("after.txt", b"Still read.")],
            Packing::Solid(EncoderMethod::LZMA2),
        );
        assert!(archive.len() < 1 << 20);
        let (documents, failures) = read("bomb.7z", archive);
        assert_eq!(
            documents,
            [(
                "memory://test/A#member=after.txt".to_string(),
                "Still read.".to_string()
            )]
        );
        assert_eq!(
            failures,
            [(
                "memory://test/A#member=bomb.txt".to_string(),
                "bomb.txt: more than 128 MiB once inflated (a compression bomb, or too large a document); the file is skipped"
                    .to_string()
            )]
        );
        // A block whose decoder asks for a 4 GiB dictionary is not decoded: its file fails, named.
        let mut archive = seven_zip_of(
            &[("note.txt", b"Tide tables.")],
            Packing::OneBlockEach(EncoderMethod::LZMA2),
        );
        let header_at = 32 + u64::from_le_bytes(archive[12..20].try_into().unwrap()) as usize;
        // The header is written as it is (too small to gain by compression): its LZMA2 coder
        // (flags 0x21, id 0x21, one byte of properties) says the dictionary's size.
        let coder = header_at
            + archive[header_at..]
                .windows(3)
                .position(|w| w == [0x21, 0x21, 0x01])
                .unwrap();
        archive[coder + 3] = 40;
        let header_crc = crc32fast::hash(&archive[header_at..]);
        archive[28..32].copy_from_slice(&header_crc.to_le_bytes());
        let start_crc = crc32fast::hash(&archive[12..32]);
        archive[8..12].copy_from_slice(&start_crc.to_le_bytes());
        let (documents, failures) = read("big.7z", archive);
        assert!(documents.is_empty());
        assert_eq!(
            failures,
            [(
                "memory://test/A#member=note.txt".to_string(),
                "note.txt: its decoder needs 4096 MiB of memory, more than the 256 MiB allowed".to_string()
            )]
        );
    }
}
