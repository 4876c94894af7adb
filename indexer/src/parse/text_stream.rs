//! A text stream's bytes as UTF-8, decoded as they are read, as a text file read whole is
//! decoded ([`super::text::decode_text_declared`]): UTF-16 (with a byte order mark, or told by
//! its zero bytes) and a legacy encoding (a Latin-1 CSV exported by Excel, a Shift_JIS JSONL
//! corpus) read in their encoding rather than as U+FFFD; UTF-8 passed on as it is (its bad
//! bytes left to the reader: a JSONL line that is not UTF-8 fails alone). Which encoding is
//! decided where the first byte past ASCII is met, on the [`WINDOW_BYTES`] from there
//! ([`super::legacy_encoding::stream_encoding`]): a file's first megabytes are often ASCII
//! (a header row, English records) and its other bytes still in one encoding.

use std::io::{BufReader, Read};

use encoding_rs::{CoderResult, Decoder, Encoding, UTF_16BE, UTF_16LE};

use super::legacy_encoding::{stream_encoding, GUESS_SAMPLE_BYTES};
use super::text::utf16_without_bom;
use super::ParseError;

/// The bytes from the first byte past ASCII the encoding is decided on: as many as a file
/// read whole has its encoding guessed on.
pub const WINDOW_BYTES: usize = GUESS_SAMPLE_BYTES;

/// Bytes read from the source at a time.
const READ_BYTES: usize = 64 << 10;

/// Bytes at the start looked at for NUL bytes (a binary file), as a text file read whole is.
const BINARY_SAMPLE_BYTES: usize = 8192;

/// How the stream's bytes are passed on.
enum State {
    /// ASCII so far: passed on as they are.
    Undecided,
    /// UTF-8: passed on as they are.
    Utf8,
    /// In another encoding: decoded to UTF-8.
    Decoding(Decoder),
}

/// A stream of text read as UTF-8 (see the module's comment).
pub struct DecodedText {
    inner: Box<dyn Read + Send>,
    /// The encoding the file's source declared (a `Content-Type`'s `charset`): the stream's,
    /// where it is not UTF-8.
    declared: Option<&'static Encoding>,
    state: State,
    /// Bytes read from `inner` not yet passed on, from `raw_at`.
    raw: Vec<u8>,
    raw_at: usize,
    /// Text ready to be read, from `out_at`.
    out: Vec<u8>,
    out_at: usize,
    /// Whether `inner` has ended, and the decoder was told so.
    ended: bool,
    flushed: bool,
}

impl DecodedText {
    /// `bytes` (inflated already) as UTF-8, read in `declared` where they are not UTF-8 and
    /// it is given. Fails where the first bytes show a binary file.
    pub fn open(
        bytes: Box<dyn Read + Send>,
        declared: Option<&'static Encoding>,
    ) -> Result<BufReader<Self>, ParseError> {
        let mut text = Self {
            inner: bytes,
            declared,
            state: State::Undecided,
            raw: Vec::new(),
            raw_at: 0,
            out: Vec::new(),
            out_at: 0,
            ended: false,
            flushed: false,
        };
        let unreadable = |e: std::io::Error| ParseError::Corrupt(format!("its first bytes could not be read ({e})"));
        text.read_raw_until(BINARY_SAMPLE_BYTES).map_err(unreadable)?;
        match Encoding::for_bom(&text.raw) {
            Some((encoding, bom)) if encoding == UTF_16LE || encoding == UTF_16BE => {
                text.raw_at = bom;
                text.state = State::Decoding(encoding.new_decoder_without_bom_handling());
            }
            utf8_bom => {
                // A UTF-8 byte order mark is left out; the bytes after it are looked at as
                // a file without one, as a text file read whole is.
                text.raw_at = utf8_bom.map_or(0, |(_, bom)| bom);
                let head = &text.raw[text.raw_at..];
                if let Some(encoding) = utf16_without_bom(head) {
                    text.state = State::Decoding(encoding.new_decoder_without_bom_handling());
                } else if let Some(at) = head.iter().take(BINARY_SAMPLE_BYTES).position(|b| *b == 0) {
                    return Err(ParseError::Binary(format!("NUL byte at offset {at}")));
                }
            }
        }
        // Where the first bytes already hold one past ASCII, a file of no text fails here,
        // whole, as read whole it would.
        text.decide_if_due().map_err(|e| match e.into_inner() {
            Some(inner) => match inner.downcast::<ParseError>() {
                Ok(error) => *error,
                Err(other) => ParseError::Corrupt(format!("its first bytes could not be read ({other})")),
            },
            None => ParseError::Corrupt("its first bytes could not be read".into()),
        })?;
        Ok(BufReader::with_capacity(1 << 20, text))
    }

    /// Reads from `inner` until `raw` holds `wanted` bytes from `raw_at`, or it ended.
    fn read_raw_until(&mut self, wanted: usize) -> std::io::Result<()> {
        if self.raw_at > 0 && self.raw.len() - self.raw_at < wanted {
            self.raw.drain(..self.raw_at);
            self.raw_at = 0;
        }
        while !self.ended && self.raw.len() - self.raw_at < wanted {
            let start = self.raw.len();
            self.raw.resize(
                start + READ_BYTES.max(wanted - (start - self.raw_at)).min(WINDOW_BYTES),
                0,
            );
            let read = self.inner.read(&mut self.raw[start..]);
            self.raw.truncate(start + *read.as_ref().unwrap_or(&0));
            match read {
                Ok(n) => self.ended = n == 0,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Where the stream is still undecided and its unread bytes hold one past ASCII (or the
    /// `ESC $` ISO-2022-JP switches to a Japanese character set by; not a terminal's colour
    /// codes, `ESC [`), decides its encoding on the window from there.
    fn decide_if_due(&mut self) -> std::io::Result<()> {
        if !matches!(self.state, State::Undecided) {
            return Ok(());
        }
        let unread = &self.raw[self.raw_at..];
        let switches = |at: usize| unread[at] == 0x1B && unread.get(at + 1) == Some(&b'$');
        let Some(at) = (0..unread.len()).position(|at| unread[at] >= 0x80 || switches(at)) else {
            return Ok(());
        };
        let ascii_end = self.raw_at + at;
        // The ASCII before it is passed on first; the window read from the byte on.
        self.out.extend_from_slice(&self.raw[self.raw_at..ascii_end]);
        self.raw_at = ascii_end;
        self.read_raw_until(WINDOW_BYTES)?;
        let window = &self.raw[self.raw_at..];
        self.state = match stream_encoding(window, self.ended, self.declared).map_err(std::io::Error::other)? {
            None => State::Utf8,
            Some(encoding) => State::Decoding(encoding.new_decoder_without_bom_handling()),
        };
        Ok(())
    }

    /// Makes text ready in `out`; false at the end of the stream.
    fn fill(&mut self) -> std::io::Result<bool> {
        self.out.clear();
        self.out_at = 0;
        while self.out.is_empty() {
            if self.raw_at == self.raw.len() {
                self.raw.clear();
                self.raw_at = 0;
                self.read_raw_until(1)?;
            }
            self.decide_if_due()?;
            if !self.out.is_empty() {
                break;
            }
            let unread = &self.raw[self.raw_at..];
            match &mut self.state {
                State::Undecided | State::Utf8 => {
                    if unread.is_empty() {
                        return Ok(false);
                    }
                    if self.raw_at == 0 {
                        // All of it: handed over rather than copied.
                        std::mem::swap(&mut self.out, &mut self.raw);
                    } else {
                        self.out.extend_from_slice(unread);
                    }
                    self.raw_at = self.raw.len();
                }
                State::Decoding(decoder) => {
                    if unread.is_empty() && self.flushed {
                        return Ok(false);
                    }
                    let last = self.ended;
                    let room = decoder
                        .max_utf8_buffer_length(unread.len())
                        .unwrap_or(unread.len() * 3 + 16);
                    self.out.resize(room, 0);
                    let (result, read, written, _) = decoder.decode_to_utf8(unread, &mut self.out, last);
                    debug_assert!(matches!(result, CoderResult::InputEmpty));
                    self.out.truncate(written);
                    self.raw_at += read;
                    self.flushed = last;
                }
            }
        }
        Ok(true)
    }
}

impl Read for DecodedText {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.out_at == self.out.len() && !self.fill()? {
            return Ok(0);
        }
        let n = buf.len().min(self.out.len() - self.out_at);
        buf[..n].copy_from_slice(&self.out[self.out_at..self.out_at + n]);
        self.out_at += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use encoding_rs::{SHIFT_JIS, WINDOWS_1252};

    /// A source that yields at most `step` bytes a read, so characters fall across reads.
    struct Trickle {
        bytes: Vec<u8>,
        at: usize,
        step: usize,
    }

    impl Read for Trickle {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = buf.len().min(self.step).min(self.bytes.len() - self.at);
            buf[..n].copy_from_slice(&self.bytes[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }

    fn read_all(bytes: Vec<u8>, step: usize, declared: Option<&'static Encoding>) -> Result<Vec<u8>, String> {
        let source = Box::new(Trickle { bytes, at: 0, step });
        let mut text = DecodedText::open(source, declared).map_err(|e| format!("open: {e}"))?;
        let mut out = Vec::new();
        text.read_to_end(&mut out).map_err(|e| format!("read: {e}"))?;
        Ok(out)
    }

    fn encoded(encoding: &'static Encoding, text: &str) -> Vec<u8> {
        encoding.encode(text).0.into_owned()
    }

    #[test]
    fn a_legacy_encoding_past_megabytes_of_ascii_is_decoded() {
        let ascii = "id,name\n".to_string() + &"1,plain ascii row\n".repeat(150_000);
        let text = ascii.clone() + "2,café crème brûlée\n3,Müller & Søn\n";
        for step in [1, 7, READ_BYTES, 3 << 20] {
            let bytes = encoded(WINDOWS_1252, &text);
            let step = if step == 1 { usize::MAX } else { step };
            assert_eq!(
                String::from_utf8(read_all(bytes, step, None).unwrap()).unwrap(),
                text,
                "step {step}"
            );
        }
        // Characters of two bytes cut across reads of one byte.
        let japanese = "番号,名前\n1,山田太郎\n2,東京都千代田区\n".repeat(200);
        let out = read_all(encoded(SHIFT_JIS, &japanese), 1, None).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), japanese);
    }

    #[test]
    fn utf8_is_passed_on_as_it_is_bad_bytes_too() {
        let utf8 = "naïve,日本語\n".repeat(10_000).into_bytes();
        let bytes = [utf8.as_slice(), b"one stray \xe9 byte\n"].concat();
        assert!(read_all(bytes.clone(), 5, None).unwrap() == bytes);
        // A byte order mark is left out.
        let with_bom = [b"\xEF\xBB\xBF".as_slice(), &bytes].concat();
        assert!(read_all(with_bom, 4096, None).unwrap() == bytes);
        // A declared encoding does not overrule bytes that read as UTF-8.
        assert!(read_all(utf8.clone(), 4096, Some(WINDOWS_1252)).unwrap() == utf8);
    }

    #[test]
    fn utf16_with_or_without_a_byte_order_mark_and_iso_2022_jp_are_decoded() {
        let text = "a,b\nΑθήνα,Zürich\n".repeat(1000);
        let utf16le: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
        let utf16be: Vec<u8> = text.encode_utf16().flat_map(u16::to_be_bytes).collect();
        let with_bom = [b"\xFF\xFE".as_slice(), &utf16le].concat();
        for bytes in [with_bom, utf16le, [b"\xFE\xFF".as_slice(), &utf16be].concat()] {
            assert_eq!(String::from_utf8(read_all(bytes, 3, None).unwrap()).unwrap(), text);
        }
        // A terminal's colour codes (more than the window of them) before a legacy
        // encoding's letters decide nothing.
        let colours = b"\x1b[31mred\x1b[0m,".repeat(100_000);
        let coloured = [colours, WINDOWS_1252.encode("Größe\n").0.into_owned()].concat();
        let out = String::from_utf8(read_all(coloured, 7, None).unwrap()).unwrap();
        assert!(out.ends_with(",Größe\n"), "{}", &out[out.len() - 20..]);
        let jis = b"subject: \x1b$BF|K\\8l\x1b(B text\n".to_vec();
        assert_eq!(
            String::from_utf8(read_all(jis, 2, None).unwrap()).unwrap(),
            "subject: 日本語 text\n"
        );
    }

    #[test]
    fn a_declared_encoding_is_used_where_the_bytes_are_not_utf8() {
        // Windows-1251 read as Windows-1252 would be mojibake; declared, it is Cyrillic.
        let text = "город,Москва\n".repeat(50);
        let bytes = encoded(encoding_rs::WINDOWS_1251, &text);
        let out = read_all(bytes, 4096, Some(encoding_rs::WINDOWS_1251)).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), text);
    }

    #[test]
    fn binary_bytes_fail_at_the_start_whole_and_partway_as_a_read_error() {
        let nul = read_all(b"PK\x03\x04\x00\x00binary".to_vec(), 4096, None).unwrap_err();
        assert!(
            nul.starts_with("open: ") && nul.contains("NUL byte at offset 4"),
            "{nul}"
        );
        // Behind a UTF-8 byte order mark too.
        let marked = read_all(b"\xEF\xBB\xBFid\x00\x01\x02".to_vec(), 4096, None).unwrap_err();
        assert!(marked.contains("NUL byte at offset 2"), "{marked}");
        // Bytes of every value but NUL, as compressed or encrypted data is.
        let noise: Vec<u8> = (0..4096u32)
            .map(|i| ((i.wrapping_mul(2_654_435_761) >> 24) as u8).max(1))
            .collect();
        let head = read_all(noise.clone(), 4096, None).unwrap_err();
        assert!(
            head.starts_with("open: ") && head.contains("control characters"),
            "{head}"
        );
        let later = [b"id,name\n".repeat(2000), noise].concat();
        let partway = read_all(later, 4096, None).unwrap_err();
        assert!(
            partway.starts_with("read: ") && partway.contains("control characters"),
            "{partway}"
        );
    }
}
