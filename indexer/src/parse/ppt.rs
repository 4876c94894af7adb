//! PowerPoint 97-2003 presentations (`.ppt`, `.pps`, `.pot`; MS-PPT): a compound file whose
//! `PowerPoint Document` stream is a tree of records. The `Current User` stream names the
//! last edit; each edit's persist directory maps object ids to where their records begin
//! (newer edits first, so a file saved quickly, with edits appended, reads as it was last
//! saved). The document's slide list gives the slides in order; each slide's text is in the
//! slide list itself (PowerPoint writes its placeholders' text there) and in the text boxes of
//! the slide's drawing (LibreOffice writes all of it there, PowerPoint its other shapes'), and
//! its notes page's notes text. Slides are read as PPTX's ([`super::slides`]): the title
//! placeholder's text as the heading path, numbered by place, notes under "<title> / Notes".
//! Left out: masters, field placeholders (`*`), tables' structure (a table is drawn as shapes;
//! its cells are read as paragraphs). An encrypted presentation fails as encrypted.
//!
//! Quarry's own code, in process: records are walked with an explicit stack, the edit chain
//! and the directories once each, and a record is walked once however many ids name it.

use std::collections::{HashMap, HashSet};

use super::compound_file::{u16_at, u32_at, CompoundFile};
use super::property_set::summary_title;
use super::slides::{push_slide, ShapeRole, SlideReader, SlideText};
use super::{Block, Document, ParseError, Parsed};
use crate::source::RawDocument;

const DOCUMENT: u16 = 0x03E8;
const SLIDE: u16 = 0x03EE;
const SLIDE_ATOM: u16 = 0x03EF;
const NOTES: u16 = 0x03F0;
const MAIN_MASTER: u16 = 0x03F8;
const SLIDE_PERSIST_ATOM: u16 = 0x03F3;
const SLIDE_LIST_WITH_TEXT: u16 = 0x0FF0;
const TEXT_HEADER_ATOM: u16 = 0x0F9F;
const TEXT_CHARS_ATOM: u16 = 0x0FA0;
const TEXT_BYTES_ATOM: u16 = 0x0FA8;
const USER_EDIT_ATOM: u16 = 0x0FF5;
const PERSIST_DIRECTORY_ATOM: u16 = 0x1772;
/// A slide list's instance: the slides', the notes pages'.
const SLIDES: u16 = 0;
const NOTES_PAGES: u16 = 2;
/// Text types (TextHeaderAtom): a title, a centred title, notes.
const TITLE_TEXT: u32 = 0;
const CENTER_TITLE_TEXT: u32 = 6;
const NOTES_TEXT: u32 = 2;
const HEADER_BYTES: usize = 8;

fn corrupt(what: impl Into<String>) -> ParseError {
    ParseError::Corrupt(format!("PPT: {}", what.into()))
}

/// One record: its type, its instance, whether it holds other records, and its data.
#[derive(Clone, Copy)]
struct Record<'a> {
    kind: u16,
    instance: u16,
    container: bool,
    data: &'a [u8],
}

/// The record beginning at byte `at` of `bytes`, none where its header or data runs past them.
fn record_at(bytes: &[u8], at: usize) -> Option<Record<'_>> {
    let options = u16_at(bytes, at)?;
    let length = u32_at(bytes, at + 4)? as usize;
    let start = at.checked_add(HEADER_BYTES)?;
    Some(Record {
        kind: u16_at(bytes, at + 2)?,
        instance: options >> 4,
        container: options & 0x0F == 0x0F,
        data: bytes.get(start..start.checked_add(length)?)?,
    })
}

/// The records a container's data holds, in order.
fn children(data: &[u8]) -> impl Iterator<Item = Record<'_>> {
    let mut at = 0;
    std::iter::from_fn(move || {
        let record = record_at(data, at)?;
        at += HEADER_BYTES + record.data.len();
        Some(record)
    })
}

/// One text of a slide or notes page: its type and its characters.
type Text = (u32, String);

/// A text atom's characters (UTF-16, or the low bytes of UTF-16), none for other records.
fn text_of(record: &Record) -> Option<String> {
    match record.kind {
        TEXT_CHARS_ATOM => {
            let units: Vec<u16> = record
                .data
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                .collect();
            Some(String::from_utf16_lossy(&units))
        }
        TEXT_BYTES_ATOM => Some(record.data.iter().map(|b| char::from(*b)).collect()),
        _ => None,
    }
}

/// Every text in the tree under `container`, in order, each after the text header that types
/// it; masters' trees are not entered. Each record read spends one of `budget` (the records
/// the stream can hold side by side): slides nested in slides, each named as a slide of its
/// own, cannot make the walks together longer than the stream.
fn texts_under(container: Record, budget: &mut usize) -> Vec<Text> {
    let mut texts = Vec::new();
    let mut kind = u32::MAX;
    let mut stack = vec![children(container.data)];
    while let Some(records) = stack.last_mut() {
        let Some(record) = records.next() else {
            stack.pop();
            continue;
        };
        match budget.checked_sub(1) {
            Some(left) => *budget = left,
            None => break,
        }
        match record.kind {
            TEXT_HEADER_ATOM => kind = u32_at(record.data, 0).unwrap_or(u32::MAX),
            MAIN_MASTER => {}
            _ if record.container => stack.push(children(record.data)),
            _ => texts.extend(text_of(&record).map(|text| (kind, text))),
        }
    }
    texts
}

/// Where each persistent object's record begins: the persist directories of the edit at
/// `edit` and of the edits before it (an id's newest offset wins); and the document's id.
fn persist_offsets(stream: &[u8], mut edit: usize) -> Result<(HashMap<u32, usize>, u32), ParseError> {
    let mut offsets = HashMap::new();
    let mut document = None;
    let (mut edits_read, mut directories_read) = (HashSet::new(), HashSet::new());
    while edits_read.insert(edit) {
        let record = record_at(stream, edit)
            .filter(|r| r.kind == USER_EDIT_ATOM)
            .ok_or_else(|| {
                corrupt(format!(
                    "no edit record at byte {edit} of the PowerPoint Document stream"
                ))
            })?;
        let data = record.data;
        // An encrypted file's edits name the record of its encryption (in a field past the 28
        // bytes).
        if data.len() >= 32 {
            return Err(ParseError::Encrypted("PPT".into()));
        }
        document.get_or_insert(u32_at(data, 16).unwrap_or(0));
        let directory_at = u32_at(data, 12).unwrap_or(u32::MAX) as usize;
        if directories_read.insert(directory_at) {
            let directory = record_at(stream, directory_at)
                .filter(|r| r.kind == PERSIST_DIRECTORY_ATOM)
                .ok_or_else(|| corrupt(format!("no persist directory at byte {directory_at}")))?;
            let mut at = 0;
            while let Some(run) = u32_at(directory.data, at) {
                let (first, count) = (run & 0x000F_FFFF, (run >> 20) as usize);
                for i in 0..count {
                    let Some(offset) = u32_at(directory.data, at + 4 + 4 * i) else {
                        break;
                    };
                    offsets.entry(first + i as u32).or_insert(offset as usize);
                }
                at += 4 + 4 * count;
            }
        }
        match u32_at(data, 8).unwrap_or(0) {
            0 => break,
            previous => edit = previous as usize,
        }
    }
    Ok((offsets, document.unwrap_or(0)))
}

/// The offset of the last edit: the `Current User` stream's, or else the last edit record at
/// the stream's top level.
fn current_edit(file: &CompoundFile, stream: &[u8]) -> Option<usize> {
    let named = file
        .stream("Current User")
        .and_then(Result::ok)
        .and_then(|user| u32_at(&user, 16))
        .map(|at| at as usize)
        .filter(|at| record_at(stream, *at).is_some_and(|r| r.kind == USER_EDIT_ATOM));
    named.or_else(|| {
        let mut at = 0;
        let mut last = None;
        while let Some(record) = record_at(stream, at) {
            if record.kind == USER_EDIT_ATOM {
                last = Some(at);
            }
            at += HEADER_BYTES + record.data.len();
        }
        last
    })
}

/// A slide list's entries, in order: each slide's (or notes page's) object id, its own id, and
/// the texts the list holds for it (a persist atom begins each; the texts after it are its).
fn slide_list(document: Record, instance: u16) -> Vec<(u32, u32, Vec<Text>)> {
    let mut entries: Vec<(u32, u32, Vec<Text>)> = Vec::new();
    let lists = children(document.data).filter(|r| r.kind == SLIDE_LIST_WITH_TEXT && r.instance == instance);
    for list in lists {
        let mut kind = u32::MAX;
        for record in children(list.data) {
            match record.kind {
                SLIDE_PERSIST_ATOM => entries.push((
                    u32_at(record.data, 0).unwrap_or(0),
                    u32_at(record.data, 12).unwrap_or(0),
                    Vec::new(),
                )),
                TEXT_HEADER_ATOM => kind = u32_at(record.data, 0).unwrap_or(u32::MAX),
                _ => {
                    if let (Some(text), Some(entry)) = (text_of(&record), entries.last_mut()) {
                        entry.2.push((kind, text));
                    }
                }
            }
        }
    }
    entries
}

/// A slide's (or notes page's) texts as what a slide reader holds: title texts as its title,
/// field placeholders (`*`) left out, each text a shape of paragraphs.
fn slide_text(texts: Vec<Text>, keep: impl Fn(u32) -> bool) -> SlideText {
    let mut reader = SlideReader::default();
    for (kind, text) in texts
        .into_iter()
        .filter(|(kind, text)| keep(*kind) && text.trim() != "*")
    {
        if matches!(kind, TITLE_TEXT | CENTER_TITLE_TEXT) {
            reader.set_role(ShapeRole::Title);
        }
        for paragraph in text.split(['\r', '\n']) {
            reader.paragraph = paragraph.replace('\u{b}', "\n");
            reader.end_paragraph();
        }
        reader.end_shape();
    }
    reader.slide
}

/// The presentation's blocks and its first slide's title.
fn slides(stream: &[u8], edit: usize) -> Result<(Vec<Block>, Option<String>), ParseError> {
    let (offsets, document_id) = persist_offsets(stream, edit)?;
    let object = |id: u32, kind: u16| {
        let at = *offsets.get(&id)?;
        record_at(stream, at).filter(|r| r.kind == kind).map(|r| (at, r))
    };
    let (_, document) = object(document_id, DOCUMENT).ok_or_else(|| corrupt("the document record is missing"))?;
    let notes_of: HashMap<u32, u32> = slide_list(document, NOTES_PAGES)
        .into_iter()
        .map(|(persist, id, _)| (id, persist))
        .collect();
    // Each record walked once, however many ids name it, and no more records than the stream
    // holds side by side.
    let mut walked = HashSet::new();
    let mut budget = stream.len() / HEADER_BYTES + 1;
    let (mut blocks, mut first_title) = (Vec::new(), None);
    for (index, (persist, _, mut texts)) in slide_list(document, SLIDES).into_iter().enumerate() {
        let mut notes = Vec::new();
        if let Some((_, record)) = object(persist, SLIDE).filter(|(at, _)| walked.insert(*at)) {
            texts.extend(texts_under(record, &mut budget));
            let notes_id = children(record.data)
                .find(|r| r.kind == SLIDE_ATOM)
                .and_then(|atom| u32_at(atom.data, 16));
            let page = notes_id
                .and_then(|id| notes_of.get(&id))
                .and_then(|persist| object(*persist, NOTES));
            if let Some((_, page)) = page.filter(|(at, _)| walked.insert(*at)) {
                notes = slide_text(texts_under(page, &mut budget), |kind| kind == NOTES_TEXT).blocks;
            }
        }
        let slide = slide_text(texts, |_| true);
        if let Some(title) = push_slide(index, slide, notes, &mut blocks) {
            first_title.get_or_insert(title);
        }
    }
    Ok((blocks, first_title))
}

pub(super) fn parse(raw: &RawDocument) -> Result<Parsed, ParseError> {
    let file = CompoundFile::open_document(&raw.bytes, "PPT")?;
    let stream = file
        .stream("PowerPoint Document")
        .ok_or_else(|| corrupt("the PowerPoint Document stream is missing"))?
        .map_err(corrupt)?;
    let edit = current_edit(&file, &stream).ok_or_else(|| corrupt("no edit record names the slides"))?;
    let (blocks, first_title) = slides(&stream, edit)?;
    let title = summary_title(&file)
        .or(first_title)
        .unwrap_or_else(|| Document::stem_of(raw));
    Ok(Parsed::one(Document::from_raw(raw, title, blocks)))
}

#[cfg(test)]
mod tests {
    use super::super::compound_file::fixtures::{with_text, DECK_PPT};
    use super::*;
    use crate::parse::{paged_outline_of, raw_for_test, AutoParser, ContentType, Parser};

    #[test]
    fn slides_in_order_with_titles_and_notes_from_the_drawings() {
        let raw = raw_for_test("deck.ppt", with_text(DECK_PPT, "Order the spare seals."));
        let doc = AutoParser.parse(&raw).unwrap().documents.remove(0);
        assert_eq!(doc.title, "Quarterly review");
        let rollout = vec!["Rollout plan"];
        let pumps = vec!["Pumpen – Übersicht"];
        let text = ContentType::Text;
        assert_eq!(
            paged_outline_of(&doc),
            vec![
                ("Rollout plan", Some(1), rollout.clone(), text),
                (
                    "Move the vector search cluster to new GPUs in March.\nRetire the old nodes.",
                    Some(1),
                    rollout.clone(),
                    text
                ),
                (
                    "Ask finance about the budget.",
                    Some(1),
                    vec!["Rollout plan", "Notes"],
                    text
                ),
                ("Pumpen – Übersicht", Some(2), pumps.clone(), text),
                ("配管の腐食は見られませんでした。", Some(2), pumps.clone(), text),
                ("Pump", Some(2), pumps.clone(), text),
                ("Status", Some(2), pumps.clone(), text),
                ("P3", Some(2), pumps.clone(), text),
                ("seal worn", Some(2), pumps, text),
                ("Next steps", Some(3), vec!["Next steps"], text),
                ("Order the spare seals.", Some(3), vec!["Next steps"], text),
            ]
        );
    }

    /// A record: its options (version and instance), type and data.
    fn record(options: u16, kind: u16, data: &[u8]) -> Vec<u8> {
        [
            &options.to_le_bytes()[..],
            &kind.to_le_bytes(),
            &(data.len() as u32).to_le_bytes(),
            data,
        ]
        .concat()
    }

    fn container(instance: u16, kind: u16, records: &[Vec<u8>]) -> Vec<u8> {
        record(0x0F | instance << 4, kind, &records.concat())
    }

    /// A stream as PowerPoint writes it: placeholders' text in the slide list, an edit appended
    /// later whose directory moves slide 2's object (the old one must not be read).
    #[test]
    fn the_slide_lists_text_and_the_newest_edit_are_read() {
        let persist = |id: u32, slide_id: u32| {
            record(
                0,
                SLIDE_PERSIST_ATOM,
                &[id, 0, 0, slide_id, 0].map(u32::to_le_bytes).concat(),
            )
        };
        let header = |kind: u32| record(0, TEXT_HEADER_ATOM, &kind.to_le_bytes());
        let chars = |text: &str| {
            record(
                0,
                TEXT_CHARS_ATOM,
                &text.encode_utf16().flat_map(u16::to_le_bytes).collect::<Vec<u8>>(),
            )
        };
        let bytes = |text: &str| record(0, TEXT_BYTES_ATOM, text.as_bytes());
        let document = container(
            0,
            DOCUMENT,
            &[container(
                SLIDES,
                SLIDE_LIST_WITH_TEXT,
                &[
                    persist(2, 256),
                    header(0),
                    chars("Costs"),
                    header(1),
                    bytes("Rent\rPower"),
                    persist(3, 257),
                    header(0),
                    chars("Old title"),
                ],
            )],
        )
        .to_vec();
        let slide = |text: &str| container(0, SLIDE, &[header(4), chars(text)]);
        let mut stream = Vec::new();
        let at = |stream: &mut Vec<u8>, bytes: Vec<u8>| {
            let offset = stream.len() as u32;
            stream.extend(bytes);
            offset
        };
        let document_at = at(&mut stream, document);
        let first_at = at(&mut stream, slide("A text box"));
        let old_at = at(&mut stream, slide("stale text"));
        let run = |first: u32, offsets: &[u32]| {
            let mut data = ((offsets.len() as u32) << 20 | first).to_le_bytes().to_vec();
            data.extend(offsets.iter().flat_map(|o| o.to_le_bytes()));
            data
        };
        let first_directory_at = at(
            &mut stream,
            record(0, PERSIST_DIRECTORY_ATOM, &run(1, &[document_at, first_at, old_at])),
        );
        let edit = |last: u32, directory: u32| {
            record(
                0,
                USER_EDIT_ATOM,
                &[0, 0, last, directory, 1, 4, 0].map(u32::to_le_bytes).concat(),
            )
        };
        let first_edit = at(&mut stream, edit(0, first_directory_at));
        let new_at = at(&mut stream, slide("Spring plan"));
        let directory_at = at(&mut stream, record(0, PERSIST_DIRECTORY_ATOM, &run(3, &[new_at])));
        let last_edit = at(&mut stream, edit(first_edit, directory_at));
        let (blocks, first_title) = slides(&stream, last_edit as usize).unwrap();
        let texts: Vec<(&str, Vec<String>)> = blocks
            .iter()
            .map(|b| (b.text.as_str(), b.heading_path.clone()))
            .collect();
        let costs = vec!["Costs".to_string()];
        let old = vec!["Old title".to_string()];
        assert_eq!(
            texts,
            vec![
                ("Costs", costs.clone()),
                ("Rent\nPower", costs.clone()),
                ("A text box", costs),
                ("Old title", old.clone()),
                ("Spring plan", old),
            ]
        );
        assert_eq!(first_title.as_deref(), Some("Costs"));
        // An edit that names its encryption's record: the file is encrypted.
        let mut locked = stream.clone();
        let encrypted = at(
            &mut locked,
            record(
                0,
                USER_EDIT_ATOM,
                &[0, 0, 0, directory_at, 1, 4, 0, 9].map(u32::to_le_bytes).concat(),
            ),
        );
        assert_eq!(
            slides(&locked, encrypted as usize).unwrap_err(),
            ParseError::Encrypted("PPT".into())
        );
        // Slides nested in one another, each also named as a slide: the walks stop at the
        // records the stream holds side by side, not at the square of them.
        let mut nested = container(0, SLIDE, &[header(4), chars("innermost")]);
        for _ in 0..2_000 {
            nested = container(0, SLIDE, &[nested]);
        }
        let mut budget = nested.len() / HEADER_BYTES + 1;
        let mut read = 0;
        let mut offset = 0;
        while let Some(slide) = record_at(&nested, offset).filter(|r| r.kind == SLIDE) {
            read += texts_under(slide, &mut budget).len();
            offset += HEADER_BYTES;
        }
        assert_eq!((read, budget), (1, 0));
        // An edit chain that loops back on itself ends (read with the first directory).
        let looping = stream.len() as u32;
        assert_eq!(at(&mut stream, edit(looping, first_directory_at)), looping);
        let (blocks, _) = slides(&stream, looping as usize).unwrap();
        assert_eq!(blocks.last().map(|b| b.text.as_str()), Some("stale text"));
    }
}
