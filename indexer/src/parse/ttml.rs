//! Timed Text captions (TTML, and DFXP, its first edition: what broadcasters deliver and
//! Netflix, Amazon and Flash players read; `.ttml`, `.dfxp`, or any XML whose root is `<tt>`).
//! Each `<p>` of the body is a cue of [`super::subtitles`]: its `begin` and `end` (or `dur`),
//! times relative to the `<body>`'s and `<div>`s' own `begin`s, its `<br/>`s line breaks, the
//! text of its `<span>`s read into it; the head (styles, layout, metadata) and `<metadata>`
//! inside the body left out. Times are clock times (`00:00:01.500`, `00:00:01:12` with frames)
//! or offsets (`1.5s`, `1500ms`, `12f`, `15000000t` in the document's `ttp:tickRate`). A
//! paragraph's speaker is its `ttm:agent` (or its first span's, or its `<div>`'s), named by the
//! `<ttm:name>` the head's metadata gives that agent (its `full` name where it has several), or
//! by its id where it has none.

use std::collections::HashMap;

use quick_xml::events::{BytesStart, Event};

use super::ooxml::{local_attribute, local_name};
use super::subtitles::{timestamp_ms, transcript_document, Cue, LATEST_MS};
use super::text::collapse_whitespace;
use super::xml::{lenient_reader, next_event, text_of, Damage};
use super::{ParseError, Parsed};
use crate::source::RawDocument;

/// Frames a second where the document does not say (TTML's default).
const FRAME_RATE: f64 = 30.0;
/// Elements whose text is no caption's.
const LEFT_OUT: [&[u8]; 2] = [b"head", b"metadata"];

/// How a document counts frames and ticks (`ttp:frameRate`, `ttp:subFrameRate`, `ttp:tickRate`).
#[derive(Clone, Copy)]
struct Rates {
    frame: f64,
    tick: f64,
}

impl Rates {
    fn of(root: &BytesStart) -> Self {
        let number = |name: &[u8]| {
            local_attribute(root, name)
                .and_then(|value| value.trim().parse::<f64>().ok())
                .filter(|rate| rate.is_finite() && *rate > 0.0)
        };
        let frame = number(b"frameRate").unwrap_or(FRAME_RATE);
        let sub_frame = number(b"subFrameRate").unwrap_or(1.0);
        // Without a tick rate, a tick is a sub-frame where a frame rate is given, else a second.
        let tick = number(b"tickRate").unwrap_or(match number(b"frameRate") {
            Some(_) => frame * sub_frame,
            None => 1.0,
        });
        Self { frame, tick }
    }

    /// A time expression in milliseconds: a clock time, with frames after a third colon, or an
    /// offset with its unit.
    fn ms(&self, value: &str) -> Option<u64> {
        let value = value.trim();
        let ms = if value.contains(':') {
            let parts: Vec<&str> = value.split(':').collect();
            match parts.len() {
                3 => timestamp_ms(value)? as f64,
                4 => {
                    let frames: f64 = parts[3].parse().ok()?;
                    timestamp_ms(&parts[..3].join(":"))? as f64 + frames * 1000.0 / self.frame
                }
                _ => return None,
            }
        } else {
            let unit_at = value.find(|c: char| c.is_ascii_alphabetic())?;
            let (number, unit) = value.split_at(unit_at);
            let number: f64 = number.parse().ok()?;
            let per_unit = match unit {
                "h" => 3_600_000.0,
                "m" => 60_000.0,
                "s" => 1000.0,
                "ms" => 1.0,
                "f" => 1000.0 / self.frame,
                "t" => 1000.0 / self.tick,
                _ => return None,
            };
            number * per_unit
        };
        (ms.is_finite() && ms >= 0.0).then(|| ms.min(LATEST_MS as f64) as u64)
    }
}

/// The cue being read: when it starts and ends, who says it (its own or its first span's
/// agents, else those of the elements it is in), its lines so far.
struct Paragraph {
    start_ms: Option<u64>,
    end_ms: Option<u64>,
    agent: Option<String>,
    inherited_agent: Option<String>,
    lines: Vec<String>,
    line: String,
}

/// The names the head's metadata gives its agents (`<ttm:agent xml:id="a1"><ttm:name
/// type="full">Ada Lovelace</ttm:name></ttm:agent>`), gathered as the head is read.
#[derive(Default)]
struct AgentNames {
    names: HashMap<String, String>,
    /// The agent being declared, and the name being read for it (whether it is the `full` one).
    declaring: Option<String>,
    naming: Option<(String, bool)>,
}

impl AgentNames {
    fn start(&mut self, element: &BytesStart, name: &[u8]) {
        match name {
            b"agent" => self.declaring = local_attribute(element, b"id"),
            b"name" if self.declaring.is_some() => {
                let full = local_attribute(element, b"type").as_deref() == Some("full");
                self.naming = Some((String::new(), full));
            }
            _ => {}
        }
    }

    fn text(&mut self, text: &str) {
        if let Some((name, _)) = self.naming.as_mut() {
            name.push_str(text);
        }
    }

    fn end(&mut self, name: &[u8]) {
        match name {
            b"agent" => self.declaring = None,
            b"name" => {
                let (Some(agent), Some((read, full))) = (&self.declaring, self.naming.take()) else {
                    return;
                };
                let read = collapse_whitespace(&read);
                if !read.is_empty() && (full || !self.names.contains_key(agent)) {
                    self.names.insert(agent.clone(), read);
                }
            }
            _ => {}
        }
    }

    /// The name of the first of an element's agents (`ttm:agent` holds ids apart by spaces) that
    /// has one, else the first's id (an agent is someone, named or not).
    fn name_of(&self, agents: &str) -> Option<String> {
        let mut ids = agents.split_whitespace();
        ids.clone()
            .find_map(|id| self.names.get(id).cloned())
            .or_else(|| ids.next().map(str::to_string))
    }
}

pub(super) fn parse(raw: &RawDocument, text: &str) -> Result<Parsed, ParseError> {
    let mut reader = lenient_reader(text);
    let mut rates = Rates {
        frame: FRAME_RATE,
        tick: 1.0,
    };
    // Each open element's begin (the time its children's times count from).
    let mut begins: Vec<u64> = Vec::new();
    // Each open element's agents, its own or those it is inside.
    let mut agents: Vec<Option<String>> = Vec::new();
    let mut agent_names = AgentNames::default();
    let mut left_out_depth = 0usize;
    let mut paragraph: Option<Paragraph> = None;
    let mut cues: Vec<Cue> = Vec::new();
    let mut damage: Option<Damage> = None;
    while let Some(event) = next_event(
        &mut reader,
        "TTML",
        !cues.is_empty() || paragraph.is_some(),
        &mut damage,
    )? {
        match event {
            Event::Start(start) => {
                let name = local_name(start.name().as_ref()).to_vec();
                if begins.is_empty() && name == b"tt" {
                    rates = Rates::of(&start);
                }
                let parent = begins.last().copied().unwrap_or(0);
                let begin = local_attribute(&start, b"begin").and_then(|b| rates.ms(&b));
                begins.push(parent.saturating_add(begin.unwrap_or(0)));
                let own_agent = local_attribute(&start, b"agent");
                let inherited_agent = agents.last().cloned().flatten();
                agents.push(own_agent.clone().or_else(|| inherited_agent.clone()));
                if LEFT_OUT.contains(&name.as_slice()) || left_out_depth > 0 {
                    left_out_depth += 1;
                    agent_names.start(&start, &name);
                    continue;
                }
                match (name.as_slice(), paragraph.as_mut()) {
                    (b"p", None) => {
                        let start_ms = begin.map(|b| parent.saturating_add(b));
                        let end = local_attribute(&start, b"end").and_then(|e| rates.ms(&e));
                        let duration = local_attribute(&start, b"dur").and_then(|d| rates.ms(&d));
                        let end_ms = match (end, duration, start_ms) {
                            (Some(end), _, _) => Some(parent.saturating_add(end)),
                            (None, Some(duration), Some(start_ms)) => Some(start_ms.saturating_add(duration)),
                            _ => None,
                        };
                        paragraph = Some(Paragraph {
                            start_ms,
                            end_ms,
                            agent: own_agent.clone(),
                            inherited_agent,
                            lines: Vec::new(),
                            line: String::new(),
                        });
                    }
                    (_, Some(open)) => {
                        // A timed span of an untimed paragraph (word-timed captions) times it.
                        if open.start_ms.is_none() {
                            open.start_ms = begin.map(|b| parent.saturating_add(b));
                        }
                        // The first span that names a speaker names the paragraph's.
                        if open.agent.is_none() {
                            open.agent = own_agent;
                        }
                    }
                    _ => {}
                }
            }
            Event::Empty(empty) if left_out_depth == 0 => {
                if let (b"br", Some(open)) = (local_name(empty.name().as_ref()), paragraph.as_mut()) {
                    open.lines.push(std::mem::take(&mut open.line));
                }
            }
            Event::Text(text) if left_out_depth > 0 => agent_names.text(&text_of(&text)),
            Event::Text(text) => {
                if let Some(open) = paragraph.as_mut() {
                    open.line.push_str(&text_of(&text));
                }
            }
            Event::CData(data) if left_out_depth == 0 => {
                if let Some(open) = paragraph.as_mut() {
                    open.line.push_str(&String::from_utf8_lossy(&data));
                }
            }
            Event::End(end) => {
                begins.pop();
                agents.pop();
                if left_out_depth > 0 {
                    left_out_depth -= 1;
                    agent_names.end(local_name(end.name().as_ref()));
                    continue;
                }
                if local_name(end.name().as_ref()) == b"p" {
                    cues.extend(paragraph.take().map(|p| cue_of(p, &agent_names)));
                }
            }
            _ => {}
        }
    }
    cues.extend(paragraph.take().map(|p| cue_of(p, &agent_names)));
    cues.sort_by_key(|cue| cue.start_ms);
    if cues.is_empty() {
        return Err(ParseError::NoTextIn("a TTML document with no caption (`<p>`)".into()));
    }
    let mut parsed = match (transcript_document(raw, &cues), &damage) {
        // Captions with no words before the XML broke: a broken file, not an empty one.
        (Err(ParseError::NoTextIn(_)), Some((at, error))) => {
            return Err(ParseError::Corrupt(format!("TTML at byte {at}: {error}")))
        }
        (parsed, _) => parsed?,
    };
    if let Some((at, error)) = damage {
        parsed.documents.iter_mut().for_each(|document| {
            document.warn(format!(
                "the TTML cannot be read on from byte {at} ({error}); the captions after it were left out"
            ))
        });
    }
    Ok(parsed)
}

/// A paragraph as a cue: its lines, their white space collapsed as TTML's default is, its
/// agent's name its voice.
fn cue_of(mut paragraph: Paragraph, agent_names: &AgentNames) -> Cue {
    paragraph.lines.push(paragraph.line);
    let start_ms = paragraph.start_ms.unwrap_or(0);
    let mut cue = Cue::starting(start_ms, paragraph.end_ms.unwrap_or(start_ms).max(start_ms));
    let agent = paragraph.agent.or(paragraph.inherited_agent);
    cue.voice = agent.as_deref().and_then(|agents| agent_names.name_of(agents));
    for line in &paragraph.lines {
        cue.add_text(collapse_whitespace(line));
    }
    cue
}

#[cfg(test)]
mod tests {
    use crate::parse::{detect_format, raw_for_test, AutoParser, Format, Parser};

    fn texts(name: &str, xml: &str) -> Vec<String> {
        let parsed = AutoParser.parse(&raw_for_test(name, xml.to_string())).unwrap();
        parsed.documents[0].blocks.iter().map(|b| b.text.clone()).collect()
    }

    const DFXP: &str = r#"<?xml version="1.0" encoding="utf-8"?>
<tt xmlns="http://www.w3.org/ns/ttml" xmlns:ttp="http://www.w3.org/ns/ttml#parameter" ttp:tickRate="10000000" xml:lang="en">
  <head>
    <styling><style xml:id="s1" tts:color="white"/></styling>
    <metadata><ttm:title>Harbour board, episode 1</ttm:title></metadata>
  </head>
  <body>
    <div>
      <p begin="10000000t" end="30000000t" style="s1">Where is the<br/>harbour   master?</p>
      <p begin="31000000t" end="40000000t"><span tts:fontStyle="italic">On the quay</span> &amp; waiting &lt;LAUGHING&gt;.</p>
      <p begin="7540000000t" end="7560000000t">A storm is coming.</p>
    </div>
  </body>
</tt>"#;

    #[test]
    fn paragraphs_are_cues_with_their_ticks_and_the_head_is_left_out() {
        assert_eq!(detect_format("episode.dfxp", DFXP.as_bytes()).unwrap(), Format::Xml);
        assert_eq!(detect_format("episode.xml", DFXP.as_bytes()).unwrap(), Format::Xml);
        assert_eq!(
            texts("episode.dfxp", DFXP),
            [
                "Where is the harbour master? On the quay & waiting <LAUGHING>.",
                "A storm is coming."
            ]
        );
        let parsed = AutoParser.parse(&raw_for_test("episode.dfxp", DFXP)).unwrap();
        let document = &parsed.documents[0];
        assert_eq!(document.title, "episode");
        assert_eq!(document.metadata["duration_seconds"], serde_json::json!(756.0));
        assert_eq!(document.blocks[0].times[0].seconds, 1);
        assert_eq!(document.blocks[1].times[0].seconds, 754);
    }

    #[test]
    fn clock_times_frames_offsets_and_a_divs_begin_are_read() {
        let ttml = r#"<tt xmlns="http://www.w3.org/ns/ttml" xmlns:ttp="http://www.w3.org/ns/ttml#parameter" ttp:frameRate="25">
<body><div begin="60s">
  <p begin="00:00:01.000" end="00:00:02.000">one</p>
  <p begin="00:00:02:05" dur="1s">two</p>
  <p begin="6s" end="7s">three</p>
  <p><span begin="1500ms" end="2s">word</span> timed</p>
</div></body></tt>"#;
        assert_eq!(detect_format("clip.ttml", ttml.as_bytes()).unwrap(), Format::Xml);
        let parsed = AutoParser.parse(&raw_for_test("clip.ttml", ttml)).unwrap();
        let times: Vec<(String, u32)> = parsed.documents[0]
            .blocks
            .iter()
            .flat_map(|block| {
                block
                    .times
                    .iter()
                    .map(|mark| (block.text[mark.at as usize..].to_string(), mark.seconds))
            })
            .collect();
        // The span-timed paragraph starts at 61.5 s (the second it shares with "one"), the
        // framed one at 62.2 s: one paragraph, as no pause of 2 s comes between them; "three"
        // after a pause.
        assert_eq!(
            times,
            [
                ("one word timed two".to_string(), 61),
                ("two".to_string(), 62),
                ("three".to_string(), 66)
            ]
        );
    }

    #[test]
    fn agents_named_in_the_head_are_the_paragraphs_speakers() {
        let ttml = r#"<tt xmlns="http://www.w3.org/ns/ttml" xmlns:ttm="http://www.w3.org/ns/ttml#metadata">
<head><metadata>
  <ttm:agent xml:id="ada" type="person"><ttm:name type="alias">Ada</ttm:name><ttm:name type="full">Ada Lovelace</ttm:name></ttm:agent>
  <ttm:agent xml:id="charles" type="person"><ttm:name>Charles Babbage</ttm:name></ttm:agent>
  <ttm:agent xml:id="crowd" type="group"/>
</metadata></head>
<body><div ttm:agent="ada">
  <p begin="1s" end="2s">Good morning.</p>
  <p begin="2.1s" end="3s" ttm:agent="charles">Morning.</p>
  <p begin="3.1s" end="4s"><span ttm:agent="charles">The tide</span> is late.</p>
  <p begin="4.1s" end="5s" ttm:agent="crowd">Hear, hear.</p>
</div></body></tt>"#;
        assert_eq!(
            texts("board.ttml", ttml),
            [
                "Ada Lovelace: Good morning.",
                "Charles Babbage: Morning. The tide is late.",
                "crowd: Hear, hear."
            ]
        );
        let parsed = AutoParser.parse(&raw_for_test("board.ttml", ttml)).unwrap();
        assert_eq!(
            parsed.documents[0].metadata["speakers"],
            serde_json::json!(["Ada Lovelace", "Charles Babbage", "crowd"])
        );
    }

    #[test]
    fn a_document_without_captions_or_broken_says_so() {
        let empty = r#"<tt xmlns="http://www.w3.org/ns/ttml"><head/><body><div/></body></tt>"#;
        let error = AutoParser.parse(&raw_for_test("empty.ttml", empty)).unwrap_err();
        assert!(error.is_no_document(), "{error}");
        let broken = r#"<tt><body><p begin="1s" end="2s">kept</p><p begin="3s">lost <"#;
        let parsed = AutoParser.parse(&raw_for_test("broken.ttml", broken)).unwrap();
        // The words read before the break are kept, and the document says where it broke.
        assert_eq!(parsed.documents[0].blocks[0].text, "kept lost");
        assert!(parsed.documents[0].warnings[0].contains("cannot be read on from byte"));
        // XML that breaks before a caption's words: a broken file.
        let unclosed = r#"<tt><body><p begin="1s" end="2s"><span a="x></p></body></tt>"#;
        let error = AutoParser.parse(&raw_for_test("unclosed.ttml", unclosed)).unwrap_err();
        assert!(matches!(error, crate::parse::ParseError::Corrupt(_)), "{error}");
        // Times past a year are a broken file's: held to a year, no overflow.
        let far = r#"<tt><body><p begin="99999999999999h" end="1e308s">far</p></body></tt>"#;
        assert_eq!(texts("far.ttml", far), ["far"]);
    }
}
