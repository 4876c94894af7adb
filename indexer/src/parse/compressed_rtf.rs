//! Outlook's compressed RTF (MS-OXRTFCP), the form of a message's `PidTagRtfCompressed` body:
//! a 16-byte header (compressed size, raw size, `LZFu` or `MELA`, a CRC), then LZ77 runs of
//! literal bytes and references into a 4,096-byte ring that starts out holding the common
//! RTF prefix below. Output stops at the header's raw size and each reference yields at most
//! 17 bytes from 2, so a stream cannot inflate past 9 times its own length.

/// The ring's first bytes (MS-OXRTFCP 2.1.2.1).
const PREFIX: &[u8] = b"{\\rtf1\\ansi\\mac\\deff0\\deftab720{\\fonttbl;}{\\f0\\fnil \\froman \\fswiss \\fmodern \\fscript \\fdecor MS Sans SerifSymbolArialTimes New RomanCourier{\\colortbl\\red0\\green0\\blue0\r\n\\par \\pard\\plain\\f0\\fs20\\b\\i\\u\\tab\\tx";
const RING: usize = 4096;
const COMPRESSED: &[u8] = b"LZFu";
const UNCOMPRESSED: &[u8] = b"MELA";

/// The RTF a compressed-RTF stream holds.
pub(super) fn decompress(stream: &[u8]) -> Result<Vec<u8>, String> {
    let (Some(raw_size), Some(kind)) = (stream.get(4..8), stream.get(8..12)) else {
        return Err("compressed RTF: shorter than its 16-byte header".into());
    };
    let raw_size = u32::from_le_bytes(raw_size.try_into().expect("4 bytes")) as usize;
    let body = stream.get(16..).unwrap_or_default();
    match kind {
        UNCOMPRESSED => Ok(body[..raw_size.min(body.len())].to_vec()),
        COMPRESSED => Ok(inflate(body, raw_size)),
        other => Err(format!(
            "compressed RTF: unknown compression {:?}",
            String::from_utf8_lossy(other)
        )),
    }
}

/// LZFu's runs: a control byte whose bits (lowest first) say whether each of the next eight
/// items is a literal byte or a 2-byte reference (12 bits of ring offset, 4 of length - 2);
/// a reference to where the ring is being written ends the stream.
fn inflate(body: &[u8], raw_size: usize) -> Vec<u8> {
    let mut ring = [0u8; RING];
    ring[..PREFIX.len()].copy_from_slice(PREFIX);
    let mut write = PREFIX.len();
    let limit = raw_size.min(body.len().saturating_mul(9));
    let mut out = Vec::with_capacity(limit);
    let mut at = 0;
    while at < body.len() && out.len() < limit {
        let control = body[at];
        at += 1;
        for bit in 0..8 {
            if at >= body.len() || out.len() >= limit {
                break;
            }
            if control & (1 << bit) == 0 {
                out.push(body[at]);
                ring[write] = body[at];
                write = (write + 1) % RING;
                at += 1;
                continue;
            }
            let Some(pair) = body.get(at..at + 2) else {
                return out;
            };
            at += 2;
            let reference = u16::from_be_bytes([pair[0], pair[1]]) as usize;
            let (mut from, length) = (reference >> 4, (reference & 0xF) + 2);
            if from == write {
                return out;
            }
            for _ in 0..length {
                let byte = ring[from];
                out.push(byte);
                ring[write] = byte;
                write = (write + 1) % RING;
                from = (from + 1) % RING;
            }
        }
    }
    out.truncate(limit);
    out
}

#[cfg(test)]
mod tests {
    use super::decompress;

    /// MS-OXRTFCP 3.1.1's and 3.1.2's examples (checked against the `compressed_rtf` Python
    /// package): literals and references, then a reference that runs over the bytes it writes.
    #[test]
    fn the_specifications_examples() {
        let simple = [
            0x2d, 0x00, 0x00, 0x00, 0x2b, 0x00, 0x00, 0x00, 0x4c, 0x5a, 0x46, 0x75, 0xf1, 0xc5, 0xc7, 0xa7, 0x03, 0x00,
            0x0a, 0x00, 0x72, 0x63, 0x70, 0x67, 0x31, 0x32, 0x35, 0x42, 0x32, 0x0a, 0xf3, 0x20, 0x68, 0x65, 0x6c, 0x09,
            0x00, 0x20, 0x62, 0x77, 0x05, 0xb0, 0x6c, 0x64, 0x7d, 0x0a, 0x80, 0x0f, 0xa0,
        ];
        assert_eq!(
            String::from_utf8(decompress(&simple).unwrap()).unwrap(),
            "{\\rtf1\\ansi\\ansicpg1252\\pard hello world}\r\n"
        );
        let crossing = [
            0x1a, 0x00, 0x00, 0x00, 0x1c, 0x00, 0x00, 0x00, 0x4c, 0x5a, 0x46, 0x75, 0xe2, 0xd4, 0x4b, 0x51, 0x41, 0x00,
            0x04, 0x20, 0x57, 0x58, 0x59, 0x5a, 0x0d, 0x6e, 0x7d, 0x01, 0x0e, 0xb0,
        ];
        assert_eq!(
            String::from_utf8(decompress(&crossing).unwrap()).unwrap(),
            "{\\rtf1 WXYZWXYZWXYZWXYZWXYZ}"
        );
    }

    #[test]
    fn stored_short_unknown_and_cut_streams() {
        let mut stored = vec![0u8; 16];
        stored[4] = 5;
        stored[8..12].copy_from_slice(b"MELA");
        stored.extend_from_slice(b"{\\rtf1 x}");
        assert_eq!(decompress(&stored).unwrap(), b"{\\rtf");
        assert!(decompress(b"LZFu").unwrap_err().contains("header"));
        let mut other = stored.clone();
        other[8..12].copy_from_slice(b"ABCD");
        assert!(decompress(&other).unwrap_err().contains("unknown compression \"ABCD\""));
        // Output stops at the header's raw size, whatever the runs would go on to write:
        // here 40 references to the ring's first 17 bytes, cut at 100.
        let mut runs = vec![0u8; 16];
        runs[4] = 100;
        runs[8..12].copy_from_slice(b"LZFu");
        for _ in 0..5 {
            runs.push(0xFF);
            runs.extend([0x00, 0x0F].repeat(8));
        }
        let out = decompress(&runs).unwrap();
        assert_eq!(out.len(), 100);
        assert_eq!(out, "{\\rtf1\\ansi\\mac\\d".repeat(6).as_bytes()[..100]);
    }
}
