//! ZIP archives read by quarry's own code, so that an archive is split into its files in the
//! indexing process itself and each file is parsed where its format is parsed (a worker for
//! the third-party parsers, each file under its own deadline and memory limit): the central
//! directory (ZIP64's too), each file's data found through its local header, stored and
//! deflated files inflated within a limit and their CRC checked. Reading is linear in the
//! archive: the directory is read until its bytes end whatever count it claims, no size it
//! states is trusted for an allocation, and a file whose data overlaps another's (the
//! overlapping "better zip bomb") is refused.

use std::io::Read;

use bytes::Bytes;

const END_OF_DIRECTORY: u32 = 0x0605_4b50;
const ZIP64_LOCATOR: u32 = 0x0706_4b50;
const ZIP64_END_OF_DIRECTORY: u32 = 0x0606_4b50;
const DIRECTORY_ENTRY: u32 = 0x0201_4b50;
const LOCAL_HEADER: u32 = 0x0403_4b50;
/// The end record's fixed part, and the most a comment after it may add.
const END_RECORD_BYTES: usize = 22;
const MOST_COMMENT_BYTES: usize = 0xFFFF;
const ENTRY_BYTES: usize = 46;
const LOCAL_HEADER_BYTES: usize = 30;
/// General-purpose flags: encrypted; sizes and CRC after the data (a data descriptor); names
/// in UTF-8.
const ENCRYPTED: u16 = 1;
const DATA_DESCRIPTOR: u16 = 1 << 3;
const UTF8_NAMES: u16 = 1 << 11;
/// How far into a file its first local header is looked for, when the directory cannot be
/// read (a self-extracting archive's program comes first).
const MOST_BYTES_BEFORE_FIRST_FILE: usize = 1 << 20;

/// Why one file of an archive could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum MemberError {
    /// It inflates (or says it does) past the limit it was read under, in MiB.
    Inflates(u64),
    /// The archive's files before it, with it, inflate past the archive's budget, in MiB.
    OverBudget(u64),
    Encrypted,
    /// Damaged, or stored in a way quarry does not read; the words say which.
    Unreadable(String),
}

/// One file (or folder) the archive's directory lists.
#[derive(Debug, Clone)]
pub(super) struct Entry {
    pub name: String,
    /// The size the directory says it inflates to.
    pub size: u64,
    flags: u16,
    method: u16,
    crc: u32,
    /// Its data in the archive's bytes, or why it cannot be found.
    data: Result<std::ops::Range<usize>, String>,
}

/// An archive's directory, over the archive's bytes.
pub(super) struct ZipReader {
    bytes: Bytes,
    entries: Vec<Entry>,
}

fn u16_at(bytes: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(bytes.get(at..at.checked_add(2)?)?.try_into().ok()?))
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(bytes.get(at..at.checked_add(4)?)?.try_into().ok()?))
}

fn u64_at(bytes: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(bytes.get(at..at.checked_add(8)?)?.try_into().ok()?))
}

/// Where the end of central directory record begins: the last one whose comment ends the file.
fn end_record(bytes: &[u8]) -> Option<usize> {
    let last = bytes.len().checked_sub(END_RECORD_BYTES)?;
    let first = last.saturating_sub(MOST_COMMENT_BYTES);
    (first..=last).rev().find(|&at| {
        u32_at(bytes, at) == Some(END_OF_DIRECTORY)
            && u16_at(bytes, at + 20).is_some_and(|comment| at + END_RECORD_BYTES + comment as usize == bytes.len())
    })
}

/// The directory's entry count, size and offset, and where its end records begin.
struct Directory {
    count: u64,
    size: u64,
    offset: u64,
    ends_at: usize,
}

fn directory(bytes: &[u8]) -> Result<Directory, String> {
    let end = end_record(bytes).ok_or("no end of central directory record (not a ZIP archive, or cut short)")?;
    let read = |at: usize| u16_at(bytes, end + at);
    let mut directory = Directory {
        count: read(10).unwrap_or(0).into(),
        size: u32_at(bytes, end + 12).unwrap_or(0).into(),
        offset: u32_at(bytes, end + 16).unwrap_or(0).into(),
        ends_at: end,
    };
    let zip64 = directory.count == 0xFFFF || directory.size == 0xFFFF_FFFF || directory.offset == 0xFFFF_FFFF;
    if zip64 && end >= 20 && u32_at(bytes, end - 20) == Some(ZIP64_LOCATOR) {
        let at = u64_at(bytes, end - 20 + 8).and_then(|at| usize::try_from(at).ok());
        let at = at
            .filter(|&at| u32_at(bytes, at) == Some(ZIP64_END_OF_DIRECTORY))
            .ok_or("its ZIP64 end of central directory record is missing")?;
        let field = |offset: usize| u64_at(bytes, at + offset).ok_or("its ZIP64 end record is cut short");
        directory = Directory {
            count: field(32)?,
            size: field(40)?,
            offset: field(48)?,
            ends_at: at,
        };
    }
    Ok(directory)
}

/// The 128 characters of code page 437 above ASCII: ZIP's names without the UTF-8 flag.
const CP437_HIGH: &str = "ÇüéâäàåçêëèïîìÄÅÉæÆôöòûùÿÖÜ¢£¥₧ƒáíóúñÑªº¿⌐¬½¼¡«»░▒▓│┤╡╢╖╕╣║╗╝╜╛┐\
└┴┬├─┼╞╟╚╔╩╦╠═╬╧╨╤╥╙╘╒╓╫╪┘┌█▄▌▐▀αßΓπΣσµτΦΘΩδ∞φε∩≡±≥≤⌠⌡÷≈°∙·√ⁿ²■\u{A0}";

/// How the names not flagged UTF-8 are decoded: UTF-8 where they all are (many writers do not
/// set the flag); a CJK code page where their bytes read as one (Windows' own archiver writes
/// names in the system's code page: Shift_JIS, GBK, Big5, EUC-KR); else code page 437, ZIP's own.
fn legacy_name_encoding(raw_names: &[&[u8]]) -> Option<&'static encoding_rs::Encoding> {
    if raw_names.iter().all(|name| std::str::from_utf8(name).is_ok()) {
        return Some(encoding_rs::UTF_8);
    }
    let mut detector = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
    for name in raw_names {
        detector.feed(name, false);
        detector.feed(b" ", false);
    }
    detector.feed(b"", true);
    let guess = detector.guess(None, chardetng::Utf8Detection::Deny);
    let cjk = [
        encoding_rs::SHIFT_JIS,
        encoding_rs::EUC_JP,
        encoding_rs::GBK,
        encoding_rs::BIG5,
        encoding_rs::EUC_KR,
    ];
    cjk.contains(&guess).then_some(guess)
}

fn decode_name(name: &[u8], utf8: bool, legacy: Option<&'static encoding_rs::Encoding>) -> String {
    if utf8 {
        return String::from_utf8_lossy(name).into_owned();
    }
    match legacy {
        Some(encoding) => encoding.decode_without_bom_handling(name).0.into_owned(),
        None => name
            .iter()
            .map(|&b| match b {
                0..=0x7F => b as char,
                high => CP437_HIGH.chars().nth(usize::from(high - 0x80)).unwrap_or('\u{FFFD}'),
            })
            .collect(),
    }
}

/// A directory entry's fields, before its name is decoded and its data found.
struct RawEntry<'a> {
    name: &'a [u8],
    flags: u16,
    method: u16,
    crc: u32,
    compressed: u64,
    size: u64,
    local_header: u64,
}

/// Reads the directory's entries from `at` to `end`: `count` of them, or fewer where its bytes end.
fn raw_entries(bytes: &[u8], mut at: usize, end: usize, count: u64) -> Result<Vec<RawEntry<'_>>, String> {
    let mut entries = Vec::new();
    while (entries.len() as u64) < count {
        let number = entries.len() + 1;
        let damaged = || format!("its central directory's entry {number} is damaged");
        if at + ENTRY_BYTES > end || u32_at(bytes, at) != Some(DIRECTORY_ENTRY) {
            return Err(damaged());
        }
        let u16_field = |offset: usize| u16_at(bytes, at + offset).unwrap_or(0);
        let u32_field = |offset: usize| u32_at(bytes, at + offset).unwrap_or(0);
        let (name_len, extra_len, comment_len) = (
            usize::from(u16_field(28)),
            usize::from(u16_field(30)),
            usize::from(u16_field(32)),
        );
        let name_at = at + ENTRY_BYTES;
        let extra_at = name_at + name_len;
        let next = extra_at + extra_len + comment_len;
        if next > end {
            return Err(damaged());
        }
        let mut entry = RawEntry {
            name: &bytes[name_at..extra_at],
            flags: u16_field(8),
            method: u16_field(10),
            crc: u32_field(16),
            compressed: u32_field(20).into(),
            size: u32_field(24).into(),
            local_header: u32_field(42).into(),
        };
        read_zip64_extra(&bytes[extra_at..extra_at + extra_len], &mut entry);
        entries.push(entry);
        at = next;
    }
    Ok(entries)
}

/// ZIP64's extra field (id 1): the sizes and offset too large for their 32-bit fields, in
/// that order, each present only where its field is 0xFFFFFFFF.
fn read_zip64_extra(mut extra: &[u8], entry: &mut RawEntry<'_>) {
    while extra.len() >= 4 {
        let id = u16_at(extra, 0).unwrap_or(0);
        let len = usize::from(u16_at(extra, 2).unwrap_or(0)).min(extra.len() - 4);
        if id == 1 {
            let mut values = extra[4..4 + len].chunks_exact(8).map(|v| u64_at(v, 0).unwrap_or(0));
            for field in [&mut entry.size, &mut entry.compressed, &mut entry.local_header] {
                if *field == 0xFFFF_FFFF {
                    match values.next() {
                        Some(value) => *field = value,
                        None => return,
                    }
                }
            }
            return;
        }
        extra = &extra[4 + len..];
    }
}

/// Where an entry's data lies: after its local header (whose name and extra field lengths
/// may differ from the directory's).
fn data_range(bytes: &[u8], shift: u64, entry: &RawEntry<'_>) -> Result<std::ops::Range<usize>, String> {
    let header = shift
        .checked_add(entry.local_header)
        .and_then(|at| usize::try_from(at).ok())
        .filter(|&at| u32_at(bytes, at) == Some(LOCAL_HEADER))
        .ok_or("its local header is missing or damaged")?;
    let name_len = usize::from(u16_at(bytes, header + 26).unwrap_or(0));
    let extra_len = usize::from(u16_at(bytes, header + 28).unwrap_or(0));
    let start = header + LOCAL_HEADER_BYTES + name_len + extra_len;
    let end = usize::try_from(entry.compressed)
        .ok()
        .and_then(|len| start.checked_add(len))
        .filter(|&end| end <= bytes.len())
        .ok_or("its data runs past the end of the archive")?;
    Ok(start..end)
}

/// Refuses every entry whose data overlaps data an entry before it (in the archive's bytes)
/// holds: archives written by archivers never share bytes between files, and entries that do
/// make a small file inflate to any amount.
fn refuse_overlaps(entries: &mut [Entry]) {
    let mut order: Vec<usize> = (0..entries.len())
        .filter(|&i| entries[i].data.as_ref().is_ok_and(|range| !range.is_empty()))
        .collect();
    order.sort_by_key(|&i| entries[i].data.as_ref().map(|range| range.start).unwrap_or(0));
    let mut reached = 0;
    for i in order {
        let Ok(range) = entries[i].data.clone() else { continue };
        if range.start < reached {
            entries[i].data = Err("its data overlaps another file's (a zip bomb)".into());
        }
        reached = reached.max(range.end);
    }
}

/// The files of an archive whose directory cannot be read (one cut short, as a download that
/// stopped leaves it), found by walking their local headers from the first one on, and why the
/// walk stopped: the bytes after a file are no file's header (the directory, or damage), a
/// header is cut short, or a file's sizes come only after its data. None where no local
/// header starts the file's first MiB.
fn raw_entries_from_local_headers(bytes: &[u8]) -> Option<(Vec<RawEntry<'_>>, String)> {
    let first = bytes
        .windows(4)
        .take(MOST_BYTES_BEFORE_FIRST_FILE)
        .position(|w| w == LOCAL_HEADER.to_le_bytes())?;
    let mut entries = Vec::new();
    let mut at = first;
    let stopped = loop {
        if at == bytes.len() {
            break "the archive ends after its last file".to_string();
        }
        match u32_at(bytes, at) {
            Some(LOCAL_HEADER) => {}
            Some(DIRECTORY_ENTRY) => break format!("its central directory, at byte {at}, is cut short"),
            _ => break format!("the bytes at {at} are no file's header"),
        }
        let u16_field = |offset: usize| u16_at(bytes, at + offset);
        let u32_field = |offset: usize| u32_at(bytes, at + offset);
        let (Some(flags), Some(method), Some(crc), Some(compressed), Some(size), Some(name_len), Some(extra_len)) = (
            u16_field(6),
            u16_field(8),
            u32_field(14),
            u32_field(18),
            u32_field(22),
            u16_field(26),
            u16_field(28),
        ) else {
            break format!("the header at byte {at} is cut short");
        };
        let name_at = at + LOCAL_HEADER_BYTES;
        let extra_at = name_at + usize::from(name_len);
        let Some(extra) = bytes.get(extra_at..extra_at + usize::from(extra_len)) else {
            break format!("the header at byte {at} is cut short");
        };
        if flags & DATA_DESCRIPTOR != 0 && compressed == 0 {
            break format!(
                "the file at byte {at} states its size only after its data, where a cut archive cannot be read on"
            );
        }
        let mut entry = RawEntry {
            name: &bytes[name_at..extra_at],
            flags,
            method,
            crc,
            compressed: compressed.into(),
            size: size.into(),
            local_header: at as u64,
        };
        read_zip64_extra(extra, &mut entry);
        let end = usize::try_from(entry.compressed)
            .ok()
            .and_then(|len| (extra_at + usize::from(extra_len)).checked_add(len));
        entries.push(entry);
        match end {
            Some(end) if end <= bytes.len() => at = after_data(bytes, end, flags & DATA_DESCRIPTOR != 0),
            // The file's data runs past the end: it fails alone, as its data range says.
            _ => break "the archive ends inside its last file".to_string(),
        }
    };
    Some((entries, stopped))
}

/// Where the next header starts after a file's data ending at `end`: past its data
/// descriptor where it has one (12 to 24 bytes: a signature or not, sizes of 4 or 8 bytes),
/// the first of those places where a header's signature is.
fn after_data(bytes: &[u8], end: usize, descriptor: bool) -> usize {
    let is_header = |at: usize| matches!(u32_at(bytes, at), Some(LOCAL_HEADER | DIRECTORY_ENTRY));
    match descriptor {
        false => end,
        true => [12, 16, 20, 24]
            .into_iter()
            .map(|len| end + len)
            .find(|&at| is_header(at) || at == bytes.len())
            .unwrap_or(end),
    }
}

impl ZipReader {
    /// The archive by its central directory; where that cannot be read, by its files' local
    /// headers ([`raw_entries_from_local_headers`]), with what was wrong and where the walk
    /// stopped. Err: neither can be read.
    pub fn open_or_recover(bytes: Bytes) -> Result<(Self, Option<String>), String> {
        let unreadable = match Self::open(bytes.clone()) {
            Ok(archive) => return Ok((archive, None)),
            Err(why) => why,
        };
        let Some((raw, stopped)) = raw_entries_from_local_headers(&bytes) else {
            return Err(unreadable);
        };
        if raw.is_empty() {
            return Err(format!(
                "{unreadable}; no file could be read by its local header: {stopped}"
            ));
        }
        let entries = Self::entries_of(&bytes, 0, &raw);
        let found = entries.len();
        Ok((
            Self { bytes, entries },
            Some(format!(
                "{unreadable}; read by its files' local headers instead: {found} file{}, then {stopped}",
                if found == 1 { "" } else { "s" }
            )),
        ))
    }

    pub fn open(bytes: Bytes) -> Result<Self, String> {
        let directory = directory(&bytes)?;
        // Bytes before the archive (a self-extracting program) shift every offset it states:
        // the directory ends where its end record begins.
        let starts_at = usize::try_from(directory.size)
            .ok()
            .and_then(|size| directory.ends_at.checked_sub(size))
            .ok_or("its central directory is larger than the file")?;
        let shift = (starts_at as u64)
            .checked_sub(directory.offset)
            .ok_or("its central directory's offset lies past the directory")?;
        let raw = raw_entries(&bytes, starts_at, directory.ends_at, directory.count)?;
        let entries = Self::entries_of(&bytes, shift, &raw);
        Ok(Self { bytes, entries })
    }

    /// The entries of `raw`, their names decoded and their data found (offsets shifted by `shift`).
    fn entries_of(bytes: &[u8], shift: u64, raw: &[RawEntry<'_>]) -> Vec<Entry> {
        let legacy: Vec<&[u8]> = raw
            .iter()
            .filter(|e| e.flags & UTF8_NAMES == 0)
            .map(|e| e.name)
            .collect();
        let legacy = legacy_name_encoding(&legacy);
        let mut entries: Vec<Entry> = raw
            .iter()
            .map(|e| Entry {
                name: decode_name(e.name, e.flags & UTF8_NAMES != 0, legacy),
                size: e.size,
                flags: e.flags,
                method: e.method,
                crc: e.crc,
                data: data_range(bytes, shift, e),
            })
            .collect();
        refuse_overlaps(&mut entries);
        entries
    }

    /// The archive's entries, in the order its directory lists them (folders too: their names end in `/`).
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// `entry`'s bytes, inflated no further than the size the directory states, which must be
    /// within `limit` (a stored file's are the archive's own).
    pub fn read(&self, entry: &Entry, limit: u64) -> Result<Bytes, MemberError> {
        let range = entry.data.clone().map_err(MemberError::Unreadable)?;
        if entry.flags & ENCRYPTED != 0 {
            return Err(MemberError::Encrypted);
        }
        if entry.size > limit {
            return Err(MemberError::Inflates(limit >> 20));
        }
        let data = self.bytes.slice(range);
        let bytes = match entry.method {
            0 => data,
            8 => {
                // Inflated no further than the size the directory states (at most `limit`):
                // what an archive's budget counts is what its files may cost. Room for that
                // size at once: a growing vector held its old and new buffers as it doubled.
                let mut inflated = Vec::with_capacity(entry.size as usize + 1);
                flate2::read::DeflateDecoder::new(&data[..])
                    .take(entry.size + 1)
                    .read_to_end(&mut inflated)
                    .map_err(|e| MemberError::Unreadable(format!("its deflated data is damaged ({e})")))?;
                Bytes::from(inflated)
            }
            method => {
                return Err(MemberError::Unreadable(format!(
                    "it is compressed with {} (ZIP method {method}); quarry reads stored and deflated files",
                    method_name(method)
                )))
            }
        };
        if bytes.len() as u64 != entry.size {
            return Err(MemberError::Unreadable(match bytes.len() as u64 > entry.size {
                true => format!(
                    "it inflates to more than the {} bytes the archive's directory says",
                    entry.size
                ),
                false => format!(
                    "it inflates to {} bytes where the archive's directory says {}",
                    bytes.len(),
                    entry.size
                ),
            }));
        }
        if crc32fast::hash(&bytes) != entry.crc {
            return Err(MemberError::Unreadable(
                "its CRC does not match its bytes (damaged)".into(),
            ));
        }
        Ok(bytes)
    }
}

fn method_name(method: u16) -> &'static str {
    match method {
        9 => "Deflate64",
        12 => "bzip2",
        14 => "LZMA",
        93 => "Zstandard",
        95 => "XZ",
        99 => "AES encryption",
        _ => "another method",
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn zip_of(files: &[(&str, &[u8], zip::CompressionMethod)]) -> Vec<u8> {
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        for (name, bytes, method) in files {
            let options = zip::write::SimpleFileOptions::default().compression_method(*method);
            zip.start_file(*name, options).unwrap();
            zip.write_all(bytes).unwrap();
        }
        zip.finish().unwrap().into_inner()
    }

    #[test]
    fn stored_and_deflated_files_are_read_in_the_directorys_order() {
        let text = "Tide tables for the harbour. ".repeat(200);
        let archive = zip_of(&[
            ("a/", b"", zip::CompressionMethod::Stored),
            ("a/tides.txt", text.as_bytes(), zip::CompressionMethod::Deflated),
            ("b.txt", b"Stored as it is.", zip::CompressionMethod::Stored),
        ]);
        let reader = ZipReader::open(Bytes::from(archive.clone())).unwrap();
        let names: Vec<&str> = reader.entries().iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["a/", "a/tides.txt", "b.txt"]);
        let read = |i: usize| reader.read(&reader.entries()[i], 1 << 20);
        assert_eq!(read(1).unwrap(), text.as_bytes());
        assert_eq!(read(2).unwrap(), &b"Stored as it is."[..]);
        assert_eq!(
            reader.read(&reader.entries()[1], 1000).unwrap_err(),
            MemberError::Inflates(0)
        );
        // A program before the archive (a self-extracting one) shifts its offsets.
        let mut shifted = b"MZ a program stub ".repeat(10);
        shifted.extend_from_slice(&archive);
        let reader = ZipReader::open(Bytes::from(shifted)).unwrap();
        assert_eq!(
            reader.read(&reader.entries()[2], 1 << 20).unwrap(),
            &b"Stored as it is."[..]
        );
    }

    #[test]
    fn an_archive_cut_short_is_read_by_its_files_headers_up_to_the_cut() {
        let text = "Tide tables for the harbour. ".repeat(200);
        let files: [(&str, &[u8], zip::CompressionMethod); 3] = [
            ("a/tides.txt", text.as_bytes(), zip::CompressionMethod::Deflated),
            ("b.txt", b"Stored as it is.", zip::CompressionMethod::Stored),
            ("c.txt", text.as_bytes(), zip::CompressionMethod::Stored),
        ];
        let archive = zip_of(&files);
        let headers: Vec<usize> = archive
            .windows(4)
            .enumerate()
            .filter(|(_, w)| *w == LOCAL_HEADER.to_le_bytes())
            .map(|(at, _)| at)
            .collect();
        let directory = archive
            .windows(4)
            .position(|w| w == DIRECTORY_ENTRY.to_le_bytes())
            .unwrap();
        let read_all = |cut: usize| {
            let (reader, why) = ZipReader::open_or_recover(Bytes::from(archive[..cut].to_vec())).unwrap();
            let read: Vec<Result<Bytes, MemberError>> =
                reader.entries().iter().map(|e| reader.read(e, 1 << 20)).collect();
            (
                reader.entries().iter().map(|e| e.name.clone()).collect::<Vec<_>>(),
                read,
                why.unwrap(),
            )
        };
        // Cut inside the directory: every file read, the cut said.
        let (names, read, why) = read_all(directory + 30);
        assert_eq!(names, ["a/tides.txt", "b.txt", "c.txt"]);
        assert_eq!(read[0].as_ref().unwrap(), text.as_bytes());
        assert_eq!(read[2].as_ref().unwrap(), text.as_bytes());
        assert!(
            why.starts_with("no end of central directory record")
                && why.ends_with(&format!("; read by its files' local headers instead: 3 files, then its central directory, at byte {directory}, is cut short")),
            "{why}"
        );
        // Cut inside the last file's data: the files before it read, it fails alone.
        let (names, read, why) = read_all(headers[2] + 100);
        assert_eq!(names.len(), 3);
        assert_eq!(read[1].as_ref().unwrap(), &b"Stored as it is."[..]);
        assert_eq!(
            read[2].as_ref().unwrap_err(),
            &MemberError::Unreadable("its data runs past the end of the archive".into())
        );
        assert!(why.ends_with(", then the archive ends inside its last file"), "{why}");
        // Cut inside a header, and right after a file.
        let (names, _, why) = read_all(headers[2] + 10);
        assert_eq!(names, ["a/tides.txt", "b.txt"]);
        assert!(
            why.ends_with(&format!(", then the header at byte {} is cut short", headers[2])),
            "{why}"
        );
        let (names, _, why) = read_all(headers[2]);
        assert_eq!(names, ["a/tides.txt", "b.txt"]);
        assert!(
            why.ends_with("2 files, then the archive ends after its last file"),
            "{why}"
        );
        // A whole archive is read by its directory; bytes that hold no file header are no archive.
        assert!(ZipReader::open_or_recover(Bytes::from(archive.clone()))
            .unwrap()
            .1
            .is_none());
        assert!(
            ZipReader::open_or_recover(Bytes::from_static(b"PK but no archive at all"))
                .err()
                .unwrap()
                .starts_with("no end of central directory record")
        );
        // A file followed by a data descriptor (its CRC and sizes again) is read past it.
        let mut described = archive[..headers[1]].to_vec();
        described[6] |= DATA_DESCRIPTOR as u8;
        described.extend(0x0807_4b50u32.to_le_bytes());
        described.extend(&archive[14..26]);
        described.extend(&archive[headers[1]..directory + 30]);
        let (reader, why) = ZipReader::open_or_recover(Bytes::from(described.clone())).unwrap();
        assert_eq!(reader.entries().len(), 3, "{why:?}");
        assert_eq!(
            reader.read(&reader.entries()[1], 1 << 20).unwrap(),
            &b"Stored as it is."[..]
        );
        // One whose sizes come only after its data cannot be walked past.
        described[18..22].copy_from_slice(&[0; 4]);
        let why = ZipReader::open_or_recover(Bytes::from(described)).err().unwrap();
        assert!(why.ends_with("no file could be read by its local header: the file at byte 0 states its size only after its data, where a cut archive cannot be read on"), "{why}");
    }

    #[test]
    fn damage_is_named_and_lies_are_not_believed() {
        let archive = zip_of(&[(
            "note.txt",
            b"Buoys are repainted yearly.",
            zip::CompressionMethod::Stored,
        )]);
        // A flipped byte in the data: the CRC says so.
        let mut flipped = archive.clone();
        let at = flipped.windows(5).position(|w| w == b"Buoys").unwrap();
        flipped[at] = b'b';
        let reader = ZipReader::open(Bytes::from(flipped)).unwrap();
        assert_eq!(
            reader.read(&reader.entries()[0], 1 << 20).unwrap_err(),
            MemberError::Unreadable("its CRC does not match its bytes (damaged)".into())
        );
        // A directory that understates a deflated file's size: inflated no further than it says.
        let text = "Tide tables for the harbour. ".repeat(200);
        let mut understated = zip_of(&[("a.txt", text.as_bytes(), zip::CompressionMethod::Deflated)]);
        let entry_at = understated
            .windows(4)
            .position(|w| w == DIRECTORY_ENTRY.to_le_bytes())
            .unwrap();
        understated[entry_at + 24..entry_at + 28].copy_from_slice(&100u32.to_le_bytes());
        let reader = ZipReader::open(Bytes::from(understated)).unwrap();
        assert_eq!(
            reader.read(&reader.entries()[0], 1 << 20).unwrap_err(),
            MemberError::Unreadable("it inflates to more than the 100 bytes the archive's directory says".into())
        );
        // A directory claiming 65,535 entries holds one: the second is damaged, nothing allocated for the rest.
        let mut many = archive.clone();
        let end = end_record(&many).unwrap();
        many[end + 8..end + 12].copy_from_slice(&[0xFF, 0xFF, 0xFF, 0xFF]);
        assert_eq!(
            ZipReader::open(Bytes::from(many)).err().unwrap(),
            "its central directory's entry 2 is damaged"
        );
        // Cut short: no end record.
        assert!(ZipReader::open(Bytes::from(archive[..archive.len() - 4].to_vec()))
            .err()
            .unwrap()
            .starts_with("no end of central directory record"));
        // Two entries sharing one file's data (the overlapping bomb): the second is refused.
        let entry_at = archive
            .windows(4)
            .position(|w| w == DIRECTORY_ENTRY.to_le_bytes())
            .unwrap();
        let end = end_record(&archive).unwrap();
        let entry = archive[entry_at..end].to_vec();
        let mut twice = archive[..end].to_vec();
        twice.extend_from_slice(&entry);
        let mut record = archive[end..].to_vec();
        record[8..10].copy_from_slice(&2u16.to_le_bytes());
        record[10..12].copy_from_slice(&2u16.to_le_bytes());
        record[12..16].copy_from_slice(&(2 * entry.len() as u32).to_le_bytes());
        twice.extend_from_slice(&record);
        let reader = ZipReader::open(Bytes::from(twice)).unwrap();
        assert_eq!(reader.entries().len(), 2);
        assert!(reader.read(&reader.entries()[0], 1 << 20).is_ok());
        assert_eq!(
            reader.read(&reader.entries()[1], 1 << 20).unwrap_err(),
            MemberError::Unreadable("its data overlaps another file's (a zip bomb)".into())
        );
    }

    #[test]
    fn names_without_the_utf8_flag_are_decoded_as_their_writer_wrote_them() {
        let cp437: Vec<char> = CP437_HIGH.chars().collect();
        assert_eq!(cp437.len(), 128);
        assert_eq!((cp437[0], cp437[0x7F]), ('Ç', '\u{A0}'));
        assert_eq!(decode_name(b"caf\x82.txt", false, None), "café.txt");
        let (shift_jis, _, _) = encoding_rs::SHIFT_JIS.encode("議事録/配管の点検報告書.txt");
        let names: [&[u8]; 1] = [&shift_jis];
        let legacy = legacy_name_encoding(&names);
        assert_eq!(decode_name(&shift_jis, false, legacy), "議事録/配管の点検報告書.txt");
        assert_eq!(legacy_name_encoding(&[b"plain.txt"]), Some(encoding_rs::UTF_8));
    }
}
