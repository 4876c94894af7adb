//! SAMI captions (`.smi`, `.sami`: Microsoft's Synchronized Accessible Media Interchange, what
//! Windows Media Player read and what Korean subtitles are still mostly written in). Each
//! `<SYNC Start=ms>` starts a caption that shows until the next one; its `<P>`s' text (every
//! language class the file has) is the caption, `<br>` a line; a SYNC whose text is only
//! `&nbsp;` clears the screen (no caption). The head (title, styles) and comments are left out;
//! tags are not closed in SAMI, so the body is read by its SYNC tags, not as HTML or XML.

use super::subtitles::Cue;

/// Whether a file's first characters (lower case, white space off) open a SAMI document.
pub(super) fn looks_like_sami(head: &str) -> bool {
    head.trim_start_matches('\u{feff}').trim_start().starts_with("<sami")
}

/// The captions of a SAMI document, in the order of their SYNCs (none where it has none).
pub(super) fn read_cues(text: &str) -> Vec<Cue> {
    let text = without_comments(text);
    // ASCII lower case keeps every byte where it is: positions found in it index `text` too.
    let lower = text.to_ascii_lowercase();
    let body_end = lower.rfind("</body").unwrap_or(lower.len());
    // Each SYNC's start and where its captions' HTML is (in `text` and `lower` alike).
    let mut syncs: Vec<(u64, std::ops::Range<usize>)> = Vec::new();
    let mut from = 0;
    while let Some(at) = lower[from..body_end].find("<sync").map(|at| at + from) {
        let Some(tag_end) = lower[at..body_end].find('>').map(|end| end + at) else {
            break;
        };
        let next = lower[tag_end..body_end].find("<sync").map_or(body_end, |n| n + tag_end);
        if let Some(start) = start_attribute(&lower[at..tag_end]) {
            syncs.push((start, tag_end + 1..next));
        }
        from = next;
    }
    let mut cues = Vec::new();
    for (index, (start, html)) in syncs.iter().enumerate() {
        let (html, lower) = (&text[html.clone()], &lower[html.clone()]);
        let end = syncs.get(index + 1).map_or(*start, |(next, _)| (*next).max(*start));
        let mut cue = Cue::starting(*start, end);
        for line in split_at_line_breaks(html, lower) {
            cue.add(line);
        }
        if cue.has_text() {
            cues.push(cue);
        }
    }
    cues.sort_by_key(|cue| cue.start_ms);
    cues
}

/// A SYNC tag's `Start` (quoted or not), in milliseconds.
fn start_attribute(tag: &str) -> Option<u64> {
    let after = tag.find("start")? + "start".len();
    let value = tag[after..].trim_start().strip_prefix('=')?.trim_start();
    let digits: String = value
        .trim_start_matches(['"', '\''])
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.get(..digits.len().min(15))?.parse().ok()
}

/// A caption's HTML cut at its `<br>`s (`<br/>`, `<BR>`), found in its ASCII lower case.
fn split_at_line_breaks<'a>(html: &'a str, lower: &str) -> Vec<&'a str> {
    let mut lines = Vec::new();
    let mut from = 0;
    while let Some(at) = lower[from..].find("<br").map(|at| at + from) {
        let Some(end) = lower[at..].find('>').map(|end| end + at) else {
            break;
        };
        lines.push(&html[from..at]);
        from = end + 1;
    }
    lines.push(&html[from..]);
    lines
}

fn without_comments(text: &str) -> String {
    let mut kept = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("<!--") {
        kept.push_str(&rest[..at]);
        rest = rest[at..].find("-->").map_or("", |end| &rest[at + end + 3..]);
    }
    kept.push_str(rest);
    kept
}

#[cfg(test)]
mod tests {
    use crate::parse::{detect_format, raw_for_test, said_when, AutoParser, Format, Parser};

    const SAMI: &str = "<SAMI>\r\n<HEAD>\r\n<TITLE>항구</TITLE>\r\n<STYLE TYPE=\"text/css\">\r\n<!--\r\n\
        P { margin-left:8pt; font-size:20pt; }\r\n.KRCC { Name:Korean; lang:ko-KR; SAMIType:CC; }\r\n\
        .ENCC { Name:English; lang:en-US; }\r\n-->\r\n</STYLE>\r\n</HEAD>\r\n<BODY>\r\n\
        <SYNC Start=1000><P Class=KRCC>항구에 배가<br>들어온다\r\n\
        <SYNC Start=3500><P Class=KRCC>&nbsp;\r\n\
        <!-- a note left out -->\r\n\
        <SYNC Start=\"4000\"><P Class=KRCC><font color=\"yellow\">조수가</font> 늦다\r\n\
        <P Class=ENCC>The tide is late\r\n\
        <SYNC Start=6000><P Class=KRCC>&nbsp;\r\n\
        <sync start=9000><p class=krcc>폭풍이 온다</p></sync>\r\n\
        </BODY>\r\n</SAMI>\r\n";

    #[test]
    fn syncs_are_cues_until_the_next_and_blank_ones_clear_the_screen() {
        assert_eq!(
            detect_format("harbour.smi", SAMI.as_bytes()).unwrap(),
            Format::Subtitles
        );
        assert_eq!(detect_format("harbour", SAMI.as_bytes()).unwrap(), Format::Subtitles);
        let parsed = AutoParser.parse(&raw_for_test("harbour.smi", SAMI)).unwrap();
        let document = &parsed.documents[0];
        // The blank SYNC ends the first caption at 3.5 s: no pause of 2 s before the next; the
        // next blank one ends the second at 6 s, 3 s before the last, which starts a paragraph.
        assert_eq!(
            said_when(document),
            [
                vec![("항구에 배가 들어온다 ", 1), ("조수가 늦다 The tide is late", 4)],
                vec![("폭풍이 온다", 9)]
            ]
        );
        assert_eq!(document.metadata["duration_seconds"], serde_json::json!(9.0));
        let none = "<SAMI><BODY><SYNC Start=0><P>&nbsp;</BODY></SAMI>";
        let error = AutoParser.parse(&raw_for_test("none.smi", none)).unwrap_err();
        assert!(error.is_no_document(), "{error}");
    }
}
