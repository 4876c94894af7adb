//! Mozilla's LZ4 files (`.jsonlz4`, `.mozlz4`, `.baklz4`): Firefox's bookmark backups
//! (`bookmarkbackups/bookmarks-2026-12-08_1204_….jsonlz4`), its saved tabs and windows
//! (`sessionstore.jsonlz4`, `sessionstore-backups/recovery.baklz4`) and its list of search
//! engines (`search.json.mozlz4`), each a JSON file compressed as one LZ4 block behind
//! Mozilla's own header: the magic `mozLz40\0`, the size the block inflates to (four bytes,
//! little-endian), then the block. A block inflates only whole, so the file is read whole:
//! its stated size is held to the limit a file may inflate to before anything is allocated,
//! and its stored bytes to the most a block of that size takes.

use std::io::{Cursor, Read};

/// The bytes a Mozilla LZ4 file starts with.
pub(super) const MAGIC: &[u8] = b"mozLz40\0";
/// The magic and the stated size.
const HEADER_BYTES: usize = 12;

/// The size a Mozilla LZ4 file's header states its block inflates to.
pub(super) fn stated_size(bytes: &[u8]) -> Option<u64> {
    let size = bytes
        .get(MAGIC.len()..HEADER_BYTES)
        .filter(|_| bytes.starts_with(MAGIC))?;
    Some(u32::from_le_bytes(size.try_into().expect("four bytes")) as u64)
}

/// What the Mozilla LZ4 file `input` inflates to, read whole; an error where its header
/// states more than `limit` bytes, where it holds more bytes than a block of the stated size
/// takes, where it is cut short or its block is damaged, or where the block inflates to
/// another size than the header states.
pub(super) fn inflate(mut input: impl Read, limit: u64) -> std::io::Result<Cursor<Vec<u8>>> {
    let invalid = |why: String| std::io::Error::new(std::io::ErrorKind::InvalidData, why);
    let mut header = [0u8; HEADER_BYTES];
    input
        .read_exact(&mut header)
        .map_err(|_| invalid("its header is cut short".into()))?;
    let size = stated_size(&header).ok_or_else(|| invalid("it has no Mozilla LZ4 header".into()))?;
    if size > limit {
        return Err(invalid(format!(
            "its header states {} MiB inflated, more than the {} MiB a file may inflate to",
            size >> 20,
            limit >> 20
        )));
    }
    // LZ4's worst case: a block of incompressible bytes takes 1/255 more, and a few bytes.
    let most = size + size / 255 + 16;
    let mut block = Vec::new();
    input.take(most + 1).read_to_end(&mut block)?;
    if block.len() as u64 > most {
        return Err(invalid(format!(
            "it holds more bytes than a block of {size} bytes takes"
        )));
    }
    let mut inflated = vec![0u8; size as usize];
    let written = lz4_flex::block::decompress_into(&block, &mut inflated)
        .map_err(|e| invalid(format!("its block is damaged ({e})")))?;
    if written as u64 != size {
        return Err(invalid(format!(
            "its block inflates to {written} bytes, its header states {size}"
        )));
    }
    Ok(Cursor::new(inflated))
}

/// `bytes` as Firefox writes them.
#[cfg(test)]
pub(super) fn fixture(bytes: &[u8]) -> Vec<u8> {
    let mut file = MAGIC.to_vec();
    file.extend((bytes.len() as u32).to_le_bytes());
    file.extend(lz4_flex::block::compress(bytes));
    file
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_behind_mozillas_header_inflates_whole() {
        let json =
            br#"{"title":"Bookmarks Menu","children":[{"title":"Tide tables","uri":"https://example.org/tides"}]}"#;
        let file = fixture(json);
        assert_eq!(stated_size(&file), Some(json.len() as u64));
        assert_eq!(inflate(&file[..], 1 << 30).unwrap().into_inner(), json);
        // A stated size past the limit, before anything is read or allocated.
        let mut huge = MAGIC.to_vec();
        huge.extend(u32::MAX.to_le_bytes());
        let error = inflate(&huge[..], 1 << 30).unwrap_err().to_string();
        assert!(error.contains("states 4095 MiB"), "{error}");
        // Cut short: in its header, in its block.
        assert!(inflate(&file[..10], 1 << 30)
            .unwrap_err()
            .to_string()
            .contains("header is cut short"));
        assert!(inflate(&file[..file.len() - 4], 1 << 30)
            .unwrap_err()
            .to_string()
            .contains("damaged"));
        // A header that states less than the block holds, or more.
        let mut less = file.clone();
        less[8..12].copy_from_slice(&10u32.to_le_bytes());
        assert!(inflate(&less[..], 1 << 30).is_err());
        let mut more = file.clone();
        more[8..12].copy_from_slice(&(json.len() as u32 + 5).to_le_bytes());
        let error = inflate(&more[..], 1 << 30).unwrap_err().to_string();
        assert!(error.contains("inflates to"), "{error}");
        // Bytes past the most a block of the stated size takes.
        let mut padded = file.clone();
        padded.extend(vec![0u8; json.len() + 64]);
        let error = inflate(&padded[..], 1 << 30).unwrap_err().to_string();
        assert!(error.contains("more bytes than a block"), "{error}");
        assert_eq!(stated_size(b"mozLz40\0\x01"), None);
        assert_eq!(stated_size(b"not mozilla's"), None);
    }
}
