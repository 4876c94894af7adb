//! Evernote exports (`.enex`, or any XML whose root is `<en-export>`; what Evernote, and the
//! tools that move notes out of Apple Notes, OneNote and others, write): one document per note,
//! named `<file>#note=<when it was created>` (`20130730T205204Z`; a second note created in the
//! same second `...-2`; `#note=<its place>` where it says no time), so a note keeps its name
//! whatever is exported around it.
//!
//! A note's document: its title first, then the text its content (ENML, XHTML in a CDATA
//! section) shows, read without a parser as feeds' HTML is; encrypted text (`<en-crypt>`) left
//! out. Metadata: `date` (created) and `updated` (RFC 3339), `authors` (its `author`
//! attribute), `url` (its `source-url`); its tags are its tags. Its attached files
//! (`<resource>`: a PDF, a Word file; base64 in the export) are decoded and parsed as their
//! formats by the run's parser (so a worker's limits hold for each), their text read into the
//! note under the file's name; a picture (or a scan with no text of its own) is read by the words
//! Evernote recognized in it (`<recognition>`), other files that are no document are left out, an
//! attachment that fails is the note's failed item. Notes are read in parallel. XML that breaks
//! partway keeps the notes before it.

use std::collections::HashMap;

use base64::Engine;
use bytes::Bytes;
use quick_xml::events::Event;
use rayon::prelude::*;

use super::html_text::html_blocks;
use super::message_body::Attachment;
use super::ooxml::local_name;
use super::text::collapse_whitespace;
use super::xml::{broken_partway, lenient_reader, next_event, text_of, Damage};
use super::{Block, Document, ItemFailure, ParseError, Parsed, Parser};
use crate::source::RawDocument;

/// A note's field a text element fills.
#[derive(Clone, Copy, PartialEq)]
enum Field {
    Title,
    Content,
    Created,
    Updated,
    Tag,
    Author,
    SourceUrl,
    /// An attached file's base64 data, its type, its name.
    Data,
    Mime,
    FileName,
    /// The words Evernote recognized in it (a picture's, a scan's).
    Recognition,
}

fn field_of(name: &[u8], in_resource: bool) -> Option<Field> {
    Some(match (name, in_resource) {
        (b"title", false) => Field::Title,
        (b"content", false) => Field::Content,
        (b"created", false) => Field::Created,
        (b"updated", false) => Field::Updated,
        (b"tag", false) => Field::Tag,
        (b"author", false) => Field::Author,
        (b"source-url", false) => Field::SourceUrl,
        (b"data", true) => Field::Data,
        (b"mime", true) => Field::Mime,
        (b"file-name", true) => Field::FileName,
        (b"recognition", true) => Field::Recognition,
        _ => return None,
    })
}

/// A file attached to a note.
#[derive(Default)]
struct Resource {
    data: String,
    mime: String,
    file_name: String,
    recognition: String,
}

/// A note as read.
#[derive(Default)]
pub(super) struct Note {
    title: String,
    content: String,
    created: String,
    updated: String,
    tags: Vec<String>,
    author: String,
    source_url: String,
    resources: Vec<Resource>,
}

impl Note {
    /// Bytes of text it holds (its content, its attachments' base64), roughly.
    pub(super) fn size(&self) -> usize {
        self.content.len()
            + self
                .resources
                .iter()
                .map(|r| r.data.len() + r.recognition.len())
                .sum::<usize>()
    }
}

pub(super) fn parse(raw: &RawDocument, xml: &str, members: &dyn Parser) -> Result<Parsed, ParseError> {
    let (notes, damage) = read_notes(xml)?;
    let mut names = NoteNames::default();
    let named = notes.into_iter().map(|note| names.named(raw, note)).collect();
    let mut parsed = note_documents(raw, named, members);
    if let Some(damage) = damage {
        parsed
            .failures
            .push(broken_partway(raw, damage, "the export's XML", "notes"));
    }
    if parsed.documents.is_empty() && parsed.failures.is_empty() {
        return Err(no_notes());
    }
    Ok(parsed)
}

pub(super) fn no_notes() -> ParseError {
    ParseError::NoTextIn("an Evernote export with no notes".into())
}

/// The names notes are given, in the export's order: `<file>#note=<created>` (a second note of
/// the same second `...-2`), `#note=<its place>` where it says no time.
#[derive(Default)]
pub(super) struct NoteNames {
    taken: HashMap<String, usize>,
    place: usize,
}

impl NoteNames {
    pub(super) fn named(&mut self, raw: &RawDocument, note: Note) -> (Note, String) {
        self.place += 1;
        let key = match note.created.trim() {
            "" => self.place.to_string(),
            created => {
                let times = self.taken.entry(created.to_string()).or_default();
                *times += 1;
                match *times {
                    1 => created.to_string(),
                    n => format!("{created}-{n}"),
                }
            }
        };
        (note, format!("{}#note={key}", raw.uri))
    }
}

/// Named notes' documents, made in parallel (their attachments parsed at once, as a mailbox's
/// messages are), in their order.
pub(super) fn note_documents(raw: &RawDocument, named: Vec<(Note, String)>, members: &dyn Parser) -> Parsed {
    let read: Vec<Parsed> = named
        .into_par_iter()
        .map(|(note, uri)| note_document(raw, note, uri, members))
        .collect();
    let mut parsed = Parsed::default();
    read.into_iter().for_each(|one| parsed.append(one));
    parsed
}

/// An export's notes read from its XML's events, one at a time.
#[derive(Default)]
pub(super) struct NoteReading {
    note: Option<Note>,
    resource: Option<Resource>,
    field: Option<(Field, String)>,
    /// Open `<task>`s (a note's tasks, whose titles are no note's).
    in_task: usize,
    /// Notes ended so far.
    pub(super) notes_read: usize,
}

impl NoteReading {
    /// The note `event` ends, if it ends one.
    pub(super) fn take(&mut self, event: Event) -> Option<Note> {
        match event {
            Event::Start(start) => {
                let qualified = start.name();
                let name = local_name(qualified.as_ref());
                match name {
                    b"note" => self.note = Some(Note::default()),
                    b"resource" if self.note.is_some() => self.resource = Some(Resource::default()),
                    b"task" => self.in_task += 1,
                    _ if self.note.is_some() && self.field.is_none() && self.in_task == 0 => {
                        self.field = field_of(name, self.resource.is_some()).map(|f| (f, String::new()))
                    }
                    _ => {}
                }
            }
            Event::Text(text) => {
                if let Some((_, value)) = self.field.as_mut() {
                    value.push_str(&text_of(&text));
                }
            }
            Event::CData(data) => {
                if let Some((_, value)) = self.field.as_mut() {
                    value.push_str(&String::from_utf8_lossy(&data));
                }
            }
            Event::End(end) => {
                let qualified = end.name();
                let name = local_name(qualified.as_ref());
                match name {
                    b"note" => {
                        let ended = self.note.take();
                        self.notes_read += ended.is_some() as usize;
                        return ended;
                    }
                    b"task" => self.in_task = self.in_task.saturating_sub(1),
                    b"resource" => {
                        if let (Some(open), Some(done)) = (self.note.as_mut(), self.resource.take()) {
                            open.resources.push(done);
                        }
                    }
                    _ => {
                        let in_resource = self.resource.is_some();
                        let ends_field = self
                            .field
                            .as_ref()
                            .is_some_and(|(f, _)| field_of(name, in_resource) == Some(*f));
                        if let (true, Some((f, value)), Some(open)) =
                            (ends_field, self.field.take(), self.note.as_mut())
                        {
                            fill(open, self.resource.as_mut(), f, value);
                        }
                    }
                }
            }
            _ => {}
        }
        None
    }

    /// Whether a note is open.
    pub(super) fn in_a_note(&self) -> bool {
        self.note.is_some()
    }

    /// The note the XML broke inside, as far as it was read, where it has a title or content.
    pub(super) fn unfinished(&mut self) -> Option<Note> {
        self.note
            .take()
            .filter(|n| !n.title.is_empty() || !n.content.is_empty())
    }
}

/// The export's notes, and where its XML broke if it did.
fn read_notes(xml: &str) -> Result<(Vec<Note>, Option<Damage>), ParseError> {
    let mut reader = lenient_reader(xml);
    let mut reading = NoteReading::default();
    let mut notes: Vec<Note> = Vec::new();
    let mut damage: Option<Damage> = None;
    while let Some(event) = next_event(&mut reader, "the Evernote export", !notes.is_empty(), &mut damage)? {
        notes.extend(reading.take(event));
    }
    // XML that breaks after its last note (at the export's end tag) loses nothing.
    let in_a_note = reading.in_a_note();
    let damage =
        damage.filter(|(at, _)| in_a_note || xml.get(*at as usize..).is_some_and(|rest| rest.contains("<note")));
    // A note the XML broke inside is kept as far as it was read.
    notes.extend(reading.unfinished());
    Ok((notes, damage))
}

fn fill(note: &mut Note, resource: Option<&mut Resource>, field: Field, value: String) {
    let text = || collapse_whitespace(&value);
    match (field, resource) {
        (Field::Title, _) => note.title = text(),
        (Field::Content, _) => note.content = value,
        (Field::Created, _) => note.created = text(),
        (Field::Updated, _) => note.updated = text(),
        (Field::Tag, _) => {
            let tag = text();
            if !tag.is_empty() && !note.tags.contains(&tag) {
                note.tags.push(tag);
            }
        }
        (Field::Author, _) => note.author = text(),
        (Field::SourceUrl, _) => note.source_url = text(),
        (Field::Data, Some(resource)) => resource.data = value,
        (Field::Mime, Some(resource)) => resource.mime = text(),
        (Field::FileName, Some(resource)) => resource.file_name = text(),
        (Field::Recognition, Some(resource)) => resource.recognition = value,
        _ => {}
    }
}

/// Evernote's time (`20130730T205204Z`) in RFC 3339 (`2013-07-30T20:52:04Z`); none where it
/// is no such time (`10101T000000Z`).
fn rfc3339(time: &str) -> Option<String> {
    let time = chrono::NaiveDateTime::parse_from_str(time, "%Y%m%dT%H%M%SZ").ok()?;
    Some(time.and_utc().to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
}

/// A note's document (its title, its content's text, its attachments' text), and the
/// attachments that failed.
fn note_document(raw: &RawDocument, note: Note, uri: String, members: &dyn Parser) -> Parsed {
    let mut blocks = Vec::new();
    if !note.title.is_empty() {
        blocks.push(Block::text(note.title.clone(), &[]));
    }
    blocks.extend(html_blocks(&without_encrypted(&note.content)));
    let mut failures = Vec::new();
    for (place, resource) in note.resources.iter().enumerate() {
        attached_blocks(raw, &uri, resource, place, members, &mut blocks, &mut failures);
    }
    let content = format!("{}\n{}\n{}", note.title, note.created, note.content);
    let title = match note.title.is_empty() {
        true => Document::stem_of(raw),
        false => note.title.clone(),
    };
    let mut documents = Vec::new();
    if blocks.iter().any(|b| !b.text.trim().is_empty()) {
        let mut document = Document::from_part(raw, uri, content.as_bytes(), title, blocks);
        document.tags = note.tags;
        let metadata = &mut document.metadata;
        for (key, value) in [("date", &note.created), ("updated", &note.updated)] {
            if let Some(time) = rfc3339(value) {
                metadata.insert(key.into(), time.into());
            }
        }
        if !note.author.is_empty() {
            metadata.insert("authors".into(), vec![note.author].into());
        }
        if !note.source_url.is_empty() {
            metadata.insert("url".into(), note.source_url.into());
        }
        documents.push(document);
    }
    Parsed { documents, failures }
}

/// ENML with its encrypted parts (`<en-crypt>...</en-crypt>`: base64 of ciphertext) taken out.
fn without_encrypted(enml: &str) -> String {
    let lower = enml.to_ascii_lowercase();
    let mut kept = String::with_capacity(enml.len());
    let mut at = 0;
    while let Some(open) = lower[at..].find("<en-crypt").map(|o| at + o) {
        kept.push_str(&enml[at..open]);
        at = lower[open..]
            .find("</en-crypt>")
            .map_or(enml.len(), |end| open + end + "</en-crypt>".len());
    }
    kept.push_str(&enml[at..]);
    kept
}

/// A note's attached file decoded and parsed by `members`: its text read into the note under
/// its name; a file that is no document (a picture) left out; one that fails, a failed item.
fn attached_blocks(
    raw: &RawDocument,
    note_uri: &str,
    resource: &Resource,
    place: usize,
    members: &dyn Parser,
    blocks: &mut Vec<Block>,
    failures: &mut Vec<ItemFailure>,
) {
    let name = match resource.file_name.is_empty() {
        false => resource.file_name.clone(),
        true => format!("unnamed-{}{}", place + 1, extension_of(&resource.mime)),
    };
    let recognized = || {
        let words = recognized_words(&resource.recognition);
        (!words.is_empty()).then(|| Block::text(words, std::slice::from_ref(&name)))
    };
    // Pictures, recordings and films are no document: a picture's words are those Evernote
    // recognized in it.
    let media = ["image/", "audio/", "video/"]
        .iter()
        .any(|m| resource.mime.to_ascii_lowercase().starts_with(m));
    if media {
        blocks.extend(recognized());
        return;
    }
    let uri = format!("{note_uri}/attachment={name}");
    let encoded: Vec<u8> = resource.data.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    let bytes = match base64::engine::general_purpose::STANDARD.decode(&encoded) {
        Ok(bytes) if !bytes.is_empty() => bytes,
        Ok(_) => return,
        Err(error) => {
            failures.push(ItemFailure {
                uri,
                reason: format!("attachment {name}: its base64 data cannot be decoded ({error})"),
            });
            return;
        }
    };
    let attachment = Attachment {
        uri,
        name: &name,
        bytes: Bytes::from(bytes),
        content_type: (!resource.mime.is_empty()).then(|| resource.mime.clone()),
    };
    let (mut read, mut failed) = (Vec::new(), Vec::new());
    attachment.read_into(raw, members, &[], &mut read, &mut failed);
    // A file with no text of its own (a scanned PDF) is read by the words Evernote recognized.
    match recognized().filter(|_| read.is_empty()) {
        Some(words) => blocks.push(words),
        None => {
            blocks.extend(read);
            failures.extend(failed);
        }
    }
}

/// The words of Evernote's recognition index (`<recoIndex><item ...><t w="87">word</t><t
/// w="50">other guess</t></item>...`): each item's first guess (its likeliest), in the index's
/// order (lines, top to bottom), apart by spaces.
fn recognized_words(index: &str) -> String {
    let mut reader = lenient_reader(index);
    let mut words: Vec<String> = Vec::new();
    // Whether the item being read has its word, and whether a guess is being read.
    let (mut has_word, mut in_guess) = (false, false);
    while let Ok(event) = reader.read_event() {
        match event {
            Event::Start(start) => match local_name(start.name().as_ref()) {
                b"item" => has_word = false,
                b"t" if !has_word => {
                    in_guess = true;
                    has_word = true;
                    words.push(String::new());
                }
                _ => {}
            },
            Event::Text(text) if in_guess => {
                if let Some(word) = words.last_mut() {
                    word.push_str(&text_of(&text));
                }
            }
            Event::End(end) if local_name(end.name().as_ref()) == b"t" => in_guess = false,
            Event::Eof => break,
            _ => {}
        }
    }
    collapse_whitespace(&words.join(" "))
}

/// The extension a file of a MIME type is known by, for an attachment without a name.
fn extension_of(mime: &str) -> &'static str {
    match mime.trim().to_ascii_lowercase().as_str() {
        "application/pdf" => ".pdf",
        "image/png" => ".png",
        "image/jpeg" => ".jpg",
        "image/gif" => ".gif",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document" => ".docx",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet" => ".xlsx",
        "application/vnd.openxmlformats-officedocument.presentationml.presentation" => ".pptx",
        "application/msword" => ".doc",
        "text/plain" => ".txt",
        "text/html" => ".html",
        "text/markdown" => ".md",
        "text/csv" => ".csv",
        "message/rfc822" => ".eml",
        _ => "",
    }
}

#[cfg(test)]
pub(super) mod tests {
    use base64::Engine;

    use crate::parse::{failures_of, raw_for_test, AutoParser, Parser};

    fn encoded(bytes: &[u8]) -> String {
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    /// An export of three notes: a note with tags, an author, a checklist, an encrypted part
    /// and five attachments (one that does not decode); two without attachments.
    pub(in crate::parse) fn export() -> String {
        let png = encoded(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0");
        let minutes = encoded("Minutes of the harbour board.\n\nThe dredger is late.".as_bytes());
        let not_a_pdf = encoded(b"%PDF-1.4 scanned, no text");
        let svg = encoded(br#"<svg xmlns="http://www.w3.org/2000/svg"><path d="m481 488"/><text>Logo</text></svg>"#);
        format!(
            r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE en-export SYSTEM "http://xml.evernote.com/pub/evernote-export4.dtd">
<en-export export-date="20260101T120000Z" application="Evernote" version="10.0">
<note><title>Harbour board</title><created>20130730T205204Z</created><updated>20130801T080000Z</updated>
<tag>harbour</tag><tag>board</tag>
<note-attributes><author>Ada Lovelace</author><source-url>https://harbour.example/board</source-url></note-attributes>
<content><![CDATA[<?xml version="1.0" encoding="UTF-8"?><!DOCTYPE en-note SYSTEM "http://xml.evernote.com/pub/enml2.dtd"><en-note><div>Agenda for <b>May</b>:</div><ul><li><en-todo checked="true"/>Tide tables</li><li>Quay repairs &amp; costs</li></ul><div><en-crypt hint="pin" cipher="AES">U2FsdGVkX1+secret</en-crypt></div><en-media hash="4f2a" type="image/png"/></en-note>]]></content>
<task><title>Call the dredger</title></task>
<resource><data encoding="base64">{png}</data><mime>image/png</mime><recognition><![CDATA[<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE recoIndex PUBLIC "SYSTEM" "http://xml.evernote.com/pub/recoIndex.dtd"><recoIndex docType="unknown" objType="image" lang="en"><item x="9" y="3" w="103" h="19"><t w="65">Harbour</t><t w="18">Harb0ur</t></item><item x="120" y="3" w="41" h="19"><t w="88">pass</t></item></recoIndex>]]></recognition></resource>
<resource><data encoding="base64">{not_a_pdf}</data><mime>application/pdf</mime><resource-attributes><file-name>scan.pdf</file-name></resource-attributes><recognition><![CDATA[<recoIndex><item><t w="70">Receipt</t></item><item><t w="60">42.00</t><t w="10">4200</t></item></recoIndex>]]></recognition></resource>
<resource><data encoding="base64">
{minutes}
</data><mime>text/plain</mime><resource-attributes><file-name>minutes.txt</file-name></resource-attributes></resource>
<resource><data encoding="base64">not base64 at all!</data><mime>application/pdf</mime></resource>
<resource><data encoding="base64">{svg}</data><mime>image/svg+xml</mime></resource>
</note>
<note><title>Same second</title><created>20130730T205204Z</created><content><![CDATA[<en-note>Another note.</en-note>]]></content></note>
<note><title>Undated</title><updated>10101T000000Z</updated><content><![CDATA[<en-note><p>Kept all the same.</p><h2>Depths</h2><table><tr><th>Berth</th><th>Depth</th></tr><tr><td>A</td><td>12 m</td></tr></table></en-note>]]></content></note>
</en-export>"#
        )
    }

    #[test]
    fn each_note_is_a_document_with_its_attachments_text_and_recognized_words_and_secrets_left_out() {
        let parsed = AutoParser.parse(&raw_for_test("notes.enex", export())).unwrap();
        let uris: Vec<&str> = parsed.documents.iter().map(|d| d.uri.as_str()).collect();
        assert_eq!(
            uris,
            [
                "memory://test/notes.enex#note=20130730T205204Z",
                "memory://test/notes.enex#note=20130730T205204Z-2",
                "memory://test/notes.enex#note=3",
            ]
        );
        let board = &parsed.documents[0];
        assert_eq!(board.title, "Harbour board");
        assert_eq!(board.tags, ["harbour", "board"]);
        assert_eq!(board.metadata["date"], "2013-07-30T20:52:04Z");
        assert_eq!(board.metadata["updated"], "2013-08-01T08:00:00Z");
        assert_eq!(board.metadata["authors"], serde_json::json!(["Ada Lovelace"]));
        assert_eq!(board.metadata["url"], "https://harbour.example/board");
        let blocks: Vec<(&str, Vec<&str>)> = board
            .blocks
            .iter()
            .map(|b| (b.text.as_str(), b.heading_path.iter().map(String::as_str).collect()))
            .collect();
        assert_eq!(
            blocks,
            [
                ("Harbour board", vec![]),
                ("Agenda for May:", vec![]),
                ("Tide tables", vec![]),
                ("Quay repairs & costs", vec![]),
                // A picture's words as Evernote recognized them, each its likeliest guess.
                ("Harbour pass", vec!["unnamed-1.png"]),
                // A file that reads as nothing, by the words recognized in it, failing nothing.
                ("Receipt 42.00", vec!["scan.pdf"]),
                (
                    "Minutes of the harbour board.\n\nThe dredger is late.",
                    vec!["minutes.txt"]
                ),
            ]
        );
        assert_eq!(
            failures_of(&parsed),
            [(
                "memory://test/notes.enex#note=20130730T205204Z/attachment=unnamed-4.pdf",
                "attachment unnamed-4.pdf: its base64 data cannot be decoded (Invalid symbol 33, offset 14.)"
            )]
        );
        // A note's headings head what follows them; its tables are read a row a block.
        let undated = &parsed.documents[2].blocks;
        let shown: Vec<_> = undated
            .iter()
            .map(|b| (b.text.as_str(), b.heading_path.join(" > "), b.header.as_deref()))
            .collect();
        assert_eq!(
            shown,
            [
                ("Undated", String::new(), None),
                ("Kept all the same.", String::new(), None),
                ("Depths", "Depths".into(), None),
                ("A | 12 m", "Depths".into(), Some("Berth | Depth")),
            ]
        );
        assert_eq!(undated[3].kind, crate::parse::ContentType::Table);
        // A time that is none is left out.
        assert!(!parsed.documents[2].metadata.contains_key("updated"));
    }

    #[test]
    fn an_export_broken_partway_keeps_the_notes_before_and_one_with_no_notes_fails() {
        let broken = export().replace(
            "<note><title>Undated</title>",
            "<note><title>Undated</title><!-- never closed",
        );
        let parsed = AutoParser.parse(&raw_for_test("notes.enex", broken)).unwrap();
        assert_eq!(parsed.documents.len(), 3);
        let (uri, reason) = failures_of(&parsed).pop().unwrap();
        assert!(uri.starts_with("memory://test/notes.enex#byte="), "{uri}");
        assert!(
            reason.contains("the export's XML cannot be read on")
                && reason.ends_with("the notes after it were not read")
        );
        // Broken at the end tag, after the last note (as Evernote 10 writes a note whose content
        // holds a CDATA section): nothing is lost, nothing fails.
        let at_the_end = export().replace("</en-export>", "</en-export></en-export>");
        let parsed = AutoParser.parse(&raw_for_test("notes.enex", at_the_end)).unwrap();
        assert_eq!((parsed.documents.len(), parsed.failures.len()), (3, 1));
        let empty = r#"<?xml version="1.0"?><en-export application="Evernote"></en-export>"#;
        let error = AutoParser.parse(&raw_for_test("none.enex", empty)).unwrap_err();
        assert_eq!(
            error.to_string(),
            "no text content found: an Evernote export with no notes"
        );
    }
}
