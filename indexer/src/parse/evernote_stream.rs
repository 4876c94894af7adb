//! An Evernote export read as a stream (past `--max-file-mb`, or compressed: a notebook of
//! years of notes and their attachments exports as one file of gigabytes), a batch of notes at
//! a time: the XML read by quick-xml from the file as it is read (and inflated), its pieces
//! bounded ([`super::long_runs`]), each note ended handed on, a batch's notes read in parallel
//! as `evernote.rs` reads an export read whole, with the same documents, URIs and failures.
//! Its memory is a batch's notes, not the export. XML damaged partway keeps the notes before
//! it; damaged after the last note (at the export's end tag), it loses nothing.

use std::io::Read;
use std::sync::Arc;

use quick_xml::events::Event;

use super::evernote::{no_notes, note_documents, Note, NoteNames, NoteReading};
use super::long_runs::{shrink_after_a_large_piece, xml_stream_reader, Cuts, XmlStreamReader};
use super::record_stream::batch_or_end;
use super::xml::{broken_partway, Damage};
use super::{ParseError, Parsed, Parser};
use crate::source::RawDocument;

/// Notes a batch holds at most...
pub const BATCH_NOTES: usize = 256;
/// ...and bytes of their content and attachments.
pub const BATCH_BYTES: usize = 64 << 20;

pub struct EvernoteStream {
    /// The file (its bytes empty): each document's URI, name, etag and source.
    file: RawDocument,
    reader: XmlStreamReader,
    cuts: Cuts,
    buffer: Vec<u8>,
    reading: NoteReading,
    names: NoteNames,
    members: Arc<dyn Parser>,
    yielded: usize,
    done: bool,
}

impl EvernoteStream {
    /// Reads `file`'s notes from `bytes` (inflated first where they are compressed), their
    /// attachments parsed by `members`.
    pub fn open(file: RawDocument, bytes: Box<dyn Read + Send>, members: Arc<dyn Parser>) -> Result<Self, ParseError> {
        let (reader, cuts) = xml_stream_reader(bytes, file.size, false)?;
        Ok(Self {
            file,
            reader,
            cuts,
            buffer: Vec::new(),
            reading: NoteReading::default(),
            names: NoteNames::default(),
            members,
            yielded: 0,
            done: false,
        })
    }

    /// The next batch of notes ended, and where the XML broke, if it did (and lost a note).
    fn read_batch(&mut self) -> Result<(Vec<Note>, Option<Damage>), ParseError> {
        let (mut notes, mut bytes) = (Vec::new(), 0);
        while notes.len() < BATCH_NOTES && bytes < BATCH_BYTES {
            shrink_after_a_large_piece(&mut self.buffer);
            self.buffer.clear();
            match self.reader.read_event_into(&mut self.buffer) {
                Ok(Event::Eof) => {
                    self.done = true;
                    break;
                }
                Ok(event) => {
                    if let Some(note) = self.reading.take(event) {
                        bytes += note.size();
                        notes.push(note);
                    }
                }
                Err(error) => {
                    self.done = true;
                    let at = self.reader.buffer_position();
                    // Broken before any note ended: the file fails, as one read whole does.
                    if self.reading.notes_read == 0 {
                        return Err(ParseError::Corrupt(format!(
                            "the Evernote export at byte {at}: {error}"
                        )));
                    }
                    // A note the XML broke inside is kept as far as it was read.
                    let in_a_note = self.reading.in_a_note();
                    notes.extend(self.reading.unfinished());
                    let lost = in_a_note || self.a_note_follows();
                    return Ok((notes, lost.then(|| (at, error.to_string()))));
                }
            }
        }
        Ok((notes, None))
    }

    /// Whether `<note` is among the bytes left (read to the file's end to tell).
    fn a_note_follows(&mut self) -> bool {
        let rest = self.reader.get_mut();
        let finder = memchr::memmem::Finder::new(b"<note");
        let mut carried: Vec<u8> = Vec::new();
        let mut chunk = vec![0; 1 << 20];
        loop {
            let n = match rest.read(&mut chunk) {
                Ok(0) | Err(_) => return false,
                Ok(n) => n,
            };
            carried.extend_from_slice(&chunk[..n]);
            if finder.find(&carried).is_some() {
                return true;
            }
            // The last bytes, where `<note` may start across two reads.
            carried.drain(..carried.len().saturating_sub(4));
        }
    }
}

impl Iterator for EvernoteStream {
    type Item = Result<Parsed, ParseError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            let (notes, damage) = match self.read_batch() {
                Ok(read) => read,
                Err(e) => return Some(Err(e)),
            };
            let named = notes
                .into_iter()
                .map(|note| self.names.named(&self.file, note))
                .collect();
            let mut parsed = note_documents(&self.file, named, &*self.members);
            if let Some(damage) = damage {
                let failure = broken_partway(&self.file, damage, "the export's XML", "notes");
                parsed.failures.push(failure);
            }
            parsed.failures.extend(self.cuts.take_failures(&self.file));
            if let Some(item) = batch_or_end(parsed, &mut self.yielded, self.done, no_notes) {
                return Some(item);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::compressed::fixtures::gzip;
    use crate::parse::evernote::tests::export;
    use crate::parse::record_stream::assert_same_documents;
    use crate::parse::{failures_of, raw_for_test, AutoParser};

    fn stream(name: &str, bytes: Vec<u8>) -> EvernoteStream {
        let file = raw_for_test(name, Vec::new());
        EvernoteStream::open(file, Box::new(std::io::Cursor::new(bytes)), Arc::new(AutoParser)).unwrap()
    }

    /// The test export with `copies` notes more after its own, each created a second apart.
    fn long_export(copies: usize) -> String {
        let notes: String = (0..copies)
            .map(|i| {
                format!(
                    "<note><title>Tide {i}</title><created>2020{:02}01T{:02}{:02}00Z</created>\
                     <content><![CDATA[<en-note><div>High water at {i}.</div></en-note>]]></content></note>\n",
                    1 + i % 12,
                    (i / 60) % 24,
                    i % 60
                )
            })
            .collect();
        export().replace("</en-export>", &format!("{notes}</en-export>"))
    }

    #[test]
    fn notes_read_as_a_stream_are_the_documents_of_the_export_read_whole() {
        let xml = long_export(600);
        let whole = AutoParser.parse(&raw_for_test("notes.enex", xml.clone())).unwrap();
        assert_eq!(whole.documents.len(), 603);
        for bytes in [xml.clone().into_bytes(), gzip(xml.as_bytes())] {
            let batches: Vec<Parsed> = stream("notes.enex", bytes).map(Result::unwrap).collect();
            // 603 notes in batches of 256.
            assert_eq!(batches.len(), 3);
            let documents: Vec<_> = batches.iter().flat_map(|b| &b.documents).collect();
            assert_same_documents(&documents, &whole.documents);
            let failures: Vec<(&str, &str)> = batches.iter().flat_map(failures_of).collect();
            assert_eq!(failures, failures_of(&whole));
            // Names given across batches as in one: a note of the same second is `-2`.
            assert_eq!(documents[1].uri, "memory://test/notes.enex#note=20130730T205204Z-2");
            assert_eq!(documents[602].title, "Tide 599");
        }
    }

    #[test]
    fn damage_keeps_the_notes_before_it_and_loses_nothing_after_the_last() {
        let xml = long_export(400);
        let at = xml.find("<note><title>Tide 300</title>").unwrap();
        let broken = format!(
            "{}<note><title>Kaputt</title><!-- never closed{}",
            &xml[..at],
            &xml[at..]
        );
        let batches: Vec<Parsed> = stream("cut.enex", broken.into_bytes()).map(Result::unwrap).collect();
        let titles: Vec<&str> = batches
            .iter()
            .flat_map(|b| &b.documents)
            .map(|d| d.title.as_str())
            .collect();
        assert_eq!(titles.len(), 304, "3 notes, 300 tides, the broken note's title");
        assert_eq!(titles.last(), Some(&"Kaputt"));
        let failures: Vec<(&str, &str)> = batches.iter().flat_map(failures_of).collect();
        assert_eq!(failures.len(), 2, "{failures:?}");
        assert!(
            failures[1].0.starts_with("memory://test/cut.enex#byte="),
            "{failures:?}"
        );
        assert!(
            failures[1].1.ends_with("the notes after it were not read"),
            "{failures:?}"
        );
        // Broken after the last note: its failure is the attachment's alone.
        let at_the_end = xml.replace("</en-export>", "</en-export></en-export>");
        let batches: Vec<Parsed> = stream("end.enex", at_the_end.into_bytes())
            .map(Result::unwrap)
            .collect();
        let documents: usize = batches.iter().map(|b| b.documents.len()).sum();
        let failures: Vec<(&str, &str)> = batches.iter().flat_map(failures_of).collect();
        assert_eq!((documents, failures.len()), (403, 1), "{failures:?}");
        let mut empty = stream("e.enex", b"<en-export></en-export>".to_vec());
        assert!(matches!(empty.next(), Some(Err(ParseError::NoTextIn(_)))));
        assert!(empty.next().is_none());
        let mut broken = stream("b.enex", b"<en-export <<".to_vec());
        assert!(matches!(broken.next(), Some(Err(ParseError::Corrupt(ref why))) if why.contains("at byte")));
        // Broken inside its first note: the file fails as it does read whole.
        let first = b"<en-export><note><title>Kaputt</title><!-- never closed".to_vec();
        let whole = AutoParser
            .parse(&raw_for_test("first.enex", first.clone()))
            .unwrap_err();
        let streamed = stream("first.enex", first).next().unwrap().unwrap_err();
        assert!(matches!(streamed, ParseError::Corrupt(_)), "{streamed:?}");
        assert_eq!(streamed.to_string(), whole.to_string());
    }
}
