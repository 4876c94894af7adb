//! Tar archives (`.tar`, and inflated `.tar.gz`, `.tgz`, `.tar.zst`, `.tar.bz2`, `.tar.xz`) read by quarry's own code:
//! 512-byte headers (POSIX ustar's name prefix, GNU's long names, pax's `path` records), each
//! file's bytes the archive's own. A header whose checksum does not add up ends the reading
//! there (the files before it are kept, and the archive says where it broke).

use bytes::Bytes;

const BLOCK: usize = 512;

/// One regular file of the archive.
#[derive(Debug, Clone)]
pub(super) struct TarFile {
    pub name: String,
    pub bytes: Bytes,
}

/// The archive's regular files in order, and where its headers stopped making sense (None
/// when it ends as tar archives do).
pub(super) struct TarListing {
    pub files: Vec<TarFile>,
    pub broken_at: Option<String>,
}

/// A header field's text: its bytes up to the first NUL.
fn field(header: &[u8], at: std::ops::Range<usize>) -> &[u8] {
    let bytes = &header[at];
    &bytes[..bytes.iter().position(|b| *b == 0).unwrap_or(bytes.len())]
}

/// A numeric field: octal digits (spaces and NULs around them), or base 256 when its first
/// byte's high bit is set (GNU's sizes past 8 GiB).
fn number(bytes: &[u8]) -> Option<u64> {
    if bytes.first().is_some_and(|b| b & 0x80 != 0) {
        return bytes[1..].iter().try_fold(u64::from(bytes[0] & 0x7F), |n, b| {
            n.checked_mul(256)?.checked_add(u64::from(*b))
        });
    }
    let digits: &[u8] = {
        let text = std::str::from_utf8(bytes).ok()?;
        text.trim_matches(|c: char| c == ' ' || c == '\0').as_bytes()
    };
    if digits.is_empty() {
        return Some(0);
    }
    digits.iter().try_fold(0u64, |n, b| match b {
        b'0'..=b'7' => n.checked_mul(8)?.checked_add(u64::from(b - b'0')),
        _ => None,
    })
}

/// Whether the header's checksum (its bytes summed, the checksum field read as spaces) matches.
fn checksum_matches(header: &[u8]) -> bool {
    let sum: u64 = header
        .iter()
        .enumerate()
        .map(|(i, b)| {
            if (148..156).contains(&i) {
                u64::from(b' ')
            } else {
                u64::from(*b)
            }
        })
        .sum();
    number(&header[148..156]) == Some(sum)
}

/// The `path` a pax extended header sets (`<length> path=<name>\n` records).
fn pax_path(records: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(records);
    text.lines()
        .filter_map(|line| line.split_once(' ').map(|(_, record)| record))
        .find_map(|record| record.strip_prefix("path=").map(str::to_string))
}

fn text_of(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Lists the archive's regular files. Linear in the archive: each header is read once and
/// each file's bytes are a slice of the archive's.
pub(super) fn list(archive: &Bytes) -> TarListing {
    let mut files = Vec::new();
    let mut at = 0;
    // The name the next file takes from a GNU long-name or pax header before it.
    let mut next_name: Option<String> = None;
    let broken_at = loop {
        let Some(header) = archive.get(at..at + BLOCK) else {
            break (at < archive.len()).then(|| format!("the archive is cut short at byte {at}"));
        };
        if header.iter().all(|b| *b == 0) {
            break None;
        }
        if !checksum_matches(header) {
            break Some(format!(
                "the header at byte {at} is damaged (its checksum does not match)"
            ));
        }
        let Some(size) = number(&header[124..136]) else {
            break Some(format!("the header at byte {at} states no size"));
        };
        let start = at + BLOCK;
        let Some(end) = usize::try_from(size)
            .ok()
            .and_then(|size| start.checked_add(size))
            .filter(|&end| end <= archive.len())
        else {
            break Some(format!("the file at byte {at} runs past the end of the archive"));
        };
        let data = archive.slice(start..end);
        match header[156] {
            b'L' => next_name = Some(text_of(field(&data, 0..data.len()))),
            b'x' => next_name = pax_path(&data).or(next_name),
            b'0' | 0 | b'7' => {
                let name = next_name.take().unwrap_or_else(|| {
                    let (prefix, name) = (field(header, 345..500), field(header, 0..100));
                    let ustar = &header[257..262] == b"ustar";
                    match ustar && !prefix.is_empty() {
                        true => format!("{}/{}", text_of(prefix), text_of(name)),
                        false => text_of(name),
                    }
                });
                files.push(TarFile { name, bytes: data });
            }
            // Folders, links, devices and global pax headers: no file of their own.
            _ => next_name = None,
        }
        // The data is padded to whole blocks.
        at = start + (end - start).div_ceil(BLOCK) * BLOCK;
    };
    TarListing { files, broken_at }
}

#[cfg(test)]
pub(super) mod fixtures {
    use super::BLOCK;

    /// One header block for `name` of `size` bytes, of type `kind`, its checksum set.
    pub fn header(name: &str, size: usize, kind: u8, prefix: &str) -> Vec<u8> {
        let mut block = vec![0u8; BLOCK];
        block[..name.len()].copy_from_slice(name.as_bytes());
        block[100..108].copy_from_slice(b"0000644\0");
        block[124..136].copy_from_slice(format!("{size:011o}\0").as_bytes());
        block[156] = kind;
        block[257..263].copy_from_slice(b"ustar\0");
        block[345..345 + prefix.len()].copy_from_slice(prefix.as_bytes());
        block[148..156].copy_from_slice(b"        ");
        let sum: u32 = block.iter().map(|b| u32::from(*b)).sum();
        block[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
        block
    }

    pub fn entry(name: &str, data: &[u8], kind: u8, prefix: &str) -> Vec<u8> {
        let mut out = header(name, data.len(), kind, prefix);
        out.extend_from_slice(data);
        out.resize(out.len().div_ceil(BLOCK) * BLOCK, 0);
        out
    }

    /// A tar archive of regular files, ended as tar ends them.
    pub fn tar_of(files: &[(&str, &[u8])]) -> Vec<u8> {
        let mut tar: Vec<u8> = files
            .iter()
            .flat_map(|(name, data)| entry(name, data, b'0', ""))
            .collect();
        tar.extend(vec![0u8; 2 * BLOCK]);
        tar
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::entry;
    use super::*;

    #[test]
    fn files_folders_long_names_and_damage() {
        let long = format!("{}/minutes.txt", "meetings".repeat(20));
        let mut tar = entry("docs/", b"", b'5', "");
        tar.extend(entry("notes.txt", b"Buoys are repainted yearly.", b'0', "docs"));
        tar.extend(entry("././@LongLink", long.as_bytes(), b'L', ""));
        tar.extend(entry("meetingsmeetings", b"Minutes.", b'0', ""));
        tar.extend(entry(
            "PaxHeaders/x",
            b"30 path=pax/\xe8\xaa\xad\xe3\x82\x80.txt\n",
            b'x',
            "",
        ));
        tar.extend(entry("x", b"Pax named.", b'0', ""));
        tar.extend(entry("link", b"", b'2', ""));
        let mut ended = tar.clone();
        ended.extend(vec![0u8; 2 * BLOCK]);
        let listing = list(&Bytes::from(ended));
        let files: Vec<(&str, &[u8])> = listing.files.iter().map(|f| (f.name.as_str(), &f.bytes[..])).collect();
        assert_eq!(
            files,
            [
                ("docs/notes.txt", &b"Buoys are repainted yearly."[..]),
                (long.as_str(), &b"Minutes."[..]),
                ("pax/読む.txt", &b"Pax named."[..]),
            ]
        );
        assert_eq!(listing.broken_at, None);
        // A damaged header ends the listing there; the files before it are kept.
        let mut damaged = tar.clone();
        damaged.extend(entry("later.txt", b"Later.", b'0', ""));
        let at = damaged.len() - 2 * BLOCK;
        damaged[at + 1] ^= 0x20;
        let listing = list(&Bytes::from(damaged));
        assert_eq!(listing.files.len(), 3);
        assert_eq!(
            listing.broken_at.unwrap(),
            format!("the header at byte {at} is damaged (its checksum does not match)")
        );
        // A size past the end of the archive.
        let mut cut = entry("big.txt", &[b'a'; 2000], b'0', "");
        cut.truncate(BLOCK + 100);
        let listing = list(&Bytes::from(cut));
        assert!(listing.files.is_empty());
        assert_eq!(
            listing.broken_at.unwrap(),
            "the file at byte 0 runs past the end of the archive"
        );
        assert_eq!(number(b"\x80\0\0\0\0\0\0\0\0\x02\0\0"), Some(2 << 16));
    }
}
