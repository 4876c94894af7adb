//! A Stack Exchange dump table read as a stream (past `--max-file-mb`, or compressed: a large
//! site's `Posts.xml`), a batch of rows at a time: the XML read by quick-xml from the file as
//! it is read (and inflated), its rows' documents made in parallel, a batch of 4,096 rows at a
//! time, as `stack_exchange.rs` makes them from a table read whole: the same documents, URIs
//! and failures. What it keeps as it goes is what later rows need: the questions' titles and
//! accepted answers (an answer is titled by its question's title, which the dump writes
//! before its answers), and the `Id`s seen (a repeated `Id` fails alone): about 100 bytes a
//! question and 10 a row; a row past [`super::long_runs::MAX_RUN_BYTES`] is cut there, a failed
//! item saying so. An answer written before its question (which the dump's order by
//! `Id` does not do) is titled `Answer to post <ParentId>`. XML damaged partway keeps the rows
//! before it.

use std::collections::HashSet;
use std::io::Read;

use quick_xml::events::Event;
use rayon::prelude::*;

use super::long_runs::{shrink_after_a_large_piece, xml_stream_reader, Cuts, XmlStreamReader};
use super::record_stream::batch_or_end;
use super::stack_exchange::{row_document, row_of, row_uri, Questions, Row, Table};
use super::xml::{broken_partway, Damage};
use super::{ParseError, Parsed};
use crate::source::RawDocument;

/// Rows a batch holds at most.
pub const BATCH_ROWS: usize = 4096;

pub struct StackExchangeStream {
    /// The file (its bytes empty): each document's URI, name, etag and source.
    file: RawDocument,
    reader: XmlStreamReader,
    cuts: Cuts,
    buffer: Vec<u8>,
    /// The table, once the root element is read.
    table: Option<Table>,
    depth: usize,
    /// Rows read so far.
    rows: usize,
    ids: HashSet<String>,
    questions: Questions,
    yielded: usize,
    done: bool,
}

impl StackExchangeStream {
    pub fn open(file: RawDocument, bytes: Box<dyn Read + Send>) -> Result<Self, ParseError> {
        let (reader, cuts) = xml_stream_reader(bytes, file.size, false)?;
        Ok(Self {
            file,
            reader,
            cuts,
            buffer: Vec::new(),
            table: None,
            depth: 0,
            rows: 0,
            ids: HashSet::new(),
            questions: Questions::default(),
            yielded: 0,
            done: false,
        })
    }

    /// The next batch of rows, and where the XML broke, if it did.
    fn read_batch(&mut self) -> Result<(Vec<Row>, Option<Damage>), ParseError> {
        let mut rows = Vec::new();
        while rows.len() < BATCH_ROWS {
            shrink_after_a_large_piece(&mut self.buffer);
            self.buffer.clear();
            let event = match self.reader.read_event_into(&mut self.buffer) {
                Ok(Event::Eof) => {
                    self.done = true;
                    break;
                }
                Ok(event) => event,
                Err(error) => {
                    self.done = true;
                    let at = self.reader.buffer_position();
                    if self.rows + rows.len() == 0 {
                        return Err(ParseError::Corrupt(format!("XML at byte {at}: {error}")));
                    }
                    return Ok((rows, Some((at, error.to_string()))));
                }
            };
            let is_row = |start: &quick_xml::events::BytesStart| start.local_name().as_ref() == b"row";
            match event {
                Event::Start(start) => {
                    if self.depth == 0 {
                        let root = String::from_utf8_lossy(start.local_name().as_ref()).into_owned();
                        self.table = Table::of_root(&root);
                    } else if self.depth == 1 && is_row(&start) {
                        rows.push(row_of(&start));
                    }
                    self.depth += 1;
                }
                Event::Empty(start) if self.depth == 1 && is_row(&start) => rows.push(row_of(&start)),
                Event::End(_) => self.depth = self.depth.saturating_sub(1),
                _ => {}
            }
        }
        Ok((rows, None))
    }
}

impl Iterator for StackExchangeStream {
    type Item = Result<Parsed, ParseError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            let (rows, damage) = match self.read_batch() {
                Ok(read) => read,
                Err(e) => return Some(Err(e)),
            };
            let Some(table) = self.table else {
                self.done = true;
                return Some(Err(ParseError::Corrupt(
                    "not a Stack Exchange table (its root element is not <posts>, <comments> or <users>)".into(),
                )));
            };
            // In the table's order: each row's URI (a repeated Id fails) and, for the rows
            // after it, a question's title; then the documents in parallel.
            let mut parsed = Parsed::default();
            let mut named = Vec::with_capacity(rows.len());
            for row in rows {
                match row_uri(&self.file, table, &row, self.rows, &mut self.ids) {
                    Ok(uri) => {
                        if table == Table::Posts {
                            self.questions.add(&row);
                        }
                        named.push((uri, row));
                    }
                    Err(failure) => parsed.failures.push(failure),
                }
                self.rows += 1;
            }
            let (file, questions) = (&self.file, &self.questions);
            let documents: Vec<_> = named
                .into_par_iter()
                .map(|(uri, row)| row_document(file, table, &row, uri, questions))
                .collect();
            parsed.documents.extend(documents.into_iter().flatten());
            if let Some(damage) = damage {
                parsed
                    .failures
                    .push(broken_partway(&self.file, damage, "the XML", "rows"));
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
    use crate::parse::compressed::fixtures::gzip;
    use crate::parse::record_stream::assert_same_documents;
    use crate::parse::{failures_of, raw_for_test, AutoParser, Parser};

    fn stream(name: &str, bytes: Vec<u8>) -> StackExchangeStream {
        StackExchangeStream::open(raw_for_test(name, Vec::new()), Box::new(std::io::Cursor::new(bytes))).unwrap()
    }

    /// 3,000 questions, each followed by two answers (the second accepted), a repeated Id,
    /// and a row without one.
    fn posts() -> String {
        let mut xml = String::from("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<posts>\n");
        for q in 0..3000 {
            let id = q * 3 + 1;
            xml.push_str(&format!(
                "  <row Id=\"{id}\" PostTypeId=\"1\" AcceptedAnswerId=\"{}\" Score=\"{q}\" Title=\"Question {q}?\" \
                 Body=\"&lt;p&gt;Asking {q}.&lt;/p&gt;\" Tags=\"&lt;t{}&gt;\" CreationDate=\"2015-01-27T20:09:32.720\" />\n",
                id + 2,
                q % 7
            ));
            for a in 1..=2 {
                xml.push_str(&format!(
                    "  <row Id=\"{}\" PostTypeId=\"2\" ParentId=\"{id}\" Body=\"&lt;p&gt;Answer {a} to {q}.&lt;/p&gt;\" />\n",
                    id + a
                ));
            }
        }
        xml.push_str("  <row Id=\"5\" PostTypeId=\"2\" ParentId=\"1\" Body=\"&lt;p&gt;A copy.&lt;/p&gt;\" />\n");
        xml.push_str("  <row PostTypeId=\"1\" Title=\"No id\" Body=\"&lt;p&gt;Still read.&lt;/p&gt;\" />\n</posts>\n");
        xml
    }

    #[test]
    fn rows_read_as_a_stream_are_the_documents_of_the_table_read_whole() {
        let xml = posts();
        let whole = AutoParser.parse(&raw_for_test("Posts.xml", xml.clone())).unwrap();
        assert_eq!(whole.documents.len(), 9001);
        for bytes in [xml.clone().into_bytes(), gzip(xml.as_bytes())] {
            let batches: Vec<Parsed> = stream("Posts.xml", bytes).map(Result::unwrap).collect();
            assert_eq!(batches.len(), 3);
            let documents: Vec<_> = batches.iter().flat_map(|b| &b.documents).collect();
            assert_same_documents(&documents, &whole.documents);
            // An answer in a later batch than its question (the first batch's last row, post
            // 4096) is titled by it.
            let answer = documents.iter().find(|d| d.uri.ends_with("#post=4098")).unwrap();
            assert_eq!(answer.title, "Question 1365?");
            assert_eq!(answer.metadata.get("accepted"), Some(&serde_json::Value::Bool(true)));
            let failures: Vec<(&str, &str)> = batches.iter().flat_map(failures_of).collect();
            assert_eq!(failures, failures_of(&whole));
            assert_eq!(failures.len(), 1);
            assert!(documents.last().unwrap().uri.ends_with("#row=9002"));
        }
    }

    #[test]
    fn damage_partway_keeps_the_rows_before_it() {
        let xml = posts();
        let at = xml.find("<row Id=\"6001\"").unwrap();
        let xml = format!("{}<row Id=\"6001\" Title=\"unclosed", &xml[..at]);
        let batches: Vec<Parsed> = stream("cut.xml", xml.into_bytes()).map(Result::unwrap).collect();
        let documents: usize = batches.iter().map(|b| b.documents.len()).sum();
        assert_eq!(documents, 6000);
        let failures: Vec<(&str, &str)> = batches.iter().flat_map(failures_of).collect();
        assert_eq!(failures.len(), 1, "{failures:?}");
        assert!(failures[0].0.starts_with("memory://test/cut.xml#byte="), "{failures:?}");
        let mut empty = stream("e.xml", b"<posts>\n</posts>".to_vec());
        assert!(matches!(empty.next(), Some(Err(ParseError::NoText))));
        let mut broken = stream("b.xml", b"<posts <<".to_vec());
        assert!(matches!(broken.next(), Some(Err(ParseError::Corrupt(_)))));
    }

    #[test]
    fn a_row_longer_than_a_piece_may_be_is_cut_and_the_rows_after_it_read() {
        use std::io::Read;
        // 300 MiB of one attribute, read from no memory of that size: the row's Body is cut
        // at 256 MiB, its Title and the next rows are read, the cut is a failed item.
        let head = "<posts>\n<row Id=\"1\" PostTypeId=\"1\" Title=\"Huge\" Body=\"";
        let tail = "\" />\n<row Id=\"2\" PostTypeId=\"2\" ParentId=\"1\" Body=\"Small.\" />\n</posts>\n";
        let bytes = std::io::Cursor::new(head.as_bytes())
            .chain(std::io::repeat(b'w').take(300 << 20))
            .chain(std::io::Cursor::new(tail.as_bytes()));
        let file = raw_for_test("Posts.xml", Vec::new());
        let batches: Vec<Parsed> = StackExchangeStream::open(file, Box::new(bytes))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let documents: Vec<_> = batches.iter().flat_map(|b| &b.documents).collect();
        let titles: Vec<&str> = documents.iter().map(|d| d.title.as_str()).collect();
        assert_eq!(titles, ["Huge", "Huge"]);
        let failures: Vec<(&str, &str)> = batches.iter().flat_map(failures_of).collect();
        // The tag's bytes are counted from after its `<`.
        let cut_at = format!(
            "memory://test/Posts.xml#byte={}",
            head.find("<row").unwrap() + 1 + (256 << 20)
        );
        assert_eq!(failures.len(), 1, "{failures:?}");
        assert_eq!(failures[0].0, cut_at);
        assert!(failures[0].1.contains("more than 256 MiB in one piece"), "{failures:?}");
    }
}
