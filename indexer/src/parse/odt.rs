//! ODT (zip + OpenDocument text, LibreOffice's and the public sector's format): paragraphs as
//! blocks, headings (`text:h` and its outline level) giving heading paths, tables as table
//! blocks (cells joined by ` | `), footnotes and endnotes after the paragraph or table citing
//! them (a note is written inside the paragraph, where its mark is: read there, it split the
//! paragraph and glued the mark to the word before it); tracked deletions and comments left
//! out.

use quick_xml::events::{BytesStart, Event};

use super::ooxml::{local_name, PartReader};
use super::opendocument::{count_attribute, is_left_out, open_content, push_inline, table_part};
use super::outline_body::{Aside, OutlineBody};
use super::{Document, ParseError, Parsed};
use crate::source::RawDocument;

/// A heading's outline level (`text:outline-level`, 1 when it names none).
fn outline_level(element: &BytesStart) -> usize {
    count_attribute(element, b"outline-level").unwrap_or(1)
}

pub(super) fn parse(raw: &RawDocument) -> Result<Parsed, ParseError> {
    let (mut package, xml) = open_content(&raw.bytes, "ODT")?;
    let mut reader = PartReader::new(&xml, "ODT", "content.xml");
    let mut body = OutlineBody::default();
    // Open headings' levels (a heading's paragraph ends with its `text:h`), and how deep
    // inside what is left out (tracked changes, comments) the reader is.
    let (mut heading, mut skipped) = (None, 0usize);
    let mut notes = Aside::default();
    loop {
        match reader.next()? {
            Event::Start(e) if is_left_out(e.name().as_ref()) => skipped += 1,
            Event::Start(_) if skipped > 0 => {}
            Event::Start(e) if local_name(e.name().as_ref()) == b"note" => notes.open(&mut body.paragraph),
            Event::Start(e) if notes.depth > 0 => push_inline(&e, &mut body.paragraph),
            Event::Start(e) => match local_name(e.name().as_ref()) {
                b"h" => heading = Some(outline_level(&e)),
                b"table" => body.table.start(),
                _ => push_inline(&e, &mut body.paragraph),
            },
            Event::Empty(e) if skipped == 0 => push_inline(&e, &mut body.paragraph),
            Event::Text(t) if skipped == 0 => body.paragraph.push_str(&reader.text(&t)?),
            Event::End(e) if is_left_out(e.name().as_ref()) => skipped = skipped.saturating_sub(1),
            Event::End(_) if skipped > 0 => {}
            Event::End(e) if notes.depth > 0 => match local_name(e.name().as_ref()) {
                b"note" => notes.close(&mut body.paragraph),
                b"h" | b"p" => notes.end_paragraph(&mut body.paragraph),
                _ => {}
            },
            Event::End(e) => match local_name(e.name().as_ref()) {
                b"h" => {
                    body.end_paragraph(heading.take());
                    notes.give(&mut body);
                }
                b"p" => {
                    body.end_paragraph(None);
                    notes.give(&mut body);
                }
                name => {
                    body.end_table_part(table_part(name));
                    notes.give(&mut body);
                }
            },
            Event::Eof => break,
            _ => {}
        }
    }
    notes.give(&mut body);
    let title = package
        .title_in("meta.xml")?
        .or(body.first_heading)
        .unwrap_or_else(|| Document::stem_of(raw));
    Ok(Parsed::one(Document::from_raw(raw, title, body.blocks)))
}

/// Test fixtures: minimal ODT files.
#[cfg(test)]
pub(crate) mod fixtures {
    /// An ODT whose body is the given OpenDocument text, with a title in its meta.xml if given.
    pub fn odt(body_xml: &str, title: Option<&str>) -> Vec<u8> {
        crate::parse::opendocument::fixtures::opendocument("text", body_xml, title)
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::odt;
    use crate::parse::{outline_of, raw_for_test, AutoParser, ContentType, ParseError, Parser};

    #[test]
    fn headings_paragraphs_tables_and_what_is_left_out() {
        let body = concat!(
            r#"<text:tracked-changes><text:changed-region><text:deletion><text:p>deleted words</text:p></text:deletion></text:changed-region></text:tracked-changes>"#,
            r#"<text:h text:outline-level="1">Haushalt 2026</text:h>"#,
            r#"<text:p>Die Mittel für <text:span>Rechenzentren</text:span>:<text:s text:c="2"/>mehr<text:s text:c="1000000"/><text:tab/>als<text:line-break/>vorher.<office:annotation><text:p>a reviewer's comment</text:p></office:annotation></text:p>"#,
            r#"<text:h text:outline-level="2">Kosten</text:h>"#,
            r#"<table:table table:name="T"><table:table-row><table:table-cell><text:p>Posten</text:p></table:table-cell><table:table-cell><text:p>Euro</text:p></table:table-cell></table:table-row><table:table-row><table:table-cell><text:p>GPUs</text:p></table:table-cell><table:table-cell><text:p>64.000</text:p></table:table-cell></table:table-row></table:table>"#,
            r#"<text:list><text:list-item><text:p>Strom &amp; Kühlung</text:p></text:list-item></text:list>"#,
        );
        let doc = AutoParser
            .parse(&raw_for_test("plan.odt", odt(body, Some("Haushaltsplan"))))
            .unwrap()
            .documents
            .remove(0);
        assert_eq!(doc.title, "Haushaltsplan");
        assert_eq!(
            outline_of(&doc),
            [
                ("Haushalt 2026", vec!["Haushalt 2026"], ContentType::Text),
                (
                    "Die Mittel für Rechenzentren:  mehr        \tals\nvorher.",
                    vec!["Haushalt 2026"],
                    ContentType::Text
                ),
                ("Kosten", vec!["Haushalt 2026", "Kosten"], ContentType::Text),
                (
                    "Posten | Euro\nGPUs | 64.000",
                    vec!["Haushalt 2026", "Kosten"],
                    ContentType::Table
                ),
                ("Strom & Kühlung", vec!["Haushalt 2026", "Kosten"], ContentType::Text),
            ]
        );
        // Without meta.xml, the first heading names it.
        let untitled = AutoParser
            .parse(&raw_for_test("plan.odt", odt(body, None)))
            .unwrap()
            .documents
            .remove(0);
        assert_eq!(untitled.title, "Haushalt 2026");
    }

    /// A note is written inside its paragraph: its body comes after the paragraph (or the
    /// whole table) citing it, the paragraph whole and without the note's mark.
    #[test]
    fn notes_follow_the_paragraph_or_table_citing_them() {
        let note = |id: &str, class: &str, mark: &str, paragraphs: &str| {
            format!(
                r#"<text:note text:id="{id}" text:note-class="{class}"><text:note-citation>{mark}</text:note-citation><text:note-body>{paragraphs}</text:note-body></text:note>"#
            )
        };
        let body = [
            r#"<text:h text:outline-level="1">Piers</text:h>"#.to_string(),
            format!(
                "<text:p>The north pier opens in spring{} after the dredging.</text:p>",
                note("ftn1", "footnote", "1", "<text:p>Subject to the county engineer's inspection.</text:p><text:p>Twice a year.</text:p>")
            ),
            format!(
                "<table:table><table:table-row><table:table-cell><text:p>A{}</text:p></table:table-cell><table:table-cell><text:p>12 m</text:p></table:table-cell></table:table-row></table:table>",
                note("edn1", "endnote", "i", "<text:p>Berth A was deepened in 2025.</text:p>")
            ),
            format!(
                r#"<text:h text:outline-level="1">Costs{}</text:h>"#,
                note("ftn2", "footnote", "2", "<text:p>As budgeted.</text:p>")
            ),
        ]
        .concat();
        let doc = AutoParser
            .parse(&raw_for_test("harbour.odt", odt(&body, None)))
            .unwrap()
            .documents
            .remove(0);
        assert_eq!(
            outline_of(&doc),
            [
                ("Piers", vec!["Piers"], ContentType::Text),
                (
                    "The north pier opens in spring after the dredging.",
                    vec!["Piers"],
                    ContentType::Text
                ),
                (
                    "Subject to the county engineer's inspection.",
                    vec!["Piers"],
                    ContentType::Text
                ),
                ("Twice a year.", vec!["Piers"], ContentType::Text),
                ("A | 12 m", vec!["Piers"], ContentType::Table),
                ("Berth A was deepened in 2025.", vec!["Piers"], ContentType::Text),
                ("Costs", vec!["Costs"], ContentType::Text),
                ("As budgeted.", vec!["Costs"], ContentType::Text),
            ]
        );
    }

    /// A table of contents and an alphabetical index, as LibreOffice writes them (a template,
    /// then the entries with their page numbers), are not read; the headings are.
    #[test]
    fn generated_indexes_are_not_read() {
        let body = concat!(
            r#"<text:table-of-content text:name="Inhaltsverzeichnis1"><text:table-of-content-source text:outline-level="10"><text:index-title-template>Inhaltsverzeichnis</text:index-title-template></text:table-of-content-source>"#,
            r#"<text:index-body><text:index-title><text:p>Inhaltsverzeichnis</text:p></text:index-title><text:p>Anleger<text:tab/>1</text:p><text:p>Tiefen<text:tab/>2</text:p></text:index-body></text:table-of-content>"#,
            r#"<text:h text:outline-level="1">Anleger</text:h><text:p>Der Nordanleger öffnet im Frühjahr.</text:p>"#,
            r#"<text:alphabetical-index text:name="Stichwortverzeichnis1"><text:index-body><text:p>Anleger, 1</text:p></text:index-body></text:alphabetical-index>"#,
        );
        let doc = AutoParser
            .parse(&raw_for_test("bericht.odt", odt(body, None)))
            .unwrap()
            .documents
            .remove(0);
        assert_eq!(
            outline_of(&doc),
            [
                ("Anleger", vec!["Anleger"], ContentType::Text),
                (
                    "Der Nordanleger öffnet im Frühjahr.",
                    vec!["Anleger"],
                    ContentType::Text
                ),
            ]
        );
    }

    #[test]
    fn an_odt_without_content_is_corrupt() {
        let docx = crate::parse::docx::fixtures::docx("");
        let err = AutoParser.parse(&raw_for_test("wrong.odt", docx)).unwrap_err();
        assert_eq!(err, ParseError::Corrupt("ODT has no content.xml".into()));
    }
}
