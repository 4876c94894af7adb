//! ODT (zip + OpenDocument text, LibreOffice's and the public sector's format): paragraphs as
//! blocks, headings (`text:h` and its outline level) giving heading paths, tables as table
//! blocks (cells joined by ` | `), footnotes and endnotes after the paragraph or table citing
//! them (a note is written inside the paragraph, where its mark is: read there, it split the
//! paragraph and glued the mark to the word before it); tracked deletions and comments left
//! out; list and heading numbers counted (`odt_lists.rs`) before their paragraphs.

use quick_xml::events::{BytesStart, Event};

use super::odt_lists::OdtNumbering;
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
    let mut warnings = Vec::new();
    let mut numbering = OdtNumbering::read(&mut package, &xml, &mut warnings);
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
            Event::Start(e) if e.name().as_ref() == b"text:number" => numbering.carried_number(true),
            Event::Start(e) => match local_name(e.name().as_ref()) {
                b"h" => {
                    let level = outline_level(&e);
                    numbering.open_heading(&e, level);
                    heading = Some(level);
                }
                b"table" => body.table.start(),
                b"list" => numbering.open_list(&e),
                b"list-item" | b"list-header" => numbering.open_item(&e),
                _ => push_inline(&e, &mut body.paragraph),
            },
            Event::Empty(e) if skipped == 0 => push_inline(&e, &mut body.paragraph),
            Event::Text(t) if skipped == 0 => {
                let text = reader.text(&t)?;
                if !numbering.take_text(&text) {
                    body.paragraph.push_str(&text);
                }
            }
            Event::End(e) if is_left_out(e.name().as_ref()) => skipped = skipped.saturating_sub(1),
            Event::End(_) if skipped > 0 => {}
            Event::End(e) if notes.depth > 0 => match local_name(e.name().as_ref()) {
                b"note" => notes.close(&mut body.paragraph),
                b"h" | b"p" => notes.end_paragraph(&mut body.paragraph),
                _ => {}
            },
            Event::End(e) if e.name().as_ref() == b"text:number" => numbering.carried_number(false),
            Event::End(e) => match local_name(e.name().as_ref()) {
                name @ (b"h" | b"p") => {
                    body.number_paragraph(numbering.end_paragraph());
                    body.end_paragraph(if name == b"h" { heading.take() } else { None });
                    notes.give(&mut body);
                }
                b"list" => numbering.close_list(),
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
    Ok(Parsed::one(
        Document::from_raw(raw, title, body.blocks).with_warnings(warnings),
    ))
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
    use crate::parse::{document_of, outline_of, raw_for_test, AutoParser, ContentType, ParseError, Parser};

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
        let doc = document_of("plan.odt", odt(body, Some("Haushaltsplan")));
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
        let untitled = document_of("plan.odt", odt(body, None));
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
        let doc = document_of("harbour.odt", odt(&body, None));
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
        let doc = document_of("bericht.odt", odt(body, None));
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

    /// List and heading numbers counted as an OpenDocument application counts them: list
    /// styles from styles.xml and the content's automatic styles, a nested list the next level
    /// (its style inherited, `display-levels` giving `2.1`), a list continuing the last of its
    /// style or one named by `xml:id`, a fresh list starting again, an item's own value, a
    /// header item and bullets without a number, headings by the outline style, a heading a
    /// list header, and the number a file carries itself (`text:number`) taken as it is.
    #[test]
    fn list_and_heading_numbers_are_counted() {
        use crate::parse::ooxml::fixtures::package;
        let ns = r#"xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" xmlns:number="urn:oasis:names:tc:opendocument:xmlns:datastyle:1.0" xmlns:xml="http://www.w3.org/XML/1998/namespace""#;
        let level = |kind: &str, level: u32, format: &str, more: &str| {
            format!(r#"<text:list-level-style-{kind} text:level="{level}" style:num-format="{format}" {more}/>"#)
        };
        let styles = format!(
            r#"<office:document-styles {ns}><office:styles><text:outline-style style:name="Outline"><text:outline-level-style text:level="1" style:num-format="1" style:num-suffix="."/><text:outline-level-style text:level="2" style:num-format="1" text:display-levels="2"/><text:outline-level-style text:level="3" style:num-format=""/></text:outline-style><text:list-style style:name="Numbering_20_abc">{}{}</text:list-style></office:styles></office:document-styles>"#,
            level("number", 1, "a", r#"style:num-prefix="(" style:num-suffix=")""#),
            level("number", 2, "i", r#"style:num-suffix=".""#),
        );
        let automatic = format!(
            r#"<office:automatic-styles><number:number-style style:name="N1"><number:number number:decimal-places="2"/></number:number-style><text:list-style style:name="L1">{}{}</text:list-style><text:list-style style:name="L2">{}</text:list-style></office:automatic-styles>"#,
            level("number", 1, "1", r#"style:num-suffix=".""#),
            level("number", 2, "1", r#"style:num-suffix="." text:display-levels="2""#),
            r#"<text:list-level-style-bullet text:level="1" text:bullet-char="•"/>"#,
        );
        let item = |text: &str| format!("<text:list-item>\n  <text:p>{text}</text:p>\n</text:list-item>");
        let list =
            |attributes: &str, items: &[String]| format!("<text:list {attributes}>{}</text:list>", items.concat());
        let body = [
            r#"<text:h text:outline-level="1">Scope</text:h>"#.to_string(),
            list(
                r#"text:style-name="L1" xml:id="first""#,
                &[
                    item("Berths are leased yearly."),
                    format!(
                        "<text:list-item><text:p>Fees:</text:p>{}<text:p>A second paragraph of the item.</text:p></text:list-item>",
                        list("", &[item("mooring"), item("cranage")])
                    ),
                ],
            ),
            r#"<text:p>A paragraph between.</text:p>"#.to_string(),
            list(r#"text:style-name="L1" text:continue-numbering="true""#, &[item("continued")]),
            list(r#"text:style-name="L1""#, &[item("a new list"), r#"<text:list-item text:start-value="7"><text:p>seventh</text:p></text:list-item>"#.to_string()]),
            list(r#"text:continue-list="first""#, &[item("the first list goes on")]),
            r#"<text:h text:outline-level="2">Terms</text:h>"#.to_string(),
            list(
                r#"text:style-name="Numbering_20_abc""#,
                &[
                    "<text:list-header><text:p>Definitions</text:p></text:list-header>".to_string(),
                    item("lessee"),
                    item("lessor"),
                ],
            ),
            list(r#"text:style-name="L2""#, &[item("a bullet")]),
            r#"<text:h text:outline-level="3">Unnumbered level</text:h>"#.to_string(),
            r#"<text:h text:outline-level="1" text:is-list-header="true">Annex</text:h>"#.to_string(),
            r#"<text:h text:outline-level="2">Rates</text:h>"#.to_string(),
            r#"<text:h text:outline-level="1"><text:number>IX.</text:number>Carried</text:h>"#.to_string(),
        ]
        .concat();
        let content = format!(
            r#"<office:document-content {ns}>{automatic}<office:body><office:text>{body}</office:text></office:body></office:document-content>"#
        );
        let file = package(&[
            (
                "mimetype".to_string(),
                "application/vnd.oasis.opendocument.text".to_string(),
            ),
            ("styles.xml".to_string(), styles),
            ("content.xml".to_string(), content.clone()),
        ]);
        let doc = document_of("tenancy.odt", file);
        let texts: Vec<(&str, String)> = doc
            .blocks
            .iter()
            .map(|b| (b.text.as_str(), b.heading_path.join(" > ")))
            .collect();
        let under = |text: &'static str, path: &str| (text, path.to_string());
        assert_eq!(
            texts,
            [
                under("1. Scope", "1. Scope"),
                under("1. Berths are leased yearly.", "1. Scope"),
                under("2. Fees:", "1. Scope"),
                under("2.1. mooring", "1. Scope"),
                under("2.2. cranage", "1. Scope"),
                under("A second paragraph of the item.", "1. Scope"),
                under("A paragraph between.", "1. Scope"),
                under("3. continued", "1. Scope"),
                under("1. a new list", "1. Scope"),
                under("7. seventh", "1. Scope"),
                under("3. the first list goes on", "1. Scope"),
                under("1.1 Terms", "1. Scope > 1.1 Terms"),
                under("Definitions", "1. Scope > 1.1 Terms"),
                under("(a) lessee", "1. Scope > 1.1 Terms"),
                under("(b) lessor", "1. Scope > 1.1 Terms"),
                under("a bullet", "1. Scope > 1.1 Terms"),
                under("Unnumbered level", "1. Scope > 1.1 Terms > Unnumbered level"),
                under("Annex", "Annex"),
                under("1.2 Rates", "Annex > 1.2 Rates"),
                under("IX. Carried", "IX. Carried"),
            ]
        );
        // A damaged styles part: the text is read, without the numbers it defined.
        let damaged = package(&[
            (
                "mimetype".to_string(),
                "application/vnd.oasis.opendocument.text".to_string(),
            ),
            (
                "styles.xml".to_string(),
                "<office:document-styles><text:list-style".to_string(),
            ),
            ("content.xml".to_string(), content),
        ]);
        let doc = document_of("tenancy.odt", damaged);
        assert_eq!(doc.blocks[0].text, "Scope");
        assert_eq!(doc.blocks[1].text, "1. Berths are leased yearly.");
        assert_eq!(doc.warnings.len(), 1, "{:?}", doc.warnings);
        assert!(
            doc.warnings[0].starts_with("ODT part styles.xml: XML at byte")
                && doc.warnings[0].ends_with("; list and heading numbers its styles define were left out"),
            "{:?}",
            doc.warnings
        );
    }

    #[test]
    fn an_odt_without_content_is_corrupt() {
        let docx = crate::parse::docx::fixtures::docx("");
        let err = AutoParser.parse(&raw_for_test("wrong.odt", docx)).unwrap_err();
        assert_eq!(err, ParseError::Corrupt("ODT has no content.xml".into()));
    }
}
