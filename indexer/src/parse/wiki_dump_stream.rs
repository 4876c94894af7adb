//! A MediaWiki dump read as a stream (past `--max-file-mb`, or compressed: Wikipedia's
//! `pages-articles.xml.bz2` and its parts), a batch of pages at a time: the XML read by
//! quick-xml from the file as it is read (and inflated), each page ended handed on, the
//! pages of a batch read in parallel as `wiki_dump.rs` reads a dump read whole, with the same
//! documents, URIs and failures. Its memory is a batch's pages, not the dump (a page's text
//! past [`super::long_runs::MAX_RUN_BYTES`] is cut there, a failed item saying so). A dump must be
//! UTF-8 (MediaWiki writes them so); XML damaged partway keeps the pages before it.

use std::io::Read;

use rayon::prelude::*;

use super::long_runs::{shrink_after_a_large_piece, xml_stream_reader, Cuts, XmlStreamReader};
use super::record_stream::batch_or_end;
use super::wiki_dump::{no_page, page_document, DumpReading, Page};
use super::wikitext_markup::LinkNames;
use super::xml::{broken_partway, Damage};
use super::{ParseError, Parsed};
use crate::source::RawDocument;

/// Pages a batch holds at most...
pub const BATCH_PAGES: usize = 512;
/// ...and bytes of their wikitext.
pub const BATCH_BYTES: usize = 16 << 20;

pub struct WikiDumpStream {
    /// The file (its bytes empty): each document's URI, name, etag and source.
    file: RawDocument,
    reader: XmlStreamReader,
    cuts: Cuts,
    buffer: Vec<u8>,
    reading: DumpReading,
    /// The wiki's names for files and categories, once its site information is read.
    names: Option<LinkNames>,
    /// Documents and failures yielded so far.
    yielded: usize,
    done: bool,
}

impl WikiDumpStream {
    pub fn open(file: RawDocument, bytes: Box<dyn Read + Send>) -> Result<Self, ParseError> {
        let (reader, cuts) = xml_stream_reader(bytes, file.size, true)?;
        Ok(Self {
            file,
            reader,
            cuts,
            buffer: Vec::new(),
            reading: DumpReading::default(),
            names: None,
            yielded: 0,
            done: false,
        })
    }

    /// The next batch of pages ended, and where the XML broke, if it did.
    fn read_batch(&mut self) -> Result<(Vec<Page>, Option<Damage>), ParseError> {
        let (mut pages, mut bytes) = (Vec::new(), 0);
        while pages.len() < BATCH_PAGES && bytes < BATCH_BYTES {
            shrink_after_a_large_piece(&mut self.buffer);
            self.buffer.clear();
            match self.reader.read_event_into(&mut self.buffer) {
                Ok(quick_xml::events::Event::Eof) => {
                    self.done = true;
                    break;
                }
                Ok(event) => {
                    if let Some(page) = self.reading.take(event) {
                        bytes += page.text.len();
                        pages.push(page);
                    }
                }
                Err(error) => {
                    self.done = true;
                    let at = self.reader.buffer_position();
                    if self.reading.pages_seen == 0 {
                        return Err(ParseError::Corrupt(format!(
                            "MediaWiki dump: XML at byte {at}: {error}"
                        )));
                    }
                    return Ok((pages, Some((at, error.to_string()))));
                }
            }
        }
        Ok((pages, None))
    }
}

impl Iterator for WikiDumpStream {
    type Item = Result<Parsed, ParseError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            let (pages, damage) = match self.read_batch() {
                Ok(read) => read,
                Err(e) => return Some(Err(e)),
            };
            if self.done && self.reading.pages_seen == 0 {
                return Some(Err(no_page()));
            }
            let site = &self.reading.site;
            // The site's information comes before the first page.
            let names = self.names.get_or_insert_with(|| site.link_names());
            let read: Vec<Parsed> = pages
                .into_par_iter()
                .map(|page| page_document(&self.file, site, names, page))
                .collect();
            let mut parsed: Parsed = read.into_iter().collect();
            if let Some(damage) = damage {
                let failure = broken_partway(&self.file, damage, "the dump's XML", "pages");
                parsed.failures.push(failure);
            }
            parsed.failures.extend(self.cuts.take_failures(&self.file));
            // A file of rows or pages none of which shows text fails as read whole.
            if let Some(item) = batch_or_end(parsed, &mut self.yielded, self.done, || ParseError::NoText) {
                return Some(item);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::compressed::fixtures::bzip2;
    use crate::parse::record_stream::assert_same_documents;
    use crate::parse::wiki_dump::tests::{dump, page};
    use crate::parse::{failures_of, raw_for_test, AutoParser, Parser};

    fn stream(name: &str, bytes: Vec<u8>) -> WikiDumpStream {
        WikiDumpStream::open(raw_for_test(name, Vec::new()), Box::new(std::io::Cursor::new(bytes))).unwrap()
    }

    fn pages(n: u32) -> String {
        (1..=n)
            .map(|id| match id % 4 {
                0 => page(id, &format!("Vorlage:T{id}"), 10, "", "template"),
                1 => page(
                    id,
                    &format!("Weiterleitung {id}"),
                    0,
                    "<redirect title=\"Ziel\" />",
                    "#REDIRECT [[Ziel]]",
                ),
                _ => page(
                    id,
                    &format!("Seite {id}"),
                    0,
                    "",
                    &format!("Text der Seite {id}. [[Kategorie:Nummer {id}]]"),
                ),
            })
            .collect()
    }

    #[test]
    fn pages_read_as_a_stream_are_the_documents_of_the_dump_read_whole() {
        let xml = dump(&pages(1200));
        let whole = AutoParser.parse(&raw_for_test("de.xml", xml.clone())).unwrap();
        assert_eq!(whole.documents.len(), 600);
        for bytes in [xml.clone().into_bytes(), bzip2(xml.as_bytes())] {
            let batches: Vec<Parsed> = stream("de.xml", bytes).map(Result::unwrap).collect();
            // 600 pages read, in batches of 512.
            assert_eq!(batches.len(), 2);
            let documents: Vec<_> = batches.iter().flat_map(|b| &b.documents).collect();
            assert_same_documents(&documents, &whole.documents);
            assert_eq!(documents[0].uri, "memory://test/de.xml#page=2");
            assert_eq!(documents[0].tags, ["Nummer 2"]);
            assert_eq!(
                documents[0].metadata.get("url").and_then(|u| u.as_str()),
                Some("https://de.wikipedia.org/wiki/Seite_2")
            );
        }
    }

    #[test]
    fn damage_partway_keeps_the_pages_before_it_and_a_dump_of_no_page_fails() {
        // 700 pages, 350 read; the 601st page's XML broken.
        let lines: Vec<String> = pages(700).lines().map(str::to_string).collect();
        let broken = lines[..600].concat() + "<page><title>Kaputt</title></mismatch>" + &lines[601..].concat();
        let xml = dump(&broken);
        let batches: Vec<Parsed> = stream("cut.xml", xml.into_bytes()).map(Result::unwrap).collect();
        let documents: usize = batches.iter().map(|b| b.documents.len()).sum();
        assert_eq!(documents, 300);
        let failures: Vec<(&str, &str)> = batches.iter().flat_map(failures_of).collect();
        assert_eq!(failures.len(), 1, "{failures:?}");
        assert!(failures[0].0.starts_with("memory://test/cut.xml#byte="), "{failures:?}");
        assert!(
            failures[0].1.contains("the dump's XML cannot be read on"),
            "{failures:?}"
        );
        let mut empty = stream("e.xml", dump("").into_bytes());
        assert!(matches!(empty.next(), Some(Err(ParseError::Corrupt(ref why))) if why.contains("no <page>")));
        let mut redirects = stream("r.xml", dump(&pages(1)).into_bytes());
        assert!(matches!(redirects.next(), Some(Err(ParseError::NoText))));
        assert!(redirects.next().is_none());
        let mut broken = stream("b.xml", b"<mediawiki><siteinfo></x>".to_vec());
        assert!(matches!(broken.next(), Some(Err(ParseError::Corrupt(ref why))) if why.contains("at byte")));
    }
}
