//! SAMI captions (`.smi`, `.sami`: Microsoft's Synchronized Accessible Media Interchange, what
//! Windows Media Player read and what Korean subtitles are still mostly written in). Each
//! `<SYNC Start=ms>` starts a caption that shows until the next one; its `<P>`s' text is the
//! caption of their class (`<P Class=KRCC>`: a language the head's style names, `lang:ko-KR`),
//! `<br>` a line; a paragraph whose text is only `&nbsp;` clears its class's caption. Each
//! class is a track of its own (a file of Korean and English captions, two). The head (title,
//! styles) and comments are left out; tags are not closed in SAMI, so the body is read by its
//! SYNC and P tags, not as HTML or XML.

use std::collections::HashMap;

use super::subtitles::{transcript_document, Cue};
use super::{doc_id_for, ParseError, Parsed};
use crate::source::RawDocument;

/// Whether a file's first characters (lower case, white space off) open a SAMI document.
pub(super) fn looks_like_sami(head: &str) -> bool {
    head.trim_start_matches('\u{feff}').trim_start().starts_with("<sami")
}

/// A SAMI document's captions as transcripts: one document, or where paragraphs of several
/// classes hold text (Korean and English captions), one a class, named
/// `<file>#lang=<its language, else its class>` and titled with it; each with its language as
/// metadata `language` where the style names it.
pub(super) fn sami_documents(raw: &RawDocument, text: &str) -> Result<Parsed, ParseError> {
    let mut tracks = read_tracks(text);
    if tracks.is_empty() {
        return Err(ParseError::NoTextIn("SAMI captions with no caption to read".into()));
    }
    let mut warning = None;
    if tracks.len() > MAX_TRACKS {
        // More classes than languages a file gives its viewer to choose from: one document of
        // them all, as a file of one class is (a document a class would be thousands of
        // documents, each hashing the whole file).
        warning = Some(format!(
            "{} classes of captions: read as one transcript, not a document a language",
            tracks.len()
        ));
        let mut cues: Vec<Cue> = tracks.drain(..).flat_map(|track| track.cues).collect();
        cues.sort_by_key(|cue| cue.start_ms);
        tracks.push(Track {
            class: String::new(),
            language: None,
            cues,
        });
    }
    let several = tracks.len() > 1;
    let mut parsed = Parsed::default();
    for track in tracks {
        let mut track_parsed = transcript_document(raw, &track.cues)?;
        for document in &mut track_parsed.documents {
            let name = match (&track.language, track.class.as_str()) {
                (Some(language), _) => language.clone(),
                (None, "") => "unclassed".to_string(),
                (None, class) => class.to_string(),
            };
            if several {
                document.uri = format!("{}#lang={name}", raw.uri);
                document.doc_id = doc_id_for(&document.uri);
                document.title = format!("{} ({name})", document.title);
            }
            if let Some(language) = &track.language {
                document.metadata.insert("language".into(), language.clone().into());
            }
            if let Some(warning) = &warning {
                document.warn(warning.clone());
            }
        }
        parsed.append(track_parsed);
    }
    Ok(parsed)
}

/// The most classes of captions read as a document each (a DVD offers up to 32 subtitle
/// streams; a SAMI file, a few languages).
const MAX_TRACKS: usize = 32;

/// One language's captions: the `<P>`s of one class (`KRCC`, `ENCC`), with the language its
/// style gives it.
#[derive(Debug)]
pub(super) struct Track {
    /// The class, in lower case (empty for paragraphs of no class).
    pub class: String,
    /// Its `lang:` (`ko-KR`), where its style gives one.
    pub language: Option<String>,
    pub cues: Vec<Cue>,
}

/// The captions of a SAMI document, a track per class of paragraphs that holds text, in the
/// order the file first uses each; each track's captions in time order.
pub(super) fn read_tracks(text: &str) -> Vec<Track> {
    let languages = class_languages(text);
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
    // Each SYNC's paragraphs by class: (sync, class, HTML range).
    let mut parts: Vec<(usize, String, std::ops::Range<usize>)> = Vec::new();
    for (index, (_, html)) in syncs.iter().enumerate() {
        parts.extend(
            paragraphs(&lower[html.clone()])
                .into_iter()
                .map(|(class, range)| (index, class, range.start + html.start..range.end + html.start)),
        );
    }
    // Each paragraph's caption shows until the next SYNC with a paragraph of its class (one of
    // `&nbsp;` clears it): found walking back, a SYNC's paragraphs at a time.
    let mut shown_until = vec![None; parts.len()];
    let mut next_of_class: HashMap<&str, usize> = HashMap::new();
    let mut place = parts.len();
    while place > 0 {
        let sync = parts[place - 1].0;
        let first = parts[..place]
            .iter()
            .rposition(|(other, _, _)| *other != sync)
            .map_or(0, |p| p + 1);
        for at in first..place {
            shown_until[at] = next_of_class.get(parts[at].1.as_str()).copied();
        }
        for (_, class, _) in &parts[first..place] {
            next_of_class.insert(class, sync);
        }
        place = first;
    }
    let mut tracks: Vec<Track> = Vec::new();
    let mut track_of_class: HashMap<&str, usize> = HashMap::new();
    for ((index, class, html), next) in parts.iter().zip(shown_until) {
        let start = syncs[*index].0;
        let end = next.map_or(start, |later| syncs[later].0.max(start));
        let mut cue = Cue::starting(start, end);
        for line in split_at_line_breaks(&text[html.clone()], &lower[html.clone()]) {
            cue.add(line);
        }
        if !cue.has_text() {
            continue;
        }
        let track = *track_of_class.entry(class).or_insert_with(|| {
            tracks.push(Track {
                class: class.clone(),
                language: languages.get(class).cloned(),
                cues: Vec::new(),
            });
            tracks.len() - 1
        });
        tracks[track].cues.push(cue);
    }
    for track in &mut tracks {
        track.cues.sort_by_key(|cue| cue.start_ms);
    }
    tracks
}

/// A SYNC's HTML (lower case) cut at its `<P>` tags: each paragraph's class (lower case, empty
/// where it has none) and where its HTML is; text before the first `<P>` is of no class.
fn paragraphs(lower: &str) -> Vec<(String, std::ops::Range<usize>)> {
    let mut opened: Vec<(String, usize, usize)> = Vec::new();
    let mut from = 0;
    while let Some(at) = lower[from..].find("<p").map(|at| at + from) {
        from = at + 2;
        if !lower[from..].starts_with(|c: char| c == '>' || c.is_ascii_whitespace()) {
            continue;
        }
        let Some(end) = lower[at..].find('>').map(|end| end + at) else {
            break;
        };
        opened.push((class_attribute(&lower[at..end]), at, end + 1));
        from = end + 1;
    }
    let mut parts = Vec::new();
    let first = opened.first().map_or(lower.len(), |(_, at, _)| *at);
    if !lower[..first].trim().is_empty() {
        parts.push((String::new(), 0..first));
    }
    for (place, (class, _, text_at)) in opened.iter().enumerate() {
        let end = opened.get(place + 1).map_or(lower.len(), |(_, next, _)| *next);
        parts.push((class.clone(), *text_at..end));
    }
    parts
}

/// A tag's `class` (quoted or not), lower case; empty where it has none.
fn class_attribute(tag: &str) -> String {
    attribute_value(tag, "class").map_or_else(String::new, |value| {
        value
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
            .collect()
    })
}

/// The languages the head's style gives its classes (`.KRCC { Name:Korean; lang:ko-KR; }`),
/// class names in lower case.
fn class_languages(text: &str) -> HashMap<String, String> {
    let head = &text[..text.to_ascii_lowercase().find("<body").unwrap_or(text.len())];
    let mut languages = HashMap::new();
    for rule in head.split('}') {
        let Some((selector, declarations)) = rule.split_once('{') else {
            continue;
        };
        // `.KRCC`, `P.KRCC` (`<STYLE>.KRCC` where no space parts it from the tag).
        let class = selector
            .split_whitespace()
            .next_back()
            .and_then(|s| s.rsplit_once('.'))
            .map(|(_, class)| class);
        let language = declarations.split(';').find_map(|declaration| {
            let (key, value) = declaration.split_once(':')?;
            key.trim()
                .eq_ignore_ascii_case("lang")
                .then(|| value.trim().to_string())
        });
        if let (Some(class), Some(language)) = (class.filter(|c| !c.is_empty()), language.filter(|l| !l.is_empty())) {
            languages.entry(class.to_ascii_lowercase()).or_insert(language);
        }
    }
    languages
}

/// A SYNC tag's `Start` (quoted or not), in milliseconds.
fn start_attribute(tag: &str) -> Option<u64> {
    let digits: String = attribute_value(tag, "start")?
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.get(..digits.len().min(15))?.parse().ok()
}

/// What follows `name=` in a tag (lower case), after its opening quote if it has one.
fn attribute_value<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let after = tag.find(name)? + name.len();
    let value = tag[after..].trim_start().strip_prefix('=')?.trim_start();
    Some(value.trim_start_matches(['"', '\'']))
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
        // A document a language: its class's paragraphs alone.
        let named: Vec<_> = parsed
            .documents
            .iter()
            .map(|d| {
                (
                    d.uri.as_str(),
                    d.title.as_str(),
                    d.metadata["language"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            named,
            [
                ("memory://test/harbour.smi#lang=ko-KR", "harbour (ko-KR)", "ko-KR"),
                ("memory://test/harbour.smi#lang=en-US", "harbour (en-US)", "en-US"),
            ]
        );
        let korean = &parsed.documents[0];
        // The blank SYNC ends the first caption at 3.5 s: no pause of 2 s before the next; the
        // next blank one ends the second at 6 s, 3 s before the last, which starts a paragraph.
        assert_eq!(
            said_when(korean),
            [
                vec![("항구에 배가 들어온다 ", 1), ("조수가 늦다", 4)],
                vec![("폭풍이 온다", 9)]
            ]
        );
        assert_eq!(korean.metadata["duration_seconds"], serde_json::json!(9.0));
        assert_eq!(said_when(&parsed.documents[1]), [vec![("The tide is late", 4)]]);
        assert_ne!(korean.doc_id, parsed.documents[1].doc_id);
        // One class: one document, named by its file.
        let korean_only = SAMI.replace("<P Class=ENCC>The tide is late\r\n", "");
        let parsed = AutoParser.parse(&raw_for_test("harbour.smi", korean_only)).unwrap();
        assert_eq!(parsed.documents.len(), 1);
        assert_eq!(parsed.documents[0].uri, "memory://test/harbour.smi");
        assert_eq!(parsed.documents[0].metadata["language"], "ko-KR");
        assert_eq!(said_when(&parsed.documents[0]), said_when(korean));
        // Each language in SYNCs of its own at the same times, as converters write them: each
        // caption shows until its own class's next SYNC.
        let apart = "<SAMI><HEAD><STYLE>.KRCC { lang:ko-KR; } .ENCC { lang:en-US; }</STYLE></HEAD><BODY>\
            <SYNC Start=1000><P Class=KRCC>첫 번째<SYNC Start=1000><P Class=ENCC>First\
            <SYNC Start=4000><P Class=KRCC>&nbsp;<SYNC Start=4000><P Class=ENCC>&nbsp;</BODY></SAMI>";
        let parsed = AutoParser.parse(&raw_for_test("t.smi", apart)).unwrap();
        let shown: Vec<_> = parsed
            .documents
            .iter()
            .map(|d| (said_when(d), d.metadata["duration_seconds"].as_f64().unwrap()))
            .collect();
        assert_eq!(
            shown,
            [(vec![vec![("첫 번째", 1)]], 4.0), (vec![vec![("First", 1)]], 4.0)]
        );
        // Paragraphs of no class, and of a class no style names.
        let plain = "<SAMI><BODY><SYNC Start=0>Low water<SYNC Start=1000><P Class=X>Marée basse</BODY></SAMI>";
        let parsed = AutoParser.parse(&raw_for_test("t.smi", plain)).unwrap();
        let uris: Vec<&str> = parsed.documents.iter().map(|d| d.uri.as_str()).collect();
        assert_eq!(
            uris,
            ["memory://test/t.smi#lang=unclassed", "memory://test/t.smi#lang=x"]
        );
        let none = "<SAMI><BODY><SYNC Start=0><P>&nbsp;</BODY></SAMI>";
        let error = AutoParser.parse(&raw_for_test("none.smi", none)).unwrap_err();
        assert!(error.is_no_document(), "{error}");
    }

    #[test]
    fn many_syncs_of_many_classes_are_read_in_linear_time() {
        let started = std::time::Instant::now();
        let n = 100_000;
        let mut sami = String::from("<SAMI><HEAD><STYLE>");
        sami.extend((0..n).map(|i| format!(".C{i} {{ lang:x-{i}; }}")));
        sami.push_str("</STYLE></HEAD><BODY>");
        sami.extend((0..n).map(|i| format!("<SYNC Start={i}><P Class=C{i}>w{i}<P Class=K>k{i}")));
        let tracks = super::read_tracks(&sami);
        assert_eq!(tracks.len(), n + 1);
        assert_eq!(tracks[0].language.as_deref(), Some("x-0"));
        assert_eq!(tracks[1].cues.len(), n, "the class every SYNC has");
        // Read whole: one transcript of them all, saying so, not a document a class.
        let parsed = AutoParser.parse(&raw_for_test("many.smi", sami)).unwrap();
        assert_eq!(parsed.documents.len(), 1);
        assert_eq!(
            parsed.documents[0].warnings,
            ["100001 classes of captions: read as one transcript, not a document a language"]
        );
        assert!(started.elapsed().as_secs() < 20, "{:?}", started.elapsed());
    }
}
