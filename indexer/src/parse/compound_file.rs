//! The OLE compound file (MS-CFB) that Word, Excel and PowerPoint 97-2003 files, Outlook's
//! messages and Office's encrypted packages are saved in: a small file system of sectors, a
//! table of their chains (the FAT), a directory of named streams and storages (folders), and a
//! mini stream of 64-byte sectors for the small streams.
//!
//! Read by quarry's own code, in process: every chain is followed at most once around the
//! table (a chain that loops, or points outside the file, is an error), and a stream is never
//! larger than the sectors it is read from, so memory and time stay linear in the file.

use super::ParseError;

const SIGNATURE: &[u8] = b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1";
const HEADER_BYTES: usize = 512;
const END_OF_CHAIN: u32 = 0xFFFF_FFFE;
/// Sector numbers at or past this are markers (free, end of chain, FAT, DIFAT), not sectors.
const MAX_SECTOR: u32 = 0xFFFF_FFFA;
const NO_ENTRY: u32 = 0xFFFF_FFFF;
const DIRECTORY_ENTRY_BYTES: usize = 128;
const STORAGE: u8 = 1;
const STREAM: u8 = 2;
const ROOT: u8 = 5;

/// A storage of the file (a folder of streams and storages), by its directory entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct Storage(u32);

/// The storage every other is inside.
pub(super) const ROOT_STORAGE: Storage = Storage(0);

/// Whether `bytes` begin as a compound file does.
pub(super) fn is_compound_file(bytes: &[u8]) -> bool {
    bytes.starts_with(SIGNATURE)
}

/// The little-endian `u16` at byte `at`, none past the end (the formats in compound files
/// are little-endian throughout).
pub(super) fn u16_at(bytes: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(bytes.get(at..at.checked_add(2)?)?.try_into().ok()?))
}

/// The little-endian `u32` at byte `at`, none past the end.
pub(super) fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(bytes.get(at..at.checked_add(4)?)?.try_into().ok()?))
}

/// One directory entry: a stream's name, where it starts and its size.
#[derive(Debug, Clone)]
struct Entry {
    id: u32,
    name: String,
    kind: u8,
    left: u32,
    right: u32,
    child: u32,
    start: u32,
    size: u64,
}

/// An open compound file: its sector table, its directory and its mini stream.
pub(super) struct CompoundFile<'a> {
    bytes: &'a [u8],
    sector_bytes: usize,
    fat: Vec<u32>,
    entries: Vec<Entry>,
    mini_fat: Vec<u32>,
    mini_stream: Vec<u8>,
    mini_cutoff: u64,
}

impl<'a> CompoundFile<'a> {
    /// Opens `bytes`; the error says what is wrong with them.
    pub fn open(bytes: &'a [u8]) -> Result<Self, String> {
        if !is_compound_file(bytes) || bytes.len() < HEADER_BYTES {
            return Err("not an OLE compound file (its header is missing or cut short)".into());
        }
        let header = |at| u32_at(bytes, at).unwrap_or(0);
        let sector_bytes = match u16_at(bytes, 30) {
            Some(9) => 512,
            Some(12) => 4096,
            other => {
                return Err(format!(
                    "sector size 2^{} is neither 512 nor 4096 bytes",
                    other.unwrap_or(0)
                ))
            }
        };
        let mut file = Self {
            bytes,
            sector_bytes,
            fat: Vec::new(),
            entries: Vec::new(),
            mini_fat: Vec::new(),
            mini_stream: Vec::new(),
            mini_cutoff: u64::from(header(56)),
        };
        file.fat = file.read_fat(header(68), header(72) as usize, header(44) as usize)?;
        let directory = file.chain_bytes(header(48), &file.fat, "directory")?;
        file.entries = directory
            .chunks_exact(DIRECTORY_ENTRY_BYTES)
            .enumerate()
            .map(|(id, raw)| {
                let name_bytes = usize::from(u16_at(raw, 64).unwrap_or(0)).min(64);
                let name: Vec<u16> = raw[..name_bytes.saturating_sub(2)]
                    .chunks_exact(2)
                    .map(|c| u16::from_le_bytes([c[0], c[1]]))
                    .collect();
                Entry {
                    id: id as u32,
                    name: String::from_utf16_lossy(&name),
                    kind: raw[66],
                    left: u32_at(raw, 68).unwrap_or(NO_ENTRY),
                    right: u32_at(raw, 72).unwrap_or(NO_ENTRY),
                    child: u32_at(raw, 76).unwrap_or(NO_ENTRY),
                    start: u32_at(raw, 116).unwrap_or(END_OF_CHAIN),
                    size: match sector_bytes {
                        512 => u64::from(u32_at(raw, 120).unwrap_or(0)),
                        _ => u32_at(raw, 120).unwrap_or(0) as u64 | (u64::from(u32_at(raw, 124).unwrap_or(0)) << 32),
                    },
                }
            })
            .collect();
        let root = file.entries.first().filter(|e| e.kind == ROOT).cloned();
        let root = root.ok_or("the directory has no root entry")?;
        if root.size > 0 {
            let mini_fat = file.chain_bytes(header(60), &file.fat, "mini sector table")?;
            file.mini_fat = mini_fat.chunks_exact(4).map(|c| u32_at(c, 0).unwrap_or(0)).collect();
            let mut mini_stream = file.chain_bytes(root.start, &file.fat, "mini stream")?;
            mini_stream.truncate(root.size.min(mini_stream.len() as u64) as usize);
            file.mini_stream = mini_stream;
        }
        Ok(file)
    }

    /// Opens an Office document of `format` (`DOC`, `XLS`, `PPT`): a file that is no compound
    /// file fails as corrupted with what is wrong, one holding an encrypted package (what Office
    /// saves with a password, whatever the file's name) as encrypted.
    pub fn open_document(bytes: &'a [u8], format: &str) -> Result<Self, ParseError> {
        let file = Self::open(bytes).map_err(|e| ParseError::Corrupt(format!("{format}: {e}")))?;
        match file.stream("EncryptedPackage").is_some() {
            true => Err(ParseError::Encrypted(format.into())),
            false => Ok(file),
        }
    }

    /// Sectors the file holds after its header: no chain is longer.
    fn sector_count(&self) -> usize {
        self.bytes.len() / self.sector_bytes
    }

    fn sector(&self, number: u32) -> Option<&'a [u8]> {
        let start = (number as usize).checked_add(1)?.checked_mul(self.sector_bytes)?;
        self.bytes.get(start..start.checked_add(self.sector_bytes)?)
    }

    /// The FAT: its `count` sectors are listed by the header's 109 slots, then by a chain of
    /// `difat_count` DIFAT sectors (each one's last slot names the next). Slots past the
    /// counts are not read (a damaged unused slot does not fail the file).
    fn read_fat(&self, first_difat: u32, difat_count: usize, count: usize) -> Result<Vec<u32>, String> {
        let mut fat_sectors: Vec<u32> = (0..109).filter_map(|i| u32_at(self.bytes, 76 + 4 * i)).collect();
        let mut next = first_difat;
        let mut hops = 0;
        while next < MAX_SECTOR && hops < difat_count {
            hops += 1;
            let sector = self.sector(next).filter(|_| hops <= self.sector_count());
            let sector = sector.ok_or("the DIFAT chain loops or points outside the file")?;
            let slots = sector.len() / 4;
            fat_sectors.extend((0..slots - 1).filter_map(|i| u32_at(sector, 4 * i)));
            next = u32_at(sector, 4 * (slots - 1)).unwrap_or(END_OF_CHAIN);
        }
        fat_sectors.truncate(count);
        let fat_sectors: Vec<u32> = fat_sectors.into_iter().filter(|n| *n < MAX_SECTOR).collect();
        if fat_sectors.len() > self.sector_count() {
            return Err("the header lists more FAT sectors than the file holds".into());
        }
        let mut fat = Vec::new();
        for number in fat_sectors {
            let sector = self.sector(number).ok_or("a FAT sector lies outside the file")?;
            fat.extend(sector.chunks_exact(4).map(|c| u32_at(c, 0).unwrap_or(0)));
        }
        Ok(fat)
    }

    /// The sectors of the chain from `start` in `table`, in order: an error where the chain
    /// loops (is longer than the `sectors` there are) or names a sector the table does not hold.
    fn chain(start: u32, table: &[u32], sectors: usize, what: &str) -> Result<Vec<u32>, String> {
        let mut chain = Vec::new();
        let mut next = start;
        while next != END_OF_CHAIN {
            if chain.len() >= sectors.min(table.len()) || next >= MAX_SECTOR {
                return Err(format!("the {what}'s sector chain loops or is broken"));
            }
            chain.push(next);
            next = *table
                .get(next as usize)
                .ok_or_else(|| format!("the {what}'s sector chain points past the sector table"))?;
        }
        Ok(chain)
    }

    fn chain_bytes(&self, start: u32, table: &[u32], what: &str) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        for number in Self::chain(start, table, self.sector_count(), what)? {
            out.extend_from_slice(
                self.sector(number)
                    .ok_or_else(|| format!("the {what} runs past the file's end"))?,
            );
        }
        Ok(out)
    }

    /// The directory entries a storage holds (its tree of children), each once.
    fn children(&self, storage: Storage) -> Vec<&Entry> {
        let mut children = Vec::new();
        let mut seen = vec![false; self.entries.len()];
        let mut pending = vec![self.entries.get(storage.0 as usize).map_or(NO_ENTRY, |s| s.child)];
        while let Some(id) = pending.pop() {
            let Some(entry) = self.entries.get(id as usize) else {
                continue;
            };
            if std::mem::replace(&mut seen[id as usize], true) {
                continue;
            }
            children.push(entry);
            pending.extend([entry.left, entry.right]);
        }
        children
    }

    /// The root storage's streams' names (not those inside nested storages).
    pub fn stream_names(&self) -> Vec<&str> {
        let children = self.children(ROOT_STORAGE).into_iter();
        children.filter(|e| e.kind == STREAM).map(|e| e.name.as_str()).collect()
    }

    /// The storages inside `storage`, by name (a storage is a folder of streams).
    pub fn storages_in(&self, storage: Storage) -> Vec<(&str, Storage)> {
        let mut storages: Vec<(&str, Storage)> = self
            .children(storage)
            .into_iter()
            .filter(|e| e.kind == STORAGE)
            .map(|e| (e.name.as_str(), Storage(e.id)))
            .collect();
        storages.sort_unstable_by_key(|(name, _)| *name);
        storages
    }

    /// The root storage's stream `name`: see [`Self::stream_in`].
    pub fn stream(&self, name: &str) -> Option<Result<Vec<u8>, String>> {
        self.stream_in(ROOT_STORAGE, name)
    }

    /// `storage`'s stream `name` (compared as the format does: ignoring ASCII case), none
    /// where there is no such stream; an error where its sectors cannot be read.
    pub fn stream_in(&self, storage: Storage, name: &str) -> Option<Result<Vec<u8>, String>> {
        let entry = self
            .children(storage)
            .into_iter()
            .find(|e| e.kind == STREAM && e.name.eq_ignore_ascii_case(name))?;
        let what = format!("stream {name}");
        let read = match entry.size < self.mini_cutoff {
            true => Self::chain(entry.start, &self.mini_fat, self.mini_stream.len() / 64, &what).and_then(|chain| {
                let mut out = Vec::new();
                for number in chain {
                    let start = number as usize * 64;
                    let sector = self.mini_stream.get(start..start + 64);
                    out.extend_from_slice(sector.ok_or_else(|| format!("the {what} runs past the mini stream"))?);
                }
                Ok(out)
            }),
            false => self.chain_bytes(entry.start, &self.fat, &what),
        };
        Some(read.map(|mut bytes| {
            bytes.truncate(entry.size.min(bytes.len() as u64) as usize);
            bytes
        }))
    }
}

#[cfg(test)]
pub(crate) mod fixtures {
    //! Real files, written by LibreOffice 7.4 (`soffice --convert-to 'doc:MS Word 97'`,
    //! `'xls:MS Excel 97'`) and by xlwt 1.3; LibreOffice's have a placeholder paragraph or cell
    //! (`PLACEHOLDER_` repeated) that [`with_text`] overwrites in place.

    pub const REPORT_DOC: &[u8] = include_bytes!("../../tests/fixtures/report.doc");
    pub const PARTS_XLS: &[u8] = include_bytes!("../../tests/fixtures/parts.xls");
    pub const XLWT_XLS: &[u8] = include_bytes!("../../tests/fixtures/xlwt.xls");
    /// LibreOffice's `'ppt:MS PowerPoint 97'` of a python-pptx deck, its streams repacked
    /// without the 588 KB thumbnail LibreOffice puts in its summary information.
    pub const DECK_PPT: &[u8] = include_bytes!("../../tests/fixtures/deck.ppt");

    /// `file` with its placeholder (stored as 8-bit or as UTF-16 text) overwritten by `text`
    /// (ASCII, no longer than the placeholder), padded with spaces.
    pub fn with_text(file: &[u8], text: &str) -> Vec<u8> {
        let mut out = file.to_vec();
        let utf16 = |s: &str| s.encode_utf16().flat_map(u16::to_le_bytes).collect::<Vec<u8>>();
        let find = |needle: &[u8]| out.windows(needle.len()).position(|w| w == needle);
        let (at, wide) = match find(b"PLACEHOLDER_") {
            Some(at) => (at, false),
            None => (
                find(&utf16("PLACEHOLDER_")).expect("the fixture holds a placeholder"),
                true,
            ),
        };
        let width = if wide { 2 } else { 1 };
        let placeholder = if wide {
            utf16("PLACEHOLDER_")
        } else {
            b"PLACEHOLDER_".to_vec()
        };
        let mut length = 0;
        while out[at + length * width..].starts_with(&placeholder) {
            length += 12;
        }
        assert!(
            text.is_ascii() && text.len() <= length,
            "{text:?} does not fit the placeholder"
        );
        let padded = format!("{text:<length$}");
        let bytes = if wide { utf16(&padded) } else { padded.into_bytes() };
        out[at..at + bytes.len()].copy_from_slice(&bytes);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::*;
    use super::*;

    #[test]
    fn streams_are_read_from_sectors_and_the_mini_stream() {
        let file = CompoundFile::open(REPORT_DOC).unwrap();
        let mut names = file.stream_names();
        names.sort();
        assert_eq!(
            names,
            [
                "\u{1}CompObj",
                "\u{1}Ole",
                "\u{5}DocumentSummaryInformation",
                "\u{5}SummaryInformation",
                "1Table",
                "WordDocument"
            ]
        );
        // WordDocument (5,693 bytes) is in regular sectors, 1Table (2,377) in the mini stream.
        let word = file.stream("worddocument").unwrap().unwrap();
        assert_eq!((word.len(), &word[..2]), (5693, &[0xEC, 0xA5][..]));
        assert_eq!(file.stream("1Table").unwrap().unwrap().len(), 2377);
        assert!(file.stream("Workbook").is_none());
    }

    #[test]
    fn broken_files_fail_with_what_is_wrong() {
        assert!(CompoundFile::open(&REPORT_DOC[..300])
            .err()
            .unwrap()
            .contains("cut short"));
        // A FAT whose every entry points at sector 0: every chain loops.
        let mut looping = REPORT_DOC.to_vec();
        let first_fat = u32_at(&looping, 76).unwrap() as usize;
        let at = (first_fat + 1) * 512;
        looping[at..at + 512].fill(0);
        let error = CompoundFile::open(&looping).err().unwrap();
        assert!(error.contains("loops"), "{error}");
        // A directory chain that points far past the file.
        let mut outside = REPORT_DOC.to_vec();
        outside[48..52].copy_from_slice(&0x00FF_FFFFu32.to_le_bytes());
        assert!(CompoundFile::open(&outside).err().unwrap().contains("sector chain"));
    }
}
