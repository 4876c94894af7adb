//! The size an XZ file states it inflates to: each stream ends with an index of its blocks'
//! sizes, compressed and not, found from the stream's footer (its last 12 bytes). Streams are
//! walked from the file's end, the zero padding between them skipped; the sizes are a hint
//! (room to reserve, a parse group's share), so nothing is trusted beyond its bounds: a field
//! that does not fit, a magic that is not there, or a sum past 64 bits gives none.

/// The uncompressed sizes the indexes of `bytes`' streams state, summed; None where the file
/// is not laid out as XZ streams end to end.
pub(super) fn stated_size(bytes: &[u8]) -> Option<u64> {
    let mut end = bytes.len();
    let mut total: u64 = 0;
    let mut streams = 0;
    loop {
        // Stream padding: zero bytes, in fours.
        while end >= 4 && bytes[end - 4..end] == [0; 4] {
            end -= 4;
        }
        if end == 0 {
            break;
        }
        let footer = bytes.get(end.checked_sub(12)?..end)?;
        if &footer[10..12] != b"YZ" {
            return None;
        }
        // The index's size, in fours less one.
        let backward = (u32::from_le_bytes(footer[4..8].try_into().ok()?) as usize + 1) * 4;
        let index_end = end - 12;
        let index = bytes.get(index_end.checked_sub(backward)?..index_end)?;
        let (blocks, size) = index_sizes(index)?;
        let start = (index_end - backward)
            .checked_sub(usize::try_from(blocks).ok()?)?
            .checked_sub(12)?;
        if !bytes[start..].starts_with(b"\xFD7zXZ\x00") {
            return None;
        }
        total = total.checked_add(size)?;
        streams += 1;
        end = start;
    }
    (streams > 0).then_some(total)
}

/// An index's blocks' bytes in the stream (each unpadded size rounded up to four) and their
/// uncompressed sizes, summed.
fn index_sizes(index: &[u8]) -> Option<(u64, u64)> {
    if index.first() != Some(&0) {
        return None;
    }
    let mut at = 1;
    let records = varint(index, &mut at)?;
    let (mut blocks, mut size) = (0u64, 0u64);
    // Each record takes two bytes at least: a count past the index ends at its end.
    for _ in 0..records {
        let unpadded = varint(index, &mut at)?;
        let uncompressed = varint(index, &mut at)?;
        blocks = blocks.checked_add(unpadded.checked_add(3)? & !3)?;
        size = size.checked_add(uncompressed)?;
    }
    Some((blocks, size))
}

/// XZ's variable-length integer at `at` (seven bits a byte, least significant first, at most
/// nine bytes), `at` moved past it.
fn varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..63).step_by(7) {
        let byte = *bytes.get(*at)?;
        *at += 1;
        value |= u64::from(byte & 0x7F) << shift;
        if byte & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::compressed::fixtures::xz;

    #[test]
    fn the_sizes_its_streams_state() {
        let text: Vec<u8> = (0..200_000u32)
            .flat_map(|i| format!("line {i}\n").into_bytes())
            .collect();
        let one = xz(&text);
        assert_eq!(stated_size(&one), Some(text.len() as u64));
        // Two streams with padding between and after them.
        let mut two = one.clone();
        two.extend_from_slice(&[0; 8]);
        two.extend_from_slice(&xz(b"short"));
        two.extend_from_slice(&[0; 4]);
        assert_eq!(stated_size(&two), Some(text.len() as u64 + 5));
        assert_eq!(stated_size(&xz(b"")), Some(0));
        // Cut, padded wrongly, or a footer that points past the start: none.
        assert_eq!(stated_size(&one[..one.len() - 1]), None);
        assert_eq!(stated_size(&one[1..]), None);
        let mut odd = one.clone();
        odd.extend_from_slice(&[0; 3]);
        assert_eq!(stated_size(&odd), None);
        let mut far = one.clone();
        let at = far.len() - 8;
        far[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(stated_size(&far), None);
        assert_eq!(stated_size(b""), None);
        assert_eq!(stated_size(&[0; 16]), None);
        // A count of records past the index's end.
        assert_eq!(index_sizes(&[0, 0xFF, 0xFF, 0x7F, 1, 1]), None);
        assert_eq!(varint(&[0xFF; 12], &mut 0), None);
    }
}
