//! Files compressed whole, as buckets keep corpora and logs (`data.jsonl.gz`, `report.pdf.zst`,
//! `dump.xml.bz2`, `logs.tar.xz`): inflated here within a limit (gzip, its concatenated members
//! too, by miniz_oxide; Zstandard by the reference decoder, its window bounded; bzip2 by
//! libbz2-rs, concatenated streams too; XZ by liblzma, its memory bounded; LZ4's frames, and
//! the legacy frames of `lz4 -l` and the Linux kernel, by lz4_flex, its blocks at most 8 MiB;
//! skippable frames passed over, a file cut short told from one that ends: [`super::lz4_frames`];
//! Mozilla's LZ4 files, Firefox's `.jsonlz4` bookmark backups and saved tabs, one block read
//! whole: [`super::moz_lz4`]), then parsed as the
//! file they hold, named by the name without its compression's extension, by the parser that
//! read them (so a PDF inside still goes to a worker). The documents keep the compressed
//! file's URI.

use std::io::Read;

use bytes::Bytes;

use super::lz4_frames::lz4_reader;
use super::moz_lz4;
use super::{ParseError, Parsed, Parser};
use crate::source::RawDocument;

/// Bytes a compressed file (or a compressed tar archive) may inflate to.
pub(super) const MAX_INFLATED_BYTES: u64 = 1 << 30;
/// The largest window a Zstandard frame may ask for (its decoder's own default limit).
const ZSTD_WINDOW_LOG_MAX: u32 = 27;
/// Memory an XZ stream's decoder may take (`xz -9` needs 65 MiB; a stream may ask for 4 GiB).
const XZ_MEMORY_LIMIT: u64 = 256 << 20;
/// The extensions of a file compressed whole, without their dot.
pub(super) const EXTENSIONS: [&str; 6] = ["gz", "zst", "zstd", "bz2", "xz", "lz4"];
/// The extensions of Mozilla's LZ4 files ([`super::moz_lz4`]), without their dot: Firefox's
/// `bookmarks-….jsonlz4` and `recovery.baklz4` hold the JSON its `….json` and `….bak` would,
/// its `search.json.mozlz4` the file named before.
pub(super) const MOZILLA_EXTENSIONS: [&str; 3] = ["jsonlz4", "baklz4", "mozlz4"];

/// How a file's bytes are compressed, by their first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Compression {
    Gzip,
    Zstd,
    Bzip2,
    Xz,
    Lz4,
    MozLz4,
}

impl Compression {
    pub fn of(bytes: &[u8]) -> Option<Self> {
        if let Some(after) = after_skippable_frames(bytes) {
            // LZ4 and Zstandard share their skippable frames' magic: the frame after tells.
            return match Self::of(after)? {
                found @ (Self::Lz4 | Self::Zstd) => Some(found),
                _ => None,
            };
        }
        if bytes.starts_with(b"\x1F\x8B") {
            Some(Self::Gzip)
        } else if bytes.starts_with(b"\x28\xB5\x2F\xFD") {
            Some(Self::Zstd)
        } else if bytes.starts_with(b"\xFD7zXZ\x00") {
            Some(Self::Xz)
        } else if bytes.starts_with(LZ4_FRAME_MAGIC) || bytes.starts_with(LZ4_LEGACY_MAGIC) {
            Some(Self::Lz4)
        } else if bytes.starts_with(moz_lz4::MAGIC) {
            Some(Self::MozLz4)
        } else if bytes.starts_with(b"BZh")
            && bytes.get(3).is_some_and(|level| (b'1'..=b'9').contains(level))
            // A block's magic (the digits of pi), or an empty stream's end (of sqrt(pi)).
            && matches!(bytes.get(4..10), Some(b"\x31\x41\x59\x26\x53\x59" | b"\x17\x72\x45\x38\x50\x90"))
        {
            Some(Self::Bzip2)
        } else {
            None
        }
    }

    /// The inflated size `bytes` state, where they do (a gzip trailer's size of its last
    /// member, modulo 4 GiB; a Zstandard frame header's; XZ streams' indexes'; at least their
    /// own size): a hint only.
    fn stated_size(self, bytes: &[u8]) -> Option<u64> {
        let stated = match self {
            Self::Gzip => bytes
                .len()
                .checked_sub(4)
                .filter(|_| bytes.len() >= 18)
                .map(|at| u32::from_le_bytes(bytes[at..].try_into().expect("four bytes")) as u64),
            Self::Zstd => zstd::zstd_safe::get_frame_content_size(bytes).ok().flatten(),
            Self::Xz => super::xz_index::stated_size(bytes),
            Self::Lz4 => lz4_content_size(bytes),
            Self::MozLz4 => moz_lz4::stated_size(bytes),
            Self::Bzip2 => None,
        };
        stated.map(|size| size.max(bytes.len() as u64))
    }

    /// A reader of what `input` inflates to (the decoders' limits set: Zstandard's window, XZ's
    /// memory); concatenated members and streams are read on.
    pub fn decoder<'a>(self, input: impl Read + Send + 'a) -> std::io::Result<Box<dyn Read + Send + 'a>> {
        Ok(match self {
            Self::Gzip => Box::new(flate2::read::MultiGzDecoder::new(input)),
            Self::Zstd => {
                let mut decoder = zstd::stream::read::Decoder::new(input)?;
                decoder.window_log_max(ZSTD_WINDOW_LOG_MAX)?;
                Box::new(decoder)
            }
            Self::Bzip2 => Box::new(bzip2::read::MultiBzDecoder::new(input)),
            // Concatenated frames are read on; a frame's blocks are 4 MiB at most (8 MiB in a
            // legacy frame), so its memory is bounded whatever the frame says.
            // A file cut short inside a frame fails, as one that ends between frames does not.
            Self::Lz4 => Box::new(lz4_reader(input)),
            // One block, read whole, its stated size held to the limit first.
            Self::MozLz4 => Box::new(moz_lz4::inflate(input, MAX_INFLATED_BYTES)?),
            Self::Xz => {
                let stream =
                    liblzma::stream::Stream::new_stream_decoder(XZ_MEMORY_LIMIT, liblzma::stream::CONCATENATED)
                        .map_err(std::io::Error::from)?;
                Box::new(liblzma::read::XzDecoder::new_stream(input, stream))
            }
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Gzip => "gzip",
            Self::Zstd => "Zstandard",
            Self::Bzip2 => "bzip2",
            Self::Xz => "XZ",
            Self::Lz4 => "LZ4",
            Self::MozLz4 => "Mozilla LZ4",
        }
    }
}

/// An LZ4 frame's first bytes (`lz4`'s default format).
const LZ4_FRAME_MAGIC: &[u8] = b"\x04\x22\x4D\x18";
/// A legacy LZ4 frame's (`lz4 -l`, the Linux kernel's initramfs and modules).
const LZ4_LEGACY_MAGIC: &[u8] = b"\x02\x21\x4C\x18";

/// Skippable frames held before a file's first frame, as LZ4 and Zstandard let a writer put
/// its own data (a magic of `0x184D2A50`-`0x184D2A5F`, then the data's size): at most this many.
const MAX_SKIPPABLE_FRAMES: usize = 16;

/// The bytes after the skippable frames `bytes` start with; None when they start with none,
/// or hold more of them than [`MAX_SKIPPABLE_FRAMES`] or past their end.
fn after_skippable_frames(mut bytes: &[u8]) -> Option<&[u8]> {
    let is_skippable = |b: &[u8]| b.len() >= 8 && b[0] & 0xF0 == 0x50 && b[1..4] == *b"\x2A\x4D\x18";
    if !is_skippable(bytes) {
        return None;
    }
    for _ in 0..MAX_SKIPPABLE_FRAMES {
        if !is_skippable(bytes) {
            return Some(bytes);
        }
        let size = u32::from_le_bytes(bytes[4..8].try_into().expect("four bytes")) as usize;
        bytes = bytes.get(8 + size..)?;
    }
    None
}

/// The content size an LZ4 frame's descriptor states, where its flags say it does: the eight
/// bytes after the flag and block bytes.
fn lz4_content_size(bytes: &[u8]) -> Option<u64> {
    const CONTENT_SIZE_FLAG: u8 = 0x08;
    let flags = *bytes.get(4).filter(|_| bytes.starts_with(LZ4_FRAME_MAGIC))?;
    let size = bytes.get(6..14).filter(|_| flags & CONTENT_SIZE_FLAG != 0)?;
    Some(u64::from_le_bytes(size.try_into().expect("eight bytes")))
}

/// The size `bytes` state they inflate to (within [`MAX_INFLATED_BYTES`]), or their own size
/// when they are not compressed.
pub(super) fn stated_inflated_size(bytes: &[u8]) -> u64 {
    let own = bytes.len() as u64;
    Compression::of(bytes).map_or(own, |compression| {
        compression.stated_size(bytes).unwrap_or(own).min(MAX_INFLATED_BYTES)
    })
}

/// `bytes` inflated (within [`MAX_INFLATED_BYTES`]), or as they are when they are not compressed.
pub(super) fn inflate(bytes: &Bytes) -> Result<Bytes, ParseError> {
    let Some(compression) = Compression::of(bytes) else {
        return Ok(bytes.clone());
    };
    let too_large = || ParseError::Inflates {
        part: format!("{} file", compression.name()),
        mib: MAX_INFLATED_BYTES >> 20,
    };
    let damaged = |e: std::io::Error| ParseError::Corrupt(format!("its {} data is damaged ({e})", compression.name()));
    // A block inflated at once: a size past the limit is refused before anything is
    // allocated, and the block's bytes are the file's, not copied into a reading buffer.
    if compression == Compression::MozLz4 {
        if moz_lz4::stated_size(bytes).is_some_and(|size| size > MAX_INFLATED_BYTES) {
            return Err(too_large());
        }
        let inflated = moz_lz4::inflate(&bytes[..], MAX_INFLATED_BYTES).map_err(damaged)?;
        return Ok(Bytes::from(inflated.into_inner()));
    }
    let decoder = compression.decoder(&bytes[..]).map_err(damaged)?;
    let room = compression
        .stated_size(bytes)
        .unwrap_or(u64::MAX)
        .min(MAX_INFLATED_BYTES + 1);
    let inflated = read_reserved(decoder, room, MAX_INFLATED_BYTES).map_err(damaged)?;
    if inflated.len() as u64 > MAX_INFLATED_BYTES {
        return Err(too_large());
    }
    Ok(Bytes::from(inflated))
}

/// `decoder` read to its end, or to `limit` + 1 bytes, into room for `room` bytes (the size
/// the stream states: a gzip trailer's, a Zstandard frame header's, XZ indexes'; else the
/// limit) reserved at once and, where the stream goes on past it (a size understated), room
/// for the rest of the limit reserved at once: a vector grown by doubling held its old and
/// new buffers together (a 1,025 MiB bomb peaked at 3,150 MiB). Room costs address space,
/// not memory, until written; where even that is refused, the vector grows.
pub(super) fn read_reserved(decoder: impl Read, room: u64, limit: u64) -> std::io::Result<Vec<u8>> {
    let mut limited = decoder.take(limit + 1);
    let mut inflated = Vec::new();
    let _ = inflated.try_reserve_exact(room as usize);
    (&mut limited).take(room).read_to_end(&mut inflated)?;
    let mut next = [0u8; 1];
    if inflated.len() as u64 == room && limited.read(&mut next)? == 1 {
        let _ = inflated.try_reserve_exact((limit + 1).saturating_sub(room) as usize);
        inflated.push(next[0]);
        limited.read_to_end(&mut inflated)?;
    }
    Ok(inflated)
}

/// The name of the file a compressed file holds: its own without its [`EXTENSIONS`] one,
/// or for Mozilla's ([`MOZILLA_EXTENSIONS`]) without the `lz4` of `.jsonlz4` and `.baklz4`
/// and the whole of `.mozlz4` (`bookmarks.jsonlz4` holds `bookmarks.json`, `search.json.mozlz4`
/// `search.json`).
pub(super) fn inner_name(path: &str) -> &str {
    let Some((inner, ext)) = path.rsplit_once('.') else {
        return path;
    };
    match ext.to_ascii_lowercase().as_str() {
        ext if EXTENSIONS.contains(&ext) || ext == "mozlz4" => inner,
        "jsonlz4" | "baklz4" => &path[..path.len() - "lz4".len()],
        _ => path,
    }
}

pub(super) fn parse(raw: &RawDocument, members: &dyn Parser) -> Result<Parsed, ParseError> {
    let bytes = inflate(&raw.bytes)?;
    if Compression::of(&bytes).is_some() {
        return Err(ParseError::Corrupt(
            "a compressed file inside a compressed file is not read".into(),
        ));
    }
    let inner_path = inner_name(&raw.relative_path);
    let mut parsed = members.parse(&raw.inner(raw.uri.clone(), inner_path.to_string(), bytes))?;
    // The documents are the compressed file's: its name, not the name inside.
    let file_name = |path: &str| path.rsplit('/').next().unwrap_or(path).to_string();
    let (outer_name, inner_file_name) = (file_name(&raw.relative_path), file_name(inner_path));
    for document in parsed.documents.iter_mut().filter(|d| d.file_name == inner_file_name) {
        document.file_name = outer_name.clone();
    }
    Ok(parsed)
}

/// Bytes compressed as the tests' files are (the encoders' default levels).
#[cfg(test)]
pub(super) mod fixtures {
    use std::io::Write;

    /// `bytes` gzipped.
    pub fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    }

    /// `bytes` compressed with bzip2.
    pub fn bzip2(bytes: &[u8]) -> Vec<u8> {
        let mut encoder = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::default());
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    }

    /// `bytes` in one LZ4 frame, its content size stated where `stated`.
    pub fn lz4(bytes: &[u8], stated: bool) -> Vec<u8> {
        let info = lz4_flex::frame::FrameInfo::new().content_size(stated.then_some(bytes.len() as u64));
        let mut encoder = lz4_flex::frame::FrameEncoder::with_frame_info(info, Vec::new());
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    }

    /// `bytes` compressed with XZ.
    pub fn xz(bytes: &[u8]) -> Vec<u8> {
        let mut encoder = liblzma::write::XzEncoder::new(Vec::new(), 6);
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::{bzip2, gzip, lz4, xz};
    use super::moz_lz4;
    use crate::parse::{
        block_texts_of, detect_format, document_of, failures_of, raw_for_test, AutoParser, Format, Parser,
    };

    #[test]
    fn a_size_understated_takes_one_more_reservation_not_doublings() {
        let data: Vec<u8> = (0..5_000u32).map(|i| i as u8).collect();
        let read = super::read_reserved(&data[..], 5_000, 10_000).unwrap();
        assert_eq!(
            (read.len(), read.capacity()),
            (5_000, 5_000),
            "as stated: room for it alone"
        );
        let read = super::read_reserved(&data[..], 100, 10_000).unwrap();
        assert_eq!(read, data);
        assert!(
            read.capacity() >= 10_001,
            "the rest of the limit at once: {}",
            read.capacity()
        );
        let read = super::read_reserved(&data[..], 100, 1_000).unwrap();
        assert_eq!(read.len(), 1_001, "the limit and one byte past it");
        let xzed = xz(&data);
        assert_eq!(super::stated_inflated_size(&xzed), 5_000, "an XZ file states its size");
    }

    #[test]
    fn a_compressed_file_is_read_as_the_file_it_holds() {
        let lines = b"{\"_id\": \"a\", \"text\": \"Tide tables.\"}\nnot json\n";
        let parsed = AutoParser.parse(&raw_for_test("corpus.jsonl.gz", gzip(lines))).unwrap();
        assert_eq!(parsed.documents.len(), 1);
        assert_eq!(parsed.documents[0].uri, "memory://test/corpus.jsonl.gz#a");
        assert_eq!(parsed.documents[0].file_name, "corpus.jsonl.gz");
        assert_eq!(failures_of(&parsed)[0].0, "memory://test/corpus.jsonl.gz#L2");
        // Zstandard, and gzip's concatenated members (as `cat a.gz b.gz` makes them).
        let zst = zstd::encode_all(&b"# Pier\n\nThe pier opens in May."[..], 3).unwrap();
        let parsed = AutoParser.parse(&raw_for_test("notes.md.zst", zst)).unwrap();
        assert_eq!(parsed.documents[0].title, "Pier");
        let mut two = gzip(b"First half, ");
        two.extend(gzip(b"second half."));
        let parsed = AutoParser.parse(&raw_for_test("log.txt.gz", two)).unwrap();
        assert_eq!(parsed.documents[0].blocks[0].text, "First half, second half.");
        // Without an extension, by its magic bytes; the file inside sniffed as any file is.
        assert_eq!(detect_format("dump", &gzip(b"x")).unwrap(), Format::Compressed);
        // bzip2 (concatenated streams too) and XZ, by extension and by their magic bytes.
        let text = b"The pier opens in May. ".repeat(50);
        let mut two_bz2 = bzip2(&text);
        two_bz2.extend(bzip2(b"And closes in October."));
        let xz = xz(&text);
        for (name, bytes) in [("pier.txt.bz2", two_bz2.clone()), ("pier.txt.xz", xz.clone())] {
            assert_eq!(detect_format(name, &bytes).unwrap(), Format::Compressed);
            assert_eq!(detect_format("dump", &bytes).unwrap(), Format::Compressed);
            let parsed = AutoParser.parse(&raw_for_test(name, bytes)).unwrap();
            assert_eq!(parsed.documents[0].file_name, name);
            assert!(parsed.documents[0].blocks[0]
                .text
                .starts_with("The pier opens in May. The pier"));
        }
        let parsed = AutoParser.parse(&raw_for_test("pier.txt.bz2", two_bz2)).unwrap();
        assert!(parsed.documents[0].blocks[0]
            .text
            .ends_with("May. And closes in October."));
        // Text that begins like bzip2's magic is text.
        assert_eq!(detect_format("note", b"BZh9 is a level").unwrap(), Format::Text);
    }

    /// A skippable frame of LZ4 and Zstandard: magic `0x184D2A5n`, the data's size, the data.
    fn skippable(n: u8, data: &[u8]) -> Vec<u8> {
        [&[n, 0x2A, 0x4D, 0x18][..], &(data.len() as u32).to_le_bytes(), data].concat()
    }

    #[test]
    fn skippable_frames_before_a_frame_are_passed_over_and_the_frame_after_tells_the_format() {
        use super::Compression;
        let text = b"Harbour dues are paid at the quay office.";
        let zstd = zstd::encode_all(&text[..], 3).unwrap();
        let skipped_zstd = [skippable(0x5A, b"index"), zstd].concat();
        assert_eq!(Compression::of(&skipped_zstd), Some(Compression::Zstd));
        assert_eq!(
            block_texts_of("dues.txt.zst", skipped_zstd),
            [std::str::from_utf8(text).unwrap()]
        );
        assert_eq!(
            Compression::of(&[skippable(0x50, b"a"), lz4(text, false)].concat()),
            Some(Compression::Lz4)
        );
        // Skippable frames before nothing known, past the bytes' end, or too many: no format.
        assert_eq!(
            Compression::of(&[skippable(0x50, b"a"), b"plain text".to_vec()].concat()),
            None
        );
        assert_eq!(Compression::of(&skippable(0x50, b"abc")[..10]), None);
        let many: Vec<u8> = (0..17)
            .flat_map(|_| skippable(0x51, b"x"))
            .chain(lz4(text, false))
            .collect();
        assert_eq!(Compression::of(&many), None);
        // A skippable frame cut short inside an LZ4 file fails as damaged.
        let cut = [lz4(text, false), skippable(0x50, b"four")[..10].to_vec()].concat();
        let error = AutoParser.parse(&raw_for_test("cut.txt.lz4", cut)).unwrap_err();
        assert!(
            error
                .detail()
                .unwrap()
                .contains("a skippable frame ends before its stated size"),
            "{error:?}"
        );
    }

    #[test]
    fn an_lz4_file_is_read_as_the_file_it_holds_its_frames_concatenated_or_legacy() {
        let text = b"The pier opens in May. ".repeat(20_000);
        // Two frames one after another (`cat a.lz4 b.lz4`), the first stating its size.
        let mut two = lz4(&text, true);
        two.extend(lz4(b"And closes in October.", false));
        assert_eq!(
            super::stated_inflated_size(&two),
            text.len() as u64,
            "the first frame states its content size"
        );
        assert_eq!(
            super::stated_inflated_size(&lz4(&text, false)),
            lz4(&text, false).len() as u64
        );
        // A legacy frame (`lz4 -l`): its magic number, then blocks of a size and their bytes.
        let mut legacy = b"\x02\x21\x4C\x18".to_vec();
        let block = lz4_flex::block::compress(b"Legacy frames hold the tide tables.");
        legacy.extend((block.len() as u32).to_le_bytes());
        legacy.extend(block);
        for (name, bytes, starts, ends) in [
            (
                "pier.txt.lz4",
                two.clone(),
                "The pier opens in May. The pier",
                "May. And closes in October.",
            ),
            ("tides.txt.lz4", legacy, "Legacy frames hold", "the tide tables."),
            (
                "skipped.txt.lz4",
                [
                    skippable(0x50, b"writer's own"),
                    two.clone(),
                    skippable(0x5F, b""),
                    lz4(b"Or later.", false),
                ]
                .concat(),
                "The pier opens in May. The pier",
                "And closes in October.Or later.",
            ),
        ] {
            assert_eq!(detect_format(name, &bytes).unwrap(), Format::Compressed);
            assert_eq!(
                detect_format("dump", &bytes).unwrap(),
                Format::Compressed,
                "{name} by its magic"
            );
            let document = document_of(name, bytes);
            assert_eq!(document.file_name, name);
            let read: String = document
                .blocks
                .iter()
                .map(|b| b.text.as_str())
                .collect::<Vec<_>>()
                .join(" ");
            assert!(
                read.starts_with(starts) && read.ends_with(ends),
                "{name}: {}",
                &read[read.len() - 60..]
            );
        }
        // A JSONL corpus inside, each line a document of the compressed file.
        let lines = b"{\"_id\": \"a\", \"text\": \"Tide tables.\"}\n{\"_id\": \"b\", \"text\": \"Pier hours.\"}\n";
        let parsed = AutoParser
            .parse(&raw_for_test("corpus.jsonl.lz4", lz4(lines, true)))
            .unwrap();
        let uris: Vec<_> = parsed.documents.iter().map(|d| d.uri.as_str()).collect();
        assert_eq!(
            uris,
            ["memory://test/corpus.jsonl.lz4#a", "memory://test/corpus.jsonl.lz4#b"]
        );
        // The reference tool's frames: 64 KB blocks linked (each block's matches reach into
        // the one before), a content checksum, a frame of blocks with their own checksums.
        let log = include_bytes!("../../tests/fixtures/harbour-log.txt.lz4");
        assert_eq!(
            super::stated_inflated_size(log),
            111_211,
            "its first frame states its size"
        );
        let read = block_texts_of("harbour-log.txt.lz4", log.to_vec()).join("\n\n");
        assert_eq!(read.matches("End of the harbour log.").count(), 2, "both frames read");
        assert!(read.starts_with("Harbour log\n\nThe "), "{}", &read[..40]);
        assert_eq!(
            read.trim_end().len(),
            2 * 111_211 - 1,
            "every byte but the last line break"
        );
        // A frame whose bytes were changed fails its checksum.
        let mut changed = log.to_vec();
        changed[5_000] ^= 0x20;
        let error = AutoParser.parse(&raw_for_test("changed.txt.lz4", changed)).unwrap_err();
        assert!(
            error.detail().unwrap().starts_with("its LZ4 data is damaged"),
            "{error:?}"
        );
        // A frame cut partway, and one cut between its last block and its end mark (which
        // the decoder alone would read as ended).
        let mut cut = lz4(&text, true);
        cut.truncate(cut.len() / 2);
        let mut before_end_mark = lz4(&text, false);
        before_end_mark.truncate(before_end_mark.len() - 4);
        for cut in [cut, before_end_mark] {
            let error = AutoParser.parse(&raw_for_test("cut.txt.lz4", cut)).unwrap_err();
            assert!(
                error.detail().unwrap().starts_with("its LZ4 data is damaged"),
                "{error:?}"
            );
        }
    }

    /// Firefox's bookmark backups, saved tabs and search engines' list: one LZ4 block
    /// behind Mozilla's header, read as the JSON it holds, by its name or by its magic.
    #[test]
    fn a_mozilla_lz4_file_is_read_as_the_json_it_holds() {
        let bookmarks = br#"{"guid":"root________","title":"","children":[{"title":"Bookmarks Menu","children":[{"title":"Tide tables of the harbour","uri":"https://example.org/tides"}]}]}"#;
        let file = moz_lz4::fixture(bookmarks);
        assert_eq!(super::stated_inflated_size(&file), bookmarks.len() as u64);
        for name in [
            "bookmarks-2026-12-08_12_Xy3.jsonlz4",
            "search.json.mozlz4",
            "recovery.baklz4",
            "backup",
        ] {
            assert_eq!(detect_format(name, &file).unwrap(), Format::Compressed, "{name}");
            assert_eq!(document_of(name, file.clone()).file_name, name);
            let read = block_texts_of(name, file.clone()).join("\n");
            assert!(
                read.contains("Tide tables of the harbour") && read.contains("https://example.org/tides"),
                "{name}: {read}"
            );
        }
        assert_eq!(super::inner_name("a/bookmarks.jsonlz4"), "a/bookmarks.json");
        assert_eq!(super::inner_name("recovery.BAKLZ4"), "recovery.BAK");
        assert_eq!(super::inner_name("search.json.mozlz4"), "search.json");
        // A header stating more than a file may inflate to fails before anything is allocated.
        let mut huge = moz_lz4::MAGIC.to_vec();
        huge.extend(u32::MAX.to_le_bytes());
        huge.extend(&file[12..]);
        let error = AutoParser.parse(&raw_for_test("huge.jsonlz4", huge)).unwrap_err();
        assert_eq!(
            error.to_string(),
            "Mozilla LZ4 file: more than 1024 MiB once inflated (a compression bomb, or too large a document); the file is skipped"
        );
        // Cut short.
        let mut cut = file.clone();
        cut.truncate(cut.len() - 4);
        let error = AutoParser.parse(&raw_for_test("cut.jsonlz4", cut)).unwrap_err();
        assert!(
            error.detail().unwrap().starts_with("its Mozilla LZ4 data is damaged"),
            "{error:?}"
        );
    }

    #[test]
    fn bombs_damage_and_nesting_fail_with_their_reason() {
        // 1,025 gzip members of 1 MiB of zeros each, one after another (about 1 MB).
        let member = gzip(&vec![0u8; 1 << 20]);
        let bomb = member.repeat(1025);
        let error = AutoParser.parse(&raw_for_test("bomb.txt.gz", bomb)).unwrap_err();
        assert_eq!(
            error.to_string(),
            "gzip file: more than 1024 MiB once inflated (a compression bomb, or too large a document); the file is skipped"
        );
        let mut cut = gzip(&b"The harbour log. ".repeat(1000));
        cut.truncate(cut.len() / 2);
        let error = AutoParser.parse(&raw_for_test("cut.txt.gz", cut)).unwrap_err();
        assert!(
            error.detail().unwrap().starts_with("its gzip data is damaged"),
            "{error:?}"
        );
        for (name, mut bytes, says) in [
            (
                "cut.txt.bz2",
                bzip2(&b"The harbour log. ".repeat(1000)),
                "its bzip2 data is damaged",
            ),
            (
                "cut.txt.xz",
                xz(&b"The harbour log. ".repeat(1000)),
                "its XZ data is damaged",
            ),
        ] {
            bytes.truncate(bytes.len() / 2);
            let error = AutoParser.parse(&raw_for_test(name, bytes)).unwrap_err();
            assert!(error.detail().unwrap().starts_with(says), "{name}: {error:?}");
        }
        let twice = gzip(&gzip(b"Hidden twice."));
        let error = AutoParser.parse(&raw_for_test("twice.txt.gz", twice)).unwrap_err();
        assert_eq!(
            error.detail().unwrap(),
            "a compressed file inside a compressed file is not read"
        );
    }
}
