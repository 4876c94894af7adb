//! HWPX (`.hwpx`: Hancom's OWPML, KS X 6101, the XML successor of [`super::hwp`] that Hancom
//! Office saves by default since 2021): a ZIP package whose `mimetype` is `application/hwp+zip`,
//! its sections `Contents/section0.xml`, `section1.xml`, ... in order. A paragraph (`hp:p`) is a
//! block of its runs' text (`hp:t`; a tab, a line break and spaces that do not break read as
//! such); a table (`hp:tbl`, inside a paragraph's run) ends the text before it and is a table
//! block (`TableText`: a cell's paragraphs joined, cells by ` | `, a table inside a cell read into
//! it); a footnote's, an endnote's and a text box's paragraphs follow the paragraph they are
//! written in. The title is the package's (`Contents/content.hpf`'s `opf:title`), else the
//! file's name. Read in the parse workers, as the Office packages are (the `zip` crate).

use quick_xml::events::Event;

use super::ooxml::{element_text, local_name, Package, PartReader};
use super::outline_body::{Aside, OutlineBody};
use super::{Document, ParseError, Parsed};
use crate::source::RawDocument;

/// The `mimetype` an HWPX package stores first.
pub(super) const MIMETYPE: &[u8] = b"application/hwp+zip";

pub(super) fn parse(raw: &RawDocument) -> Result<Parsed, ParseError> {
    let mut package = Package::open(&raw.bytes, "HWPX")?;
    let mut body = OutlineBody::default();
    let mut sections = 0;
    while let Some(xml) = package.part(&format!("Contents/section{sections}.xml"))? {
        read_section(&xml, &format!("Contents/section{sections}.xml"), &mut body)?;
        sections += 1;
    }
    if sections == 0 {
        return Err(ParseError::Corrupt("HWPX: no section (`Contents/section0.xml`)".into()));
    }
    let title = package
        .part("Contents/content.hpf")?
        .and_then(|hpf| element_text(&hpf, "opf:title"))
        .unwrap_or_else(|| Document::stem_of(raw));
    Ok(Parsed::one(Document::from_raw(raw, title, body.blocks)))
}

fn read_section(xml: &str, part: &str, body: &mut OutlineBody) -> Result<(), ParseError> {
    let mut reader = PartReader::new(xml, "HWPX", part);
    let mut notes = Aside::default();
    // How deep inside `hp:t` elements the reader is: only their text is the document's.
    let mut in_text = 0usize;
    loop {
        match reader.next()? {
            Event::Start(e) => match local_name(e.name().as_ref()) {
                b"t" | b"mainText" => in_text += 1,
                b"footNote" | b"endNote" | b"drawText" => {
                    // A text box in a text box: the outer box's paragraph so far is set aside.
                    if notes.depth > 0 {
                        notes.end_paragraph(&mut body.paragraph);
                    }
                    notes.open(&mut body.paragraph);
                }
                // The paragraph's text before its table is a block (or a cell's paragraph) of its
                // own. A table in a note or a text box is read as the box's paragraphs.
                b"tbl" if notes.depth == 0 => {
                    body.end_paragraph(None);
                    body.table.start();
                }
                _ => {}
            },
            Event::Empty(e) if in_text > 0 => match local_name(e.name().as_ref()) {
                b"tab" => body.paragraph.push('\t'),
                b"lineBreak" => body.paragraph.push('\n'),
                b"nbSpace" | b"fwSpace" => body.paragraph.push(' '),
                b"hyphen" => body.paragraph.push('-'),
                _ => {}
            },
            Event::Text(t) if in_text > 0 => body.paragraph.push_str(&reader.text(&t)?),
            Event::End(e) => match local_name(e.name().as_ref()) {
                b"t" | b"mainText" => in_text = in_text.saturating_sub(1),
                b"footNote" | b"endNote" | b"drawText" if notes.depth > 0 => notes.close(&mut body.paragraph),
                b"p" if notes.depth > 0 => notes.end_paragraph(&mut body.paragraph),
                b"p" => {
                    body.end_paragraph(None);
                    notes.give(body);
                }
                name @ (b"tc" | b"tr" | b"tbl") if notes.depth == 0 => {
                    body.end_table_part(name);
                    notes.give(body);
                }
                _ => {}
            },
            Event::Eof => break,
            _ => {}
        }
    }
    notes.give(body);
    Ok(())
}

#[cfg(test)]
pub(crate) mod fixtures {
    /// An HWPX package of `sections` (each a section's paragraphs' XML), titled `title`.
    pub fn hwpx(sections: &[&str], title: &str) -> Vec<u8> {
        const NAMESPACES: &str = r#"xmlns:hs="http://www.hancom.co.kr/hwpml/2011/section" xmlns:hp="http://www.hancom.co.kr/hwpml/2011/paragraph""#;
        let mut parts = vec![
            ("mimetype".to_string(), "application/hwp+zip".to_string()),
            (
                "Contents/content.hpf".to_string(),
                format!(
                    r#"<?xml version="1.0" encoding="UTF-8"?><opf:package xmlns:opf="http://www.idpf.org/2007/opf/"><opf:metadata><opf:title>{title}</opf:title><opf:language>ko</opf:language></opf:metadata></opf:package>"#
                ),
            ),
        ];
        for (number, section) in sections.iter().enumerate() {
            parts.push((
                format!("Contents/section{number}.xml"),
                format!(r#"<?xml version="1.0" encoding="UTF-8"?><hs:sec {NAMESPACES}>{section}</hs:sec>"#),
            ));
        }
        crate::parse::ooxml::fixtures::package(&parts)
    }

    /// A paragraph of one run holding `inner` (text and inline elements).
    pub fn paragraph(inner: &str) -> String {
        format!(r#"<hp:p paraPrIDRef="0"><hp:run charPrIDRef="0">{inner}</hp:run></hp:p>"#)
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::{hwpx, paragraph};
    use crate::parse::{detect_format, outline_of, raw_for_test, AutoParser, ContentType, Format, Parser};

    #[test]
    fn paragraphs_tables_and_notes_are_read_from_every_section() {
        let cell = |text: &str| {
            format!(
                r#"<hp:tc><hp:subList>{}</hp:subList></hp:tc>"#,
                paragraph(&format!("<hp:t>{text}</hp:t>"))
            )
        };
        let table = format!(
            r#"<hp:tbl rowCnt="2" colCnt="2"><hp:tr>{}{}</hp:tr><hp:tr>{}{}</hp:tr></hp:tbl>"#,
            cell("펌프"),
            cell("상태"),
            cell("P3"),
            cell("씰 마모")
        );
        let first = [
            paragraph("<hp:t>항만 점검 보고서</hp:t>"),
            paragraph(r#"<hp:t>점검<hp:tab width="4000"/>결과</hp:t><hp:t>:<hp:lineBreak/>요약</hp:t>"#),
            paragraph(&format!("<hp:t>표 1</hp:t>{table}<hp:t/>")),
            paragraph(&format!(
                r#"<hp:t>다음 점검</hp:t><hp:ctrl><hp:footNote><hp:subList>{}</hp:subList></hp:footNote></hp:ctrl><hp:t>은 6월입니다.</hp:t>"#,
                paragraph("<hp:t>6월 예정.</hp:t>")
            )),
            r#"<hp:p><hp:run><hp:secPr><hp:pagePr width="59528"/></hp:secPr></hp:run></hp:p>"#.to_string(),
            // A text box in a text box; Dutmal's main text (its reading above left out).
            paragraph(&format!(
                r#"<hp:rect><hp:drawText><hp:subList>{}</hp:subList></hp:drawText></hp:rect><hp:t/>"#,
                paragraph(&format!(
                    r#"<hp:t>바깥 상자</hp:t><hp:rect><hp:drawText><hp:subList>{}</hp:subList></hp:drawText></hp:rect><hp:t> 끝</hp:t>"#,
                    paragraph("<hp:t>안쪽 상자</hp:t>")
                ))
            )),
            paragraph(r#"<hp:dutmal><hp:mainText>본말</hp:mainText><hp:subText>닷말</hp:subText></hp:dutmal>"#),
            // A table in a text box; a table in a cell after the cell's own words.
            paragraph(&format!(
                r#"<hp:rect><hp:drawText><hp:subList><hp:p><hp:run><hp:tbl><hp:tr>{}</hp:tr></hp:tbl></hp:run></hp:p></hp:subList></hp:drawText></hp:rect><hp:t>상자 밖</hp:t>"#,
                cell("상자 속 표")
            )),
            paragraph(&format!(
                r#"<hp:tbl><hp:tr>{}<hp:tc><hp:subList><hp:p><hp:run><hp:t>바깥 칸</hp:t><hp:tbl><hp:tr>{}</hp:tr></hp:tbl></hp:run></hp:p></hp:subList></hp:tc></hp:tr></hp:tbl>"#,
                cell("A"),
                cell("안쪽 칸")
            )),
        ]
        .concat();
        let second = paragraph("<hp:t>Section two: the quay &amp; the pier.</hp:t>");
        let bytes = hwpx(&[&first, &second], "항만 보고서");
        assert_eq!(detect_format("upload", &bytes).unwrap(), Format::Hwpx);
        assert_eq!(detect_format("report.hwpx", &bytes).unwrap(), Format::Hwpx);
        let parsed = AutoParser.parse(&raw_for_test("report.hwpx", bytes)).unwrap();
        let document = &parsed.documents[0];
        assert_eq!(document.title, "항만 보고서");
        assert_eq!(
            outline_of(document),
            [
                ("항만 점검 보고서", vec![], ContentType::Text),
                ("점검\t결과:\n요약", vec![], ContentType::Text),
                ("표 1", vec![], ContentType::Text),
                ("펌프 | 상태\nP3 | 씰 마모", vec![], ContentType::Table),
                ("다음 점검은 6월입니다.", vec![], ContentType::Text),
                ("6월 예정.", vec![], ContentType::Text),
                ("바깥 상자", vec![], ContentType::Text),
                ("안쪽 상자", vec![], ContentType::Text),
                ("끝", vec![], ContentType::Text),
                ("본말", vec![], ContentType::Text),
                ("상자 밖", vec![], ContentType::Text),
                ("상자 속 표", vec![], ContentType::Text),
                ("A | 바깥 칸 안쪽 칸", vec![], ContentType::Table),
                ("Section two: the quay & the pier.", vec![], ContentType::Text),
            ]
        );
    }

    #[test]
    fn a_package_without_sections_or_with_broken_xml_fails_saying_so() {
        let empty = AutoParser
            .parse(&raw_for_test("empty.hwpx", hwpx(&[], "t")))
            .unwrap_err();
        assert_eq!(empty.detail().unwrap(), "HWPX: no section (`Contents/section0.xml`)");
        let broken = AutoParser.parse(&raw_for_test(
            "broken.hwpx",
            hwpx(&["<hp:p><hp:run><hp:t>a</hp:p>"], "t"),
        ));
        assert!(broken.unwrap_err().detail().unwrap().contains("section0.xml"));
    }
}
