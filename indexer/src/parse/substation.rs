//! SubStation Alpha subtitles (`.ass`, `.ssa`: what Aegisub writes, fansubs and karaoke): the
//! `[Events]` section's `Dialogue:` lines, their fields named by its `Format:` line (by
//! default `Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text`; the text
//! last, commas and all). Each dialogue a cue of [`super::subtitles`]: its start and end
//! (`0:00:01.50`), its `Name` the speaker, its text with the override blocks (`{\i1}`, `{\k20}`)
//! off and `\N` a space; a dialogue that draws (`{\p1}`: vector commands, not words) and
//! `Comment:` lines left out. Cues in the order they show (typesetting is often written after the
//! dialogue it goes with).

use super::subtitles::{timestamp_ms, Cue};

/// The fields a `Format:` line names when the file has none.
const DEFAULT_FORMAT: [&str; 10] = [
    "layer", "start", "end", "style", "name", "marginl", "marginr", "marginv", "effect", "text",
];

/// Whether a file's first line is SubStation's `[Script Info]`.
pub(super) fn looks_like_substation(head: &str) -> bool {
    head.lines()
        .next()
        .is_some_and(|line| line.trim().eq_ignore_ascii_case("[Script Info]"))
}

/// The dialogues of a file's `[Events]` section as cues (none where it has no such section).
pub(super) fn read_dialogues(text: &str) -> Option<Vec<Cue>> {
    let mut in_events = false;
    let mut seen_events = false;
    let mut format: Vec<String> = DEFAULT_FORMAT.iter().map(|f| f.to_string()).collect();
    let mut cues = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') && line.ends_with(']') {
            in_events = line.eq_ignore_ascii_case("[Events]");
            seen_events |= in_events;
            continue;
        }
        if !in_events {
            continue;
        }
        let Some((kind, fields)) = line.split_once(':') else {
            continue;
        };
        match kind.trim().to_ascii_lowercase().as_str() {
            "format" => format = fields.split(',').map(|f| f.trim().to_ascii_lowercase()).collect(),
            "dialogue" => cues.extend(dialogue(fields, &format)),
            _ => {}
        }
    }
    cues.sort_by_key(|cue| cue.start_ms);
    seen_events.then_some(cues)
}

/// One `Dialogue:` line's fields as a cue; none where its times do not read or it draws.
fn dialogue(fields: &str, format: &[String]) -> Option<Cue> {
    let values: Vec<&str> = fields.splitn(format.len().max(1), ',').map(str::trim).collect();
    let field = |name: &str| {
        format
            .iter()
            .position(|f| f == name)
            .and_then(|at| values.get(at).copied())
    };
    let text = field("text")?;
    if draws(text) {
        return None;
    }
    let mut cue = Cue::starting(timestamp_ms(field("start")?)?, timestamp_ms(field("end")?)?);
    cue.add(text);
    if let Some(name) = field("name").filter(|n| !n.is_empty()) {
        cue.voice = Some(name.to_string());
    }
    Some(cue)
}

/// Whether a dialogue's overrides switch drawing on (`\p1`, `\p2`...): its text is then vector
/// commands (`m 0 0 l 100 0`).
fn draws(text: &str) -> bool {
    let mut rest = text;
    while let Some(at) = rest.find("\\p") {
        rest = &rest[at + 2..];
        if rest.starts_with(|c: char| c.is_ascii_digit() && c != '0') {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use crate::parse::{detect_format, raw_for_test, AutoParser, Format, Parser};

    const SCRIPT: &str = "[Script Info]\r\nTitle: Harbour\r\nScriptType: v4.00+\r\n\r\n\
        [V4+ Styles]\r\nFormat: Name, Fontname, Fontsize\r\nStyle: Default,Arial,20\r\n\r\n\
        [Events]\r\nFormat: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\r\n\
        Dialogue: 0,0:00:04.00,0:00:06.50,Default,Ada,0,0,0,,{\\i1}The tide{\\i0} turns,\\Nat noon.\r\n\
        Comment: 0,0:00:05.00,0:00:06.00,Default,,0,0,0,,a note to the typesetter\r\n\
        Dialogue: 0,0:00:01.00,0:00:03.00,Default,Ada,0,0,0,,{\\k20}Good {\\k30}morning.\r\n\
        Dialogue: 1,0:00:01.00,0:00:09.00,Sign,,0,0,0,,{\\p1}m 0 0 l 100 0 100 100{\\p0}\r\n\
        Dialogue: 0,0:00:10.00,0:00:12.00,Default,Charles,0,0,0,,Thank you, Ada.\r\n";

    #[test]
    fn dialogues_are_cues_in_time_order_with_their_speakers() {
        assert_eq!(detect_format("harbour.ass", b"x").unwrap(), Format::Subtitles);
        assert_eq!(detect_format("harbour.SSA", b"x").unwrap(), Format::Subtitles);
        assert_eq!(detect_format("harbour", SCRIPT.as_bytes()).unwrap(), Format::Subtitles);
        let parsed = AutoParser.parse(&raw_for_test("harbour.ass", SCRIPT)).unwrap();
        let document = &parsed.documents[0];
        let texts: Vec<&str> = document.blocks.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "Ada: Good morning. The tide turns, at noon.",
                "Charles: Thank you, Ada."
            ]
        );
        assert_eq!(document.metadata["speakers"], serde_json::json!(["Ada", "Charles"]));
        assert_eq!(document.metadata["duration_seconds"], serde_json::json!(12.0));
    }

    #[test]
    fn a_script_without_events_or_dialogues_says_so() {
        let styles_only = "[Script Info]\nTitle: x\n\n[V4+ Styles]\nStyle: Default,Arial,20\n";
        let error = AutoParser.parse(&raw_for_test("empty.ass", styles_only)).unwrap_err();
        assert_eq!(
            error.to_string(),
            "no text content found: a SubStation script with no [Events] section"
        );
        let broken = "[Events]\nDialogue: 0,later,never,Default,,0,0,0,,words\n";
        let error = AutoParser.parse(&raw_for_test("broken.ass", broken)).unwrap_err();
        assert_eq!(
            error.to_string(),
            "no text content found: a SubStation script with no dialogue to read"
        );
    }
}
