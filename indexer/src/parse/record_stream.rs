//! Files read as a stream of records rather than whole, at any size: JSONL corpora
//! ([`super::jsonl_stream`]), MediaWiki dumps ([`super::wiki_dump_stream`]), Stack Exchange
//! tables ([`super::stack_exchange_stream`]), mailboxes ([`super::mailbox_stream`]), Evernote
//! exports ([`super::evernote_stream`]) and CSV/TSV tables ([`super::table_stream`]). Which
//! files are is told by their names ([`stream_reading`]) and, for XML and files of no known
//! extension, by their first bytes ([`sniff_stream`]); a stream yields a [`Parsed`] batch of
//! records at a time.

use std::io::{BufReader, Read};
use std::sync::Arc;

use super::compressed::{inner_name, Compression, MAX_INFLATED_BYTES};
use super::detect::{by_extension, Format};
use super::evernote_stream::EvernoteStream;
use super::jsonl_stream::JsonlStream;
use super::mailbox_stream::MailboxStream;
use super::mbox::looks_like_a_mailbox;
use super::stack_exchange::{first_child_is_a_row, other_table, other_table_failure, Table};
use super::stack_exchange_stream::StackExchangeStream;
use super::table_stream::TableStream;
use super::wiki_dump::looks_like_a_dump;
use super::wiki_dump_stream::WikiDumpStream;
use super::xml::root_name;
use super::{ParseError, Parsed, Parser};
use crate::source::StreamedFile;

/// When a file is read as a stream rather than whole, by its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamReading {
    /// Read whole.
    Never,
    /// Read whole within the size limit, as a stream of this kind past it (`.jsonl`, `.mbox`).
    PastTheSizeLimit(StreamKind),
    /// Compressed (`.jsonl.gz`, `.mbox.zst`): always as a stream of this kind (what it
    /// inflates to is not known before).
    Always(StreamKind),
    /// XML, or a file of no known extension (a Thunderbird folder is `Inbox`), past the size
    /// limit: as a stream where its first bytes show a MediaWiki dump, a Stack Exchange table,
    /// an Evernote export or a mailbox.
    SniffedPastTheSizeLimit,
    /// Compressed XML, or a compressed file of no known extension (Wikipedia's parts are
    /// `...-pages-articles1.xml-p1p41242.bz2`): as a stream where its first bytes, inflated,
    /// show one, whatever its size (a dump's part inflates past the 1 GiB a file compressed
    /// whole may).
    SniffedAlways,
}

/// How the file at `path` is read, by its name.
pub fn stream_reading(path: &str) -> StreamReading {
    let file_name = path.rsplit('/').next().unwrap_or(path);
    let inner = inner_name(file_name);
    let ext = inner.rsplit_once('.').map(|(_, ext)| ext.to_ascii_lowercase());
    let format = match ext.as_deref() {
        Some("xml") => Some(Format::Xml),
        Some(ext) => by_extension(ext),
        None => None,
    };
    let compressed = inner.len() < file_name.len();
    let kind = match format {
        Some(Format::Jsonl) => StreamKind::Jsonl,
        Some(Format::Mbox) => StreamKind::Mailbox,
        Some(Format::Csv) => StreamKind::Table { delimiter: b',' },
        Some(Format::Tsv) => StreamKind::Table { delimiter: b'\t' },
        Some(Format::Xml) | None if compressed => return StreamReading::SniffedAlways,
        Some(Format::Xml) | None => return StreamReading::SniffedPastTheSizeLimit,
        _ => return StreamReading::Never,
    };
    match compressed {
        true => StreamReading::Always(kind),
        false => StreamReading::PastTheSizeLimit(kind),
    }
}

/// Bytes of a file (as stored) read to tell whether it is read as a stream: a bzip2 block
/// (900 kB inflated) must be whole to inflate.
const SNIFFED_BYTES: u64 = 1 << 20;

/// What a file read as a stream holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamKind {
    Jsonl,
    MediaWikiDump,
    /// A Stack Exchange dump's `Posts.xml`, `Comments.xml` or `Users.xml`.
    StackExchangeTable,
    Mailbox,
    EvernoteExport,
    /// A CSV or TSV table, its cells separated by `delimiter`.
    Table {
        delimiter: u8,
    },
    /// One of a Stack Exchange dump's tables of no text (`Votes.xml`; its root element):
    /// it fails as such once opened, not as too large.
    StackExchangeNoText {
        root: &'static str,
    },
}

/// What `file` holds that is read as a stream when its name does not say (a MediaWiki dump, a
/// Stack Exchange table, an Evernote export, a mailbox), by its first bytes (inflated where they are compressed),
/// and the file to read on from its start; None for others. Reads block.
pub fn sniff_stream(file: StreamedFile) -> std::io::Result<(Option<StreamKind>, StreamedFile)> {
    let StreamedFile { file, bytes } = file;
    let mut stored = bytes.take(SNIFFED_BYTES);
    let mut head = Vec::new();
    stored.read_to_end(&mut head)?;
    let rest = stored.into_inner();
    let mut shown = Vec::new();
    match Compression::of(&head) {
        // What a cut stream inflates to before it breaks.
        Some(compression) => {
            if let Ok(decoder) = compression.decoder(&head[..]) {
                let _ = decoder.take(SHOWN_BYTES).read_to_end(&mut shown);
            }
        }
        None => shown.extend_from_slice(&head[..head.len().min(SHOWN_BYTES as usize)]),
    }
    let text = String::from_utf8_lossy(&shown);
    let kind = if looks_like_a_dump(&text.trim_start().to_ascii_lowercase()) {
        Some(StreamKind::MediaWikiDump)
    } else if looks_like_a_mailbox(&shown) {
        Some(StreamKind::Mailbox)
    } else {
        root_name(&text).and_then(|root| match (Table::of_root(&root), other_table(&root)) {
            _ if root == "en-export" => Some(StreamKind::EvernoteExport),
            (Some(_), _) => Some(StreamKind::StackExchangeTable),
            (None, Some(root)) if first_child_is_a_row(&text) => Some(StreamKind::StackExchangeNoText { root }),
            _ => None,
        })
    };
    let bytes: Box<dyn Read + Send> = Box::new(std::io::Cursor::new(head).chain(rest));
    Ok((kind, StreamedFile { file, bytes }))
}

/// Bytes of a file's start (inflated) its kind is told by: a mailbox's separator line and
/// first header field, an XML declaration and root element.
const SHOWN_BYTES: u64 = 1024;

/// A file's records read as a stream, a [`Parsed`] batch at a time. A reader's bug on a hostile
/// file (a panic) fails that file from there, the batches before kept, never the run.
pub struct RecordStream {
    /// None once a reader stopped on a panic.
    reader: Option<Reader>,
    kind: StreamKind,
}

enum Reader {
    Jsonl(Box<JsonlStream>),
    WikiDump(Box<WikiDumpStream>),
    StackExchange(Box<StackExchangeStream>),
    Mailbox(Box<MailboxStream>),
    Evernote(Box<EvernoteStream>),
    Table(Box<TableStream>),
}

impl StreamKind {
    /// What its reader is called in a failure's reason.
    pub fn name(self) -> &'static str {
        match self {
            Self::Jsonl => "JSONL",
            Self::MediaWikiDump => "MediaWiki dump",
            Self::StackExchangeTable | Self::StackExchangeNoText { .. } => "Stack Exchange table",
            Self::Mailbox => "MBOX",
            Self::EvernoteExport => "Evernote export",
            Self::Table { delimiter: b'\t' } => "TSV",
            Self::Table { .. } => "CSV",
        }
    }
}

impl RecordStream {
    /// Opens `file` as `kind`; a mailbox's messages and a note's attachments are parsed by
    /// `members`.
    pub fn open(file: StreamedFile, kind: StreamKind, members: &Arc<dyn Parser>) -> Result<Self, ParseError> {
        let StreamedFile { file, bytes } = file;
        let opened = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            Ok(match kind {
                StreamKind::Jsonl => Reader::Jsonl(Box::new(JsonlStream::open(file, bytes)?)),
                StreamKind::MediaWikiDump => Reader::WikiDump(Box::new(WikiDumpStream::open(file, bytes)?)),
                StreamKind::StackExchangeTable => {
                    Reader::StackExchange(Box::new(StackExchangeStream::open(file, bytes)?))
                }
                StreamKind::Mailbox => Reader::Mailbox(Box::new(MailboxStream::open(file, bytes, members.clone())?)),
                StreamKind::EvernoteExport => {
                    Reader::Evernote(Box::new(EvernoteStream::open(file, bytes, members.clone())?))
                }
                StreamKind::Table { delimiter } => Reader::Table(Box::new(TableStream::open(file, bytes, delimiter)?)),
                StreamKind::StackExchangeNoText { root } => return Err(other_table_failure(root)),
            })
        }));
        let reader = opened.unwrap_or_else(|_| {
            Err(ParseError::Corrupt(format!(
                "the {} reader could not read this file",
                kind.name()
            )))
        })?;
        Ok(Self {
            reader: Some(reader),
            kind,
        })
    }
}

impl Iterator for RecordStream {
    type Item = Result<Parsed, ParseError>;

    fn next(&mut self) -> Option<Self::Item> {
        let reader = self.reader.as_mut()?;
        let next = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match reader {
            Reader::Jsonl(stream) => stream.next(),
            Reader::WikiDump(stream) => stream.next(),
            Reader::StackExchange(stream) => stream.next(),
            Reader::Mailbox(stream) => stream.next(),
            Reader::Evernote(stream) => stream.next(),
            Reader::Table(stream) => stream.next(),
        }));
        next.unwrap_or_else(|_| {
            self.reader = None;
            Some(Err(ParseError::Corrupt(format!(
                "the {} reader stopped partway through this file (what it read before is kept)",
                self.kind.name()
            ))))
        })
    }
}

/// How many times its stored size a compressed stream may inflate to (at least
/// [`MAX_INFLATED_BYTES`]): text corpora inflate 3 to 20 times; a compression bomb, to
/// thousands.
pub const MAX_INFLATION_RATIO: u64 = 100;

/// A stored file's bytes as they read: inflated as they are read where they are compressed
/// (told by their first bytes), to [`MAX_INFLATION_RATIO`] times `stored_size` (at least
/// [`MAX_INFLATED_BYTES`]); past that a read fails.
pub(super) fn inflating(bytes: Box<dyn Read + Send>, stored_size: u64) -> Result<Box<dyn Read + Send>, ParseError> {
    let mut bytes = BufReader::with_capacity(1 << 20, bytes);
    let head = std::io::BufRead::fill_buf(&mut bytes)
        .map_err(|e| ParseError::Corrupt(format!("its first bytes could not be read ({e})")))?;
    let Some(compression) = Compression::of(head) else {
        return Ok(Box::new(bytes));
    };
    let decoder = compression
        .decoder(bytes)
        .map_err(|e| ParseError::Corrupt(format!("its {} data is damaged ({e})", compression.name())))?;
    let limit = stored_size.saturating_mul(MAX_INFLATION_RATIO).max(MAX_INFLATED_BYTES);
    Ok(Box::new(Bounded {
        inner: decoder,
        left: limit,
        limit,
    }))
}

/// A reader that fails once more than `limit` bytes were read from it.
struct Bounded {
    inner: Box<dyn Read + Send>,
    left: u64,
    limit: u64,
}

impl Read for Bounded {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.left = self.left.checked_sub(n as u64).ok_or_else(|| {
            std::io::Error::other(format!(
                "it inflates past {} MiB, {MAX_INFLATION_RATIO} times its size (a compression bomb)",
                self.limit >> 20
            ))
        })?;
        Ok(n)
    }
}

/// What a stream of records yields for a batch read: the batch, where it holds a document or a
/// failure; `nothing` (what a file read whole fails as: no text content found, no message
/// found) where the file ended (`done`) having yielded nothing; else None, to read on.
/// `yielded` counts what was yielded.
pub(super) fn batch_or_end(
    parsed: Parsed,
    yielded: &mut usize,
    done: bool,
    nothing: impl FnOnce() -> ParseError,
) -> Option<Result<Parsed, ParseError>> {
    let read = parsed.documents.len() + parsed.failures.len();
    *yielded += read;
    if read > 0 {
        Some(Ok(parsed))
    } else if done && *yielded == 0 {
        Some(Err(nothing()))
    } else {
        None
    }
}

/// Asserts that documents read as a stream are those read whole: URIs, titles, tags,
/// metadata, content hashes and blocks.
#[cfg(test)]
pub(super) fn assert_same_documents(streamed: &[&super::Document], whole: &[super::Document]) {
    assert_eq!(streamed.len(), whole.len());
    for (streamed, whole) in streamed.iter().zip(whole) {
        let seen = |d: &super::Document| {
            let blocks: Vec<String> = d.blocks.iter().map(|b| b.text.clone()).collect();
            (
                d.uri.clone(),
                d.title.clone(),
                d.tags.clone(),
                d.metadata.clone(),
                d.content_hash.clone(),
                blocks,
            )
        };
        assert_eq!(seen(streamed), seen(whole));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::compressed::fixtures::{bzip2, gzip, lz4};
    use crate::parse::raw_for_test;

    #[test]
    fn which_files_are_streamed_is_told_by_their_names() {
        use StreamKind::{Jsonl, Mailbox};
        use StreamReading::*;
        for (path, reading) in [
            ("a/corpus.jsonl", PastTheSizeLimit(Jsonl)),
            ("a/corpus.NDJSON", PastTheSizeLimit(Jsonl)),
            ("corpus.jsonl.gz", Always(Jsonl)),
            ("corpus.jsonl.ZST", Always(Jsonl)),
            ("corpus.json", Never),
            ("corpus.json.gz", Never),
            ("dump.xml", SniffedPastTheSizeLimit),
            ("enwiki-pages-articles1.xml-p1p41242.bz2", SniffedAlways),
            ("logs.tar.gz", Never),
            ("simplewiki-latest-pages-articles.xml.bz2", SniffedAlways),
            ("notes.md.gz", Never),
            ("notes.md", Never),
            (
                "Takeout/Mail/All mail Including Spam and Trash.mbox",
                PastTheSizeLimit(Mailbox),
            ),
            ("archive.mbx.xz", Always(Mailbox)),
            ("Thunderbird/Inbox", SniffedPastTheSizeLimit),
            ("Evernote/Harbour.enex", SniffedPastTheSizeLimit),
            ("Evernote/Harbour.enex.zst", SniffedAlways),
            ("jsonl", SniffedPastTheSizeLimit),
            (
                "exports/products.csv",
                PastTheSizeLimit(StreamKind::Table { delimiter: b',' }),
            ),
            (
                "exports/products.TSV.gz",
                Always(StreamKind::Table { delimiter: b'\t' }),
            ),
        ] {
            assert_eq!(stream_reading(path), reading, "{path}");
        }
    }

    /// Bytes that read as `good`, then panic (a reader's bug met partway through a file).
    struct PanicsAfter(std::io::Cursor<Vec<u8>>);

    impl Read for PanicsAfter {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            match self.0.read(buf)? {
                0 => panic!("a reader's bug"),
                n => Ok(n),
            }
        }
    }

    #[test]
    fn a_reader_that_panics_fails_its_file_from_there_with_the_batches_before_kept() {
        let lines: String = (0..5000)
            .map(|i| format!("{{\"_id\": \"d{i}\", \"text\": \"passage {i}\"}}\n"))
            .collect();
        let file = StreamedFile {
            file: raw_for_test("c.jsonl", Vec::new()),
            bytes: Box::new(PanicsAfter(std::io::Cursor::new(lines.into_bytes()))),
        };
        let members: Arc<dyn Parser> = Arc::new(crate::parse::AutoParser);
        let batches: Vec<Result<Parsed, ParseError>> =
            RecordStream::open(file, StreamKind::Jsonl, &members).unwrap().collect();
        assert_eq!(batches.len(), 2, "{batches:?}");
        assert_eq!(batches[0].as_ref().unwrap().documents.len(), 4096);
        assert_eq!(
            batches[1].as_ref().unwrap_err().detail().as_deref(),
            Some("the JSONL reader stopped partway through this file (what it read before is kept)")
        );
        // A panic while opening fails the file.
        let file = StreamedFile {
            file: raw_for_test("t.csv", Vec::new()),
            bytes: Box::new(PanicsAfter(std::io::Cursor::new(Vec::new()))),
        };
        let error = RecordStream::open(file, StreamKind::Table { delimiter: b',' }, &members)
            .err()
            .unwrap();
        assert_eq!(
            error.detail().as_deref(),
            Some("the CSV reader could not read this file")
        );
    }

    #[test]
    fn a_compressed_stream_inflates_to_a_bound() {
        // 1.5 GiB of blank lines from about 1.5 MB of gzip: past 1 GiB, the read fails.
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        let block = vec![b'\n'; 1 << 20];
        for _ in 0..1536 {
            std::io::Write::write_all(&mut encoder, &block).unwrap();
        }
        let bomb = encoder.finish().unwrap();
        let mut inflated = inflating(Box::new(std::io::Cursor::new(bomb.clone())), bomb.len() as u64).unwrap();
        let error = std::io::copy(&mut inflated, &mut std::io::sink()).unwrap_err();
        assert_eq!(
            error.to_string(),
            "it inflates past 1024 MiB, 100 times its size (a compression bomb)"
        );
        // Stored as 20 MB, the same would be read to its end.
        let mut inflated = inflating(Box::new(std::io::Cursor::new(bomb)), 20 << 20).unwrap();
        assert_eq!(std::io::copy(&mut inflated, &mut std::io::sink()).unwrap(), 1536 << 20);
    }

    #[test]
    fn dumps_tables_and_mailboxes_are_told_by_their_first_bytes_inflated_and_read_from_their_start() {
        let dump = "<?xml version=\"1.0\"?>\n<mediawiki xmlns=\"x\"><siteinfo/></mediawiki>".repeat(50_000);
        let mailbox = b"From - Tue Dec 01 10:00:00 2026\nFrom: ops@example.com\n\nValve 7.\n";
        let posts = b"<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<posts>\n  <row Id=\"1\" />".to_vec();
        let votes = b"<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<votes>\n  <row Id=\"1\" PostId=\"1\" />".to_vec();
        let evernote = crate::parse::evernote::tests::export().into_bytes();
        for (bytes, kind) in [
            (dump.clone().into_bytes(), Some(StreamKind::MediaWikiDump)),
            (gzip(dump.as_bytes()), Some(StreamKind::MediaWikiDump)),
            (bzip2(dump.as_bytes()), Some(StreamKind::MediaWikiDump)),
            (gzip(&posts), Some(StreamKind::StackExchangeTable)),
            (posts.clone(), Some(StreamKind::StackExchangeTable)),
            (mailbox.to_vec(), Some(StreamKind::Mailbox)),
            (bzip2(mailbox), Some(StreamKind::Mailbox)),
            (b"From the minutes of 3 May:\nAction: buy valves\n".to_vec(), None),
            (gzip(b"<?xml version=\"1.0\"?>\n<PubmedArticleSet>"), None),
            (b"not xml".to_vec(), None),
            (votes.clone(), Some(StreamKind::StackExchangeNoText { root: "votes" })),
            (b"<votes><vote>yes</vote></votes>".to_vec(), None),
            (evernote.clone(), Some(StreamKind::EvernoteExport)),
            (gzip(&evernote), Some(StreamKind::EvernoteExport)),
            (lz4(dump.as_bytes(), false), Some(StreamKind::MediaWikiDump)),
            (lz4(mailbox, true), Some(StreamKind::Mailbox)),
        ] {
            let file = StreamedFile {
                file: raw_for_test("d.xml", Vec::new()),
                bytes: Box::new(std::io::Cursor::new(bytes.clone())),
            };
            let (told, mut file) = sniff_stream(file).unwrap();
            assert_eq!(told, kind);
            let mut read = Vec::new();
            file.bytes.read_to_end(&mut read).unwrap();
            assert!(read == bytes, "the whole file is read on");
        }
        // A table of no text past the size limit fails as such (a file that is no document),
        // not as too large.
        let file = StreamedFile {
            file: raw_for_test("Votes.xml", Vec::new()),
            bytes: Box::new(std::io::Cursor::new(votes)),
        };
        let kind = StreamKind::StackExchangeNoText { root: "votes" };
        let error = RecordStream::open(file, kind, &(Arc::new(crate::parse::AutoParser) as Arc<dyn Parser>))
            .err()
            .unwrap();
        assert!(error.is_no_document());
        assert!(
            error
                .to_string()
                .contains("a Stack Exchange votes table holds votes on posts"),
            "{error}"
        );
    }
}
