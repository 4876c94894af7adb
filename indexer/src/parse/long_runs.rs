//! XML read as a stream, its pieces bounded: quick-xml holds a whole text, CDATA section,
//! comment or tag in memory to hand it on as one event, so a file of one text of tens of
//! gigabytes (a dump's page, a note's attachment, or a compressed file built to inflate to
//! one) would exhaust memory. [`CutLongRuns`] passes XML through unchanged but for the bytes of
//! any such piece past [`MAX_RUN_BYTES`] (a comment's past [`MAX_COMMENT_BYTES`]): those are
//! left out (at a character's boundary) and the piece closed as it would have been (a cut tag
//! keeps its closing quote and `/>`), and where each cut was made (but in a comment) is noted
//! for the reader to report.

use std::io::{BufReader, Read};
use std::sync::{Arc, Mutex};

use super::record_stream::inflating;
use super::{ItemFailure, ParseError, RawDocument};

/// The XML reader a stream reads its events from.
pub(super) type XmlStreamReader = quick_xml::Reader<BufReader<Box<dyn Read + Send>>>;

/// The XML reader of a stream: `bytes` (`stored_size` as stored) inflated where compressed,
/// its pieces bounded to [`MAX_RUN_BYTES`], its end tags checked where `check_end_names`; and
/// where it was cut.
pub(super) fn xml_stream_reader(
    bytes: Box<dyn Read + Send>,
    stored_size: u64,
    check_end_names: bool,
) -> Result<(XmlStreamReader, Cuts), ParseError> {
    let (bounded, cuts) = CutLongRuns::new(inflating(bytes, stored_size)?, MAX_RUN_BYTES);
    let bounded: Box<dyn Read + Send> = Box::new(bounded);
    let mut reader = quick_xml::Reader::from_reader(BufReader::with_capacity(1 << 20, bounded));
    reader.config_mut().check_end_names = check_end_names;
    Ok((reader, cuts))
}

/// The longest text, CDATA section or tag read on in one piece, as `--max-file-mb`'s
/// default: an attachment a note may hold, base64-encoded, is within it.
pub const MAX_RUN_BYTES: u64 = 256 << 20;

/// The longest comment read on: no reader reads comments, so one cut loses nothing and is
/// not reported.
pub const MAX_COMMENT_BYTES: u64 = 1 << 20;

/// A stream's event buffer let go of where one large piece grew it, so that the rest of the
/// stream does not hold its room.
pub(super) fn shrink_after_a_large_piece(buffer: &mut Vec<u8>) {
    if buffer.capacity() > 16 << 20 {
        *buffer = Vec::new();
    }
}

/// Where the XML read through a [`CutLongRuns`] was cut: offsets in what it passed on.
#[derive(Clone, Default)]
pub struct Cuts(Arc<Mutex<Vec<u64>>>);

impl Cuts {
    /// The cuts noted since the last call, as failed items of `file`: its reader read the
    /// piece to there and what followed to its end was left out.
    pub fn take_failures(&self, file: &RawDocument) -> Vec<ItemFailure> {
        let cuts = std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()));
        cuts.into_iter()
            .map(|at| ItemFailure {
                uri: format!("{}#byte={at}", file.uri),
                reason: format!(
                    "byte {at}: a text or tag of more than {} MiB in one piece; it was read to there \
                     and the rest of it left out",
                    MAX_RUN_BYTES >> 20
                ),
            })
            .collect()
    }
}

/// What the bytes read are in.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Piece {
    Text,
    /// After `<`, before it is told whether a comment, a CDATA section or a tag follows:
    /// how many of its first bytes were read.
    Opening(usize),
    Tag {
        quote: Option<u8>,
        last: u8,
    },
    /// `-->` or `]]>` ends it; how many of its first two bytes were just read.
    Comment(usize),
    CData(usize),
}

const COMMENT_HEAD: &[u8] = b"!--";
const CDATA_HEAD: &[u8] = b"![CDATA[";

/// XML read through with each piece bounded to `limit` bytes.
pub struct CutLongRuns<R> {
    inner: R,
    limit: u64,
    piece: Piece,
    head: Vec<u8>,
    /// Bytes of the piece read so far.
    run: u64,
    /// Leaving bytes out until the piece ends; for a tag, the quote it was cut in.
    cut: Option<Option<u8>>,
    passed: u64,
    cuts: Cuts,
    out: Vec<u8>,
    served: usize,
    chunk: Vec<u8>,
    /// Whether runs of bytes that cannot end a piece are read at once (else a byte at a
    /// time: the tests' reference).
    spans: bool,
}

impl<R: Read> CutLongRuns<R> {
    pub fn new(inner: R, limit: u64) -> (Self, Cuts) {
        let cuts = Cuts::default();
        let reader = Self {
            inner,
            limit,
            piece: Piece::Text,
            head: Vec::new(),
            run: 0,
            cut: None,
            passed: 0,
            cuts: cuts.clone(),
            out: Vec::new(),
            served: 0,
            chunk: vec![0; 64 << 10],
            spans: true,
        };
        (reader, cuts)
    }

    fn pass(&mut self, bytes: &[u8]) {
        self.out.extend_from_slice(bytes);
        self.passed += bytes.len() as u64;
    }

    /// The longest the piece being read may be.
    fn limit(&self) -> u64 {
        match self.piece {
            Piece::Comment(_) => self.limit.min(MAX_COMMENT_BYTES),
            _ => self.limit,
        }
    }

    /// A byte of a piece's body: passed on within the limit, else left out (from a
    /// character's first byte on).
    fn body(&mut self, byte: u8, quote: Option<u8>) {
        self.run += 1;
        if self.cut.is_none() && self.run > self.limit() && (byte & 0xC0) != 0x80 {
            self.cut = Some(quote);
            if !matches!(self.piece, Piece::Comment(_)) {
                self.cuts.0.lock().unwrap_or_else(|e| e.into_inner()).push(self.passed);
            }
        }
        if self.cut.is_none() {
            self.pass(&[byte]);
        }
    }

    /// The piece ended by `end` (its last bytes, passed on whole where it was cut).
    fn end(&mut self, end: &[u8], next: Piece) {
        match self.cut.take() {
            Some(quote) => {
                self.pass(quote.as_slice());
                self.pass(end);
            }
            None => self.pass(&end[end.len() - 1..]),
        }
        self.piece = next;
        self.run = 0;
    }

    /// Reads `bytes`' first bytes: those up to the next byte that may end the piece or cross
    /// the limit at once, else one; how many it read.
    fn read_span(&mut self, bytes: &[u8]) -> usize {
        let next_stop = match self.piece {
            Piece::Text => memchr::memchr(b'<', bytes),
            Piece::Tag { quote: None, .. } => memchr::memchr3(b'"', b'\'', b'>', bytes),
            Piece::Tag { quote: Some(q), .. } => memchr::memchr(q, bytes),
            Piece::Comment(_) | Piece::CData(_) => memchr::memchr(b'>', bytes),
            Piece::Opening(_) => Some(0),
        };
        let stop = next_stop.unwrap_or(bytes.len());
        let span = match self.cut {
            // A piece being left out, to its end.
            Some(_) => stop,
            None => stop.min(self.limit().saturating_sub(self.run) as usize),
        };
        if span == 0 {
            self.read_byte(bytes[0]);
            return 1;
        }
        let read = &bytes[..span];
        if self.cut.is_none() {
            self.pass(read);
        }
        self.run += span as u64;
        // What the bytes read leave of the piece's end: a tag's last byte, the `-` or `]` of a
        // comment's or CDATA section's end read so far.
        let marks_at_the_end = |mark: u8, seen: usize| {
            let trailing = read.iter().rev().take_while(|&&b| b == mark).count();
            match trailing == span {
                true => (seen + trailing).min(2),
                false => trailing.min(2),
            }
        };
        self.piece = match self.piece {
            Piece::Tag { quote, .. } => Piece::Tag {
                quote,
                last: read[span - 1],
            },
            Piece::Comment(seen) => Piece::Comment(marks_at_the_end(b'-', seen)),
            Piece::CData(seen) => Piece::CData(marks_at_the_end(b']', seen)),
            piece => piece,
        };
        span
    }

    fn read_byte(&mut self, byte: u8) {
        match self.piece {
            Piece::Text if byte == b'<' => self.end(b"<", Piece::Opening(0)),
            Piece::Text => self.body(byte, None),
            Piece::Opening(read) => {
                self.pass(&[byte]);
                self.head.truncate(read);
                self.head.push(byte);
                self.run += 1;
                self.piece = if self.head == COMMENT_HEAD {
                    Piece::Comment(0)
                } else if self.head == CDATA_HEAD {
                    Piece::CData(0)
                } else if COMMENT_HEAD.starts_with(&self.head) || CDATA_HEAD.starts_with(&self.head) {
                    Piece::Opening(read + 1)
                } else if byte == b'>' {
                    self.run = 0;
                    Piece::Text
                } else {
                    let quote = (byte == b'"' || byte == b'\'').then_some(byte);
                    Piece::Tag { quote, last: byte }
                };
            }
            Piece::Tag { quote: None, last } if byte == b'>' => {
                let end: &[u8] = if last == b'/' { b"/>" } else { b">" };
                self.end(end, Piece::Text)
            }
            Piece::Tag { quote: before, .. } => {
                let quote = match before {
                    Some(q) if q == byte => None,
                    None if byte == b'"' || byte == b'\'' => Some(byte),
                    open => open,
                };
                self.piece = Piece::Tag { quote, last: byte };
                // A tag cut is closed with the quote open before the byte it was cut at.
                self.body(byte, before);
            }
            Piece::Comment(dashes) => self.closing(byte, dashes, b'-', b"-->", Piece::Comment),
            Piece::CData(brackets) => self.closing(byte, brackets, b']', b"]]>", Piece::CData),
        }
    }

    /// A byte of a comment or CDATA section, which `end` (`-->`, `]]>`) closes.
    fn closing(&mut self, byte: u8, seen: usize, mark: u8, end: &[u8], piece: fn(usize) -> Piece) {
        if byte == b'>' && seen >= 2 {
            if self.cut.is_none() {
                // Its last two bytes were passed on as the body's.
                self.pass(b">");
                self.piece = Piece::Text;
                self.run = 0;
            } else {
                self.end(end, Piece::Text);
            }
            return;
        }
        self.piece = piece(if byte == mark { (seen + 1).min(2) } else { 0 });
        self.body(byte, None);
    }
}

impl<R: Read> Read for CutLongRuns<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.served == self.out.len() {
            self.out.clear();
            self.served = 0;
            let mut chunk = std::mem::take(&mut self.chunk);
            let read = self.inner.read(&mut chunk);
            let n = match read {
                Ok(n) => n,
                Err(e) => {
                    self.chunk = chunk;
                    return Err(e);
                }
            };
            if n == 0 {
                self.chunk = chunk;
                return Ok(0);
            }
            let mut at = 0;
            while at < n {
                at += match self.spans {
                    true => self.read_span(&chunk[at..n]),
                    false => {
                        self.read_byte(chunk[at]);
                        1
                    }
                };
            }
            self.chunk = chunk;
        }
        let n = buf.len().min(self.out.len() - self.served);
        buf[..n].copy_from_slice(&self.out[self.served..self.served + n]);
        self.served += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn through(xml: &[u8], limit: u64) -> (String, Vec<u64>) {
        let (mut reader, cuts) = CutLongRuns::new(xml, limit);
        let mut out = Vec::new();
        reader.read_to_end(&mut out).unwrap();
        let at = cuts.0.lock().unwrap().clone();
        (String::from_utf8(out).unwrap(), at)
    }

    #[test]
    fn xml_within_the_limit_passes_unchanged() {
        let xml = "<?xml version=\"1.0\"?>\n<!DOCTYPE x><r a=\"1>2\" b='<'><!-- c -- d --><![CDATA[ <p>]] ]]>\
                   <e/>text &amp; ü</r>";
        assert_eq!(through(xml.as_bytes(), 40), (xml.to_string(), vec![]));
    }

    #[test]
    fn long_pieces_are_cut_and_closed_as_they_were() {
        let long = "ü".repeat(30);
        let cases = [
            // A text: cut at a character's boundary, the next tag read on.
            (format!("<r>{long}</r>"), format!("<r>{}</r>", "ü".repeat(5)), vec![13]),
            // A CDATA section.
            (
                format!("<r><![CDATA[{long}]]><n/></r>"),
                "<r><![CDATA[ü]]><n/></r>".to_string(),
                vec![14],
            ),
            // A comment: nothing any reader reads, so its cut is not noted.
            (format!("<!--{long}-->x"), format!("<!--{}-->x", "ü".repeat(4)), vec![]),
            // A tag cut in a quoted attribute, the quote and `/>` closed.
            (
                format!("<r><row Body=\"{long}\" Id='1'/><n/></r>"),
                "<r><row Body=\"\"/><n/></r>".to_string(),
                vec![14],
            ),
        ];
        for (xml, kept, at) in cases {
            let (out, cuts) = through(xml.as_bytes(), 10);
            assert_eq!((out.as_str(), &cuts), (kept.as_str(), &at), "{xml}");
            // What it passes on reads as XML.
            let mut reader = quick_xml::Reader::from_str(&out);
            while !matches!(reader.read_event().unwrap(), quick_xml::events::Event::Eof) {}
        }
    }

    #[test]
    fn a_piece_without_end_is_left_out_to_the_files_end_read_a_byte_at_a_time() {
        struct OneByte<'a>(&'a [u8]);
        impl Read for OneByte<'_> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                match self.0.split_first() {
                    Some((&byte, rest)) if !buf.is_empty() => {
                        buf[0] = byte;
                        self.0 = rest;
                        Ok(1)
                    }
                    _ => Ok(0),
                }
            }
        }
        let xml = format!("<r><![CDATA[{}", "a]".repeat(1000));
        let (mut reader, cuts) = CutLongRuns::new(OneByte(xml.as_bytes()), 100);
        let mut out = Vec::new();
        reader.read_to_end(&mut out).unwrap();
        assert_eq!(out.len(), "<r><![CDATA[".len() + 100 - CDATA_HEAD.len());
        let failures = cuts.take_failures(&crate::parse::raw_for_test("d.xml", Vec::new()));
        assert_eq!(failures.len(), 1);
        assert_eq!(failures[0].uri, "memory://test/d.xml#byte=104");
        assert!(
            failures[0].reason.contains("more than 256 MiB in one piece"),
            "{failures:?}"
        );
        assert!(cuts
            .take_failures(&crate::parse::raw_for_test("d.xml", Vec::new()))
            .is_empty());
    }

    #[test]
    fn runs_read_at_once_pass_and_cut_what_bytes_read_one_at_a_time_do() {
        use rand::{Rng, SeedableRng};
        let pieces: [&str; 16] = [
            "<",
            ">",
            "!",
            "-",
            "--",
            "[",
            "]]",
            "<![CDATA[",
            "<!--",
            "\"",
            "'",
            "/",
            "a",
            "ü",
            "語",
            " ",
        ];
        let mut rng = rand::rngs::StdRng::seed_from_u64(11);
        for case in 0..2_000 {
            let xml: String = (0..rng.random_range(0..200))
                .map(|_| pieces[rng.random_range(0..pieces.len())])
                .collect();
            let limit = rng.random_range(1..40);
            let read = |spans: bool| {
                let (mut reader, cuts) = CutLongRuns::new(xml.as_bytes(), limit);
                reader.spans = spans;
                let mut out = Vec::new();
                reader.read_to_end(&mut out).unwrap();
                let at = cuts.0.lock().unwrap().clone();
                (out, at)
            };
            let (spans, bytes) = (read(true), read(false));
            assert!(spans == bytes, "case {case}, limit {limit}: {xml:?}");
            // Cut at characters' boundaries only.
            assert!(String::from_utf8(spans.0).is_ok(), "{xml:?}");
        }
    }
}
