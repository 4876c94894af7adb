//! An LZ4 file's frames read one after another (`cat a.lz4 b.lz4`, which `lz4 -d` reads
//! whole), skippable frames passed over, and a file cut short told from one that ends.
//!
//! lz4_flex's decoder reads as ended at each frame's end, and on from the next frame's header
//! when read again. It also reads as ended where its input stops at (or inside) a block's
//! header before the frame's end mark: a file cut there would be indexed short without a
//! word. So the input passes through a [`FrameWalker`], which follows the frames' layout
//! (headers, block sizes, checksums, end marks) as the bytes go by and says whether the input
//! stopped between frames; where it did not, the read fails as `lz4 -d` does ("the file is
//! cut short").

use std::io::Read;

/// The magic of an LZ4 frame, of a legacy frame (`lz4 -l`), and the high 28 bits of a
/// skippable frame's (`0x184D2A50`-`0x184D2A5F`), as the little-endian numbers they are.
const FRAME_MAGIC: u32 = 0x184D_2204;
const LEGACY_MAGIC: u32 = 0x184C_2102;
const SKIPPABLE_MAGIC: u32 = 0x184D_2A50;

/// The reader of an LZ4 file's inflated bytes.
pub(super) fn lz4_reader<R: Read>(input: R) -> Lz4Frames<R> {
    Lz4Frames(lz4_flex::frame::FrameDecoder::new(FrameWalker::new(input)))
}

pub(super) struct Lz4Frames<R: Read>(lz4_flex::frame::FrameDecoder<FrameWalker<R>>);

impl<R: Read> Read for Lz4Frames<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            let before = self.0.get_ref().read;
            let n = match self.0.read(buf) {
                Ok(n) => n,
                // A skippable frame (a writer's own data, which `lz4 -d` passes over): its
                // magic and size were read, its data is skipped, the next frame read on.
                Err(e) => match skippable_frame_size(&e) {
                    Some(size) => {
                        let skipped = std::io::copy(&mut self.0.get_mut().by_ref().take(size), &mut std::io::sink())?;
                        if skipped < size {
                            return Err(std::io::Error::new(
                                std::io::ErrorKind::UnexpectedEof,
                                "a skippable frame ends before its stated size",
                            ));
                        }
                        continue;
                    }
                    None => return Err(e),
                },
            };
            if n > 0 || buf.is_empty() {
                return Ok(n);
            }
            if self.0.get_ref().read == before {
                // The input is at its end: between frames, or cut inside one.
                return match self.0.get_ref().between_frames() {
                    true => Ok(0),
                    false => Err(std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        "an LZ4 frame ends before its end mark: the file is cut short",
                    )),
                };
            }
        }
    }
}

/// The data size of the skippable frame lz4_flex's decoder stopped at, if that is its error.
fn skippable_frame_size(e: &std::io::Error) -> Option<u64> {
    match e.get_ref()?.downcast_ref::<lz4_flex::frame::Error>()? {
        lz4_flex::frame::Error::SkippableFrame(size) => Some(u64::from(*size)),
        _ => None,
    }
}

/// Where in the frames' layout the bytes read so far end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// A frame's magic number (`have` of its 4 bytes read).
    Magic { have: usize, value: u32 },
    /// A frame's flag byte, after its magic.
    Flags,
    /// A block's size (or the end mark), `have` of its 4 bytes read.
    BlockSize { have: usize, value: u32, flags: u8 },
    /// `left` bytes of a block (and its checksum), or of the rest of a frame's header, then
    /// the next block's size.
    Block { left: u64, flags: u8 },
    /// `left` bytes after a frame's end mark (its content checksum), or of a skippable
    /// frame's data, then the next frame's magic.
    Trailer { left: u64 },
    /// A skippable frame's size, `have` of its 4 bytes read.
    SkippableSize { have: usize, value: u32 },
    /// A legacy frame's block size (`have` of its 4 bytes): a frame of them ends with the input.
    LegacySize { have: usize, value: u32 },
    /// `left` bytes of a legacy block.
    LegacyBlock { left: u64 },
    /// Bytes that are no frame: the decoder refuses them itself.
    Unknown,
}

const BLOCK_CHECKSUMS: u8 = 0x10;
const CONTENT_SIZE: u8 = 0x08;
const CONTENT_CHECKSUM: u8 = 0x04;
const DICTIONARY_ID: u8 = 0x01;

/// A reader that counts the bytes read from it and follows the LZ4 frames they lay out.
pub(super) struct FrameWalker<R> {
    inner: R,
    read: u64,
    place: Place,
}

impl<R> FrameWalker<R> {
    fn new(inner: R) -> Self {
        Self {
            inner,
            read: 0,
            place: Place::Magic { have: 0, value: 0 },
        }
    }

    /// Whether the bytes read so far end between frames (or in a legacy frame, which ends
    /// with its input, between blocks), or are no frames at all.
    fn between_frames(&self) -> bool {
        matches!(
            self.place,
            Place::Magic { have: 0, .. } | Place::LegacySize { have: 0, .. } | Place::Unknown
        )
    }

    /// Follows `bytes`, read one after another.
    fn follow(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let (place, used) = next_place(self.place, bytes);
            self.place = place;
            bytes = &bytes[used..];
        }
    }
}

/// The place after reading from `bytes` at `place`, and how many of them that took (at least one).
fn next_place(place: Place, bytes: &[u8]) -> (Place, usize) {
    let skip = |left: u64| (left.min(bytes.len() as u64)) as usize;
    match place {
        Place::Magic { have, value } => {
            let value = value | u32::from(bytes[0]) << (8 * have);
            if have < 3 {
                return (Place::Magic { have: have + 1, value }, 1);
            }
            let next = match value {
                FRAME_MAGIC => Place::Flags,
                LEGACY_MAGIC => Place::LegacySize { have: 0, value: 0 },
                _ if value & 0xFFFF_FFF0 == SKIPPABLE_MAGIC => Place::SkippableSize { have: 0, value: 0 },
                _ => Place::Unknown,
            };
            (next, 1)
        }
        Place::Flags => {
            let flags = bytes[0];
            // The block descriptor and the header checksum, and what the flags add.
            let mut left = 2;
            if flags & CONTENT_SIZE != 0 {
                left += 8;
            }
            if flags & DICTIONARY_ID != 0 {
                left += 4;
            }
            (Place::Block { left, flags }, 1)
        }
        Place::BlockSize { have, value, flags } => {
            let value = value | u32::from(bytes[0]) << (8 * have);
            if have < 3 {
                return (
                    Place::BlockSize {
                        have: have + 1,
                        value,
                        flags,
                    },
                    1,
                );
            }
            let next = match value {
                0 => trailer(if flags & CONTENT_CHECKSUM != 0 { 4 } else { 0 }),
                size => Place::Block {
                    left: u64::from(size & 0x7FFF_FFFF) + if flags & BLOCK_CHECKSUMS != 0 { 4 } else { 0 },
                    flags,
                },
            };
            (next, 1)
        }
        Place::Block { left, flags } => {
            let used = skip(left);
            match left - used as u64 {
                0 => (
                    Place::BlockSize {
                        have: 0,
                        value: 0,
                        flags,
                    },
                    used,
                ),
                left => (Place::Block { left, flags }, used),
            }
        }
        Place::Trailer { left } => {
            let used = skip(left);
            (trailer(left - used as u64), used)
        }
        Place::SkippableSize { have, value } => {
            let value = value | u32::from(bytes[0]) << (8 * have);
            match have < 3 {
                true => (Place::SkippableSize { have: have + 1, value }, 1),
                false => (trailer(u64::from(value)), 1),
            }
        }
        Place::LegacySize { have, value } => {
            let value = value | u32::from(bytes[0]) << (8 * have);
            match have < 3 {
                true => (Place::LegacySize { have: have + 1, value }, 1),
                false => (legacy_block(u64::from(value)), 1),
            }
        }
        Place::LegacyBlock { left } => {
            let used = skip(left);
            (legacy_block(left - used as u64), used)
        }
        Place::Unknown => (Place::Unknown, bytes.len()),
    }
}

/// `left` bytes to pass over before the next frame's magic (none: at the magic).
fn trailer(left: u64) -> Place {
    match left {
        0 => Place::Magic { have: 0, value: 0 },
        left => Place::Trailer { left },
    }
}

/// `left` bytes of a legacy block before the next block's size (none: at the size).
fn legacy_block(left: u64) -> Place {
    match left {
        0 => Place::LegacySize { have: 0, value: 0 },
        left => Place::LegacyBlock { left },
    }
}

impl<R: Read> Read for FrameWalker<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        self.follow(&buf[..n]);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `text` in one LZ4 frame of independent 64 KB blocks, with block and content checksums
    /// where asked.
    fn frame(text: &[u8], checksums: bool) -> Vec<u8> {
        let info = lz4_flex::frame::FrameInfo::new()
            .block_size(lz4_flex::frame::BlockSize::Max64KB)
            .block_mode(lz4_flex::frame::BlockMode::Independent)
            .block_checksums(checksums)
            .content_checksum(checksums);
        let mut encoder = lz4_flex::frame::FrameEncoder::with_frame_info(info, Vec::new());
        std::io::Write::write_all(&mut encoder, text).unwrap();
        encoder.finish().unwrap()
    }

    /// Where each block of a frame of 7 header bytes starts (its size's first byte), the end
    /// mark's last.
    fn block_starts(frame: &[u8], checksums: bool) -> Vec<usize> {
        let (mut at, mut starts) = (7, Vec::new());
        loop {
            starts.push(at);
            let size = u32::from_le_bytes(frame[at..at + 4].try_into().unwrap());
            if size == 0 {
                return starts;
            }
            at += 4 + (size & 0x7FFF_FFFF) as usize + if checksums { 4 } else { 0 };
        }
    }

    fn read_all(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
        let mut out = Vec::new();
        lz4_reader(bytes).read_to_end(&mut out)?;
        Ok(out)
    }

    #[test]
    fn a_file_cut_between_blocks_fails_and_one_that_ends_between_frames_reads_whole() {
        // Text that does not repeat within a block, so that it takes several.
        let text: Vec<u8> = (0..60_000u32)
            .flat_map(|i| format!("{} ", i.wrapping_mul(2_654_435_761)).into_bytes())
            .collect();
        for checksums in [false, true] {
            let whole = frame(&text, checksums);
            let starts = block_starts(&whole, checksums);
            assert!(starts.len() >= 4, "several blocks and the end mark: {starts:?}");
            assert_eq!(read_all(&whole).unwrap(), text);
            // Two frames, and a skippable frame between them, read on.
            let skippable = [&0x184D_2A5Au32.to_le_bytes()[..], &3u32.to_le_bytes(), b"own"].concat();
            let two = [whole.clone(), skippable, whole.clone()].concat();
            assert_eq!(read_all(&two).unwrap(), [text.clone(), text.clone()].concat());
            // Cut before a block, inside a block's size, before the end mark, inside the
            // content checksum, inside the header: never read as a whole file.
            let mut cuts = vec![
                4,
                6,
                starts[0],
                starts[1],
                starts[1] + 2,
                starts[2],
                *starts.last().unwrap(),
            ];
            if checksums {
                cuts.push(whole.len() - 2);
            }
            for cut in cuts {
                let error = read_all(&whole[..cut]).expect_err(&format!("cut at {cut} of {}", whole.len()));
                assert_eq!(error.kind(), std::io::ErrorKind::UnexpectedEof, "cut at {cut}: {error}");
            }
            // The second of two frames cut short: the first's text is not all there is.
            let error = read_all(&[whole.clone(), whole[..starts[2]].to_vec()].concat()).unwrap_err();
            assert!(error.to_string().contains("cut short"), "{error}");
        }
    }

    #[test]
    fn a_legacy_frame_ends_with_its_input() {
        let block = lz4_flex::block::compress(b"Legacy frames hold the tide tables.");
        let legacy = [
            &0x184C_2102u32.to_le_bytes()[..],
            &(block.len() as u32).to_le_bytes(),
            &block,
        ]
        .concat();
        assert_eq!(read_all(&legacy).unwrap(), b"Legacy frames hold the tide tables.");
        // Bytes that are no frame are the decoder's to refuse.
        assert!(read_all(b"not an lz4 frame at all").is_err());
    }
}
