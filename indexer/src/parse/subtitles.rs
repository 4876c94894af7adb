//! Subtitles and transcripts: SubRip (`.srt`), WebVTT (`.vtt`: what YouTube, Zoom, Teams and
//! Whisper write) and SubViewer (`.sbv`: YouTube Studio's), told by a first line `WEBVTT`, a cue
//! number then a timing line, or a timing line then text, whatever their name; SubStation
//! Alpha's dialogues ([`super::substation`]), Timed Text's paragraphs ([`super::ttml`]) and LRC
//! lyrics' timed lines ([`super::lyrics`]), SAMI's SYNCs ([`super::sami`]) and MicroDVD's
//! frame-timed lines ([`super::microdvd`]) as cues too. One document per file, titled by its
//! name: the cues' text in order, their numbers, timings and settings, the WebVTT header,
//! `NOTE`, `STYLE` and `REGION` blocks left out; markup taken off (`<i>`, `<c.yellow>`,
//! `<font color=...>`, karaoke timestamps, `{\an8}`), ruby text (`<rt>`) left out, character
//! references decoded. A cue's lines are one line of text; cues follow each other in a
//! paragraph until a pause of [`PAUSE_MS`] or another speaker (a `<v Name>` voice, which starts
//! its paragraph as `Name: `; or a name written before the words, as Zoom writes every cue,
//! [`take_written_speakers`]). Each paragraph marks where its cues start (`Block::times`), so
//! each chunk says the second its first words are said. Captions that roll up (each cue
//! starting with the last lines of the one before, as broadcast captions and YouTube's automatic
//! ones do) are read once ([`new_lines`]). Metadata `duration_seconds` (the last cue's end) and
//! `speakers` (the voices, in the order they first speak).

use super::character_references::decode_character_references;
use super::text::{collapse_whitespace, decode_raw_text};
use super::{Block, Document, ParseError, Parsed, TimeMark};
use crate::source::RawDocument;

/// The latest time a transcript's reader keeps (a year): a time past it is a broken file's, not
/// a recording's, and held to it nothing added to it can overflow.
pub(super) const LATEST_MS: u64 = 365 * 86_400_000;

/// A pause between two cues (the first's end to the next one's start) that starts a paragraph.
pub const PAUSE_MS: u64 = 2_000;

/// Whether a file's first characters are subtitles': `WEBVTT` (after a byte order mark), a
/// cue number on a line of its own, then a timing line (`00:00:01,000 --> 00:00:04,000`), or a
/// timing line first (SubViewer's `0:00:00.378,0:00:11.378`, a cue without its number).
pub(super) fn looks_like_subtitles(bytes: &[u8]) -> bool {
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(1024)]);
    let head = head.trim_start_matches('\u{feff}').trim_start();
    if super::substation::looks_like_substation(head) {
        return true;
    }
    if let Some(rest) = head.strip_prefix("WEBVTT") {
        return rest.is_empty() || rest.starts_with([' ', '\t', '\r', '\n']);
    }
    let mut lines = head.lines().map(str::trim);
    let (Some(number), Some(timing)) = (lines.next(), lines.next()) else {
        return false;
    };
    let timing_then_text = cue_timing(number).is_some() && !timing.is_empty() && cue_timing(timing).is_none();
    timing_then_text || is_cue_number(number) && cue_timing(timing).is_some()
}

pub(super) fn parse(raw: &RawDocument) -> Result<Parsed, ParseError> {
    let text = decode_raw_text(raw)?;
    let text = text.trim_start_matches('\u{feff}');
    let extension = raw.relative_path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    if extension.as_deref() == Some("lrc") {
        return lyrics_document(raw, text);
    }
    let substation = super::substation::looks_like_substation(text);
    if matches!(extension.as_deref(), Some("ass" | "ssa")) || substation {
        return match super::substation::read_dialogues(text) {
            // A file so named that is no script (no `[Script Info]`, no `[Events]`).
            None if !substation => read_as_text(raw, "no SubStation script (`[Script Info]`, `[Events]`) found"),
            None => Err(ParseError::NoTextIn(
                "a SubStation script with no [Events] section".into(),
            )),
            Some(cues) if cues.is_empty() => Err(ParseError::NoTextIn(
                "a SubStation script with no dialogue to read".into(),
            )),
            Some(cues) => transcript_document(raw, &cues),
        };
    }
    let head = text[..text.floor_char_boundary(512)].to_ascii_lowercase();
    if matches!(extension.as_deref(), Some("smi" | "sami")) || super::sami::looks_like_sami(&head) {
        return super::sami::sami_documents(raw, text);
    }
    if super::microdvd::looks_like_microdvd(&head) {
        return transcript_document(raw, &super::microdvd::read_cues(text));
    }
    let mut cues = read_cues(&text.replace("\r\n", "\n").replace('\r', "\n"));
    take_written_speakers(&mut cues);
    if cues.is_empty() && text.starts_with("WEBVTT") {
        return Err(ParseError::NoTextIn("a WebVTT file with no cue".into()));
    }
    if cues.is_empty() {
        return read_as_text(raw, "no subtitle cue (a `00:00:01,000 --> 00:00:04,000` line) found");
    }
    transcript_document(raw, &cues)
}

/// A file named as subtitles that holds none, read as the text it is, saying so.
fn read_as_text(raw: &RawDocument, what_was_not_found: &str) -> Result<Parsed, ParseError> {
    let mut parsed = super::text::parse(raw)?;
    let warning = format!("{what_was_not_found}: read as plain text");
    parsed.documents.iter_mut().for_each(|d| d.warn(warning.clone()));
    Ok(parsed)
}

/// An LRC file's lyrics as a transcript, titled by its `[ti:]` tag, its artist and album as
/// metadata.
fn lyrics_document(raw: &RawDocument, text: &str) -> Result<Parsed, ParseError> {
    let lyrics = super::lyrics::read_lyrics(text);
    if lyrics.cues.is_empty() {
        return read_as_text(raw, "no timed line (a `[00:12.50]` tag) found");
    }
    let mut parsed = transcript_document(raw, &lyrics.cues)?;
    for document in &mut parsed.documents {
        if let Some(title) = &lyrics.title {
            document.title = title.clone();
        }
        for (key, value) in [("artist", &lyrics.artist), ("album", &lyrics.album)] {
            if let Some(value) = value {
                document.metadata.insert(key.into(), value.clone().into());
            }
        }
    }
    Ok(parsed)
}

/// The document of a file's cues: its paragraphs, duration and speakers.
pub(super) fn transcript_document(raw: &RawDocument, cues: &[Cue]) -> Result<Parsed, ParseError> {
    let transcript = Transcript::of(cues);
    if transcript.paragraphs.is_empty() {
        let held = match cues.len() {
            1 => "only cue holds".to_string(),
            n => format!("{n} cues hold"),
        };
        return Err(ParseError::NoTextIn(format!("subtitles whose {held} no text")));
    }
    let blocks = transcript
        .paragraphs
        .into_iter()
        .map(|paragraph| Block {
            times: paragraph.times,
            ..Block::text(paragraph.text, &[])
        })
        .collect();
    let mut document = Document::from_raw(raw, Document::stem_of(raw), blocks);
    let last_end = cues.iter().map(|c| c.end_ms).max().unwrap_or_default();
    document
        .metadata
        .insert("duration_seconds".into(), (last_end as f64 / 1000.0).into());
    if !transcript.speakers.is_empty() {
        document.metadata.insert("speakers".into(), transcript.speakers.into());
    }
    Ok(Parsed::one(document))
}

/// One cue: when it shows, who speaks (its first `<v>` voice), its lines as read (markup off),
/// and whether its words carry karaoke timestamps (`the<00:00:00.420><c> tide</c>`).
#[derive(Debug, Default)]
pub(super) struct Cue {
    pub start_ms: u64,
    end_ms: u64,
    pub voice: Option<String>,
    lines: Vec<String>,
    timed_words: bool,
}

impl Cue {
    pub(super) fn starting(start_ms: u64, end_ms: u64) -> Self {
        Self {
            start_ms,
            end_ms,
            ..Default::default()
        }
    }

    /// The cue without its last line where that is a cue's number.
    fn without_last_number(mut self) -> Self {
        if self.lines.last().is_some_and(|line| is_cue_number(line)) {
            self.lines.pop();
        }
        self
    }

    /// Adds a line that holds no markup (read from XML: a `<` in it is a character).
    pub(super) fn add_text(&mut self, line: String) {
        if !line.is_empty() {
            self.lines.push(line);
        }
    }

    /// Whether the cue has a line of text.
    pub(super) fn has_text(&self) -> bool {
        !self.lines.is_empty()
    }

    /// Adds a line of the file, its markup taken off.
    pub(super) fn add(&mut self, line: &str) {
        let read = plain_text(line);
        if self.voice.is_none() {
            self.voice = read.voice;
        }
        self.timed_words |= read.timed_words;
        if !read.text.is_empty() {
            self.lines.push(read.text);
        }
    }
}

/// Where a line of the file is: in a cue's text, in a block left out (the WebVTT header, a
/// `NOTE`, `STYLE` or `REGION`), or between them.
#[derive(PartialEq)]
enum Place {
    Cue,
    LeftOut,
    Between,
}

/// The cues of a file (its line ends made `\n`), in order. A line between cues that is not a
/// cue's number or identifier (text after a blank line inside a cue, as hand-edited files
/// have) is read into the cue before it.
fn read_cues(text: &str) -> Vec<Cue> {
    let mut cues: Vec<Cue> = Vec::new();
    let mut current: Option<Cue> = None;
    let mut between: Vec<&str> = Vec::new();
    let first = text.lines().next().unwrap_or_default();
    let mut place = match first.starts_with("WEBVTT") {
        true => Place::LeftOut,
        false => Place::Between,
    };
    let strays_into = |cues: &mut Vec<Cue>, lines: &mut Vec<&str>| {
        if let Some(cue) = cues.last_mut() {
            lines.iter().filter(|l| !is_cue_number(l)).for_each(|l| cue.add(l));
        }
        lines.clear();
    };
    for line in text.split('\n') {
        let trimmed = line.trim();
        if let Some((start_ms, end_ms)) = cue_timing(trimmed) {
            // A cue not ended by a blank line: its last line is the next cue's number.
            cues.extend(current.take().map(Cue::without_last_number));
            // The line just before a timing line is its cue's number or identifier.
            between.pop();
            strays_into(&mut cues, &mut between);
            current = Some(Cue::starting(start_ms, end_ms));
            place = Place::Cue;
        } else if trimmed.is_empty() {
            cues.extend(current.take());
            strays_into(&mut cues, &mut between);
            place = Place::Between;
        } else {
            match place {
                Place::Cue => current.as_mut().expect("a cue is open in its place").add(trimmed),
                Place::LeftOut => {}
                Place::Between if between.is_empty() && starts_a_block_left_out(trimmed) => place = Place::LeftOut,
                Place::Between => between.push(trimmed),
            }
        }
    }
    cues.extend(current.take());
    strays_into(&mut cues, &mut between);
    cues
}

/// Speakers' names written before their words, `Ada Lovelace: Good morning.`, as Zoom's
/// transcripts (and captions for the hard of hearing) write them, made the cues' voices where
/// at least half of the cues with text start so and no cue has a `<v>` voice: the name taken off
/// the cue's first line (a paragraph then starts with it, as a voice's does). In other files a
/// line such as `Note: the quay is closed.` stays as it is.
fn take_written_speakers(cues: &mut [Cue]) {
    let with_text = cues.iter().filter(|cue| !cue.lines.is_empty()).count();
    let written = cues
        .iter()
        .filter(|cue| cue.lines.first().is_some_and(|line| written_speaker(line).is_some()))
        .count();
    if with_text < 2 || written * 2 < with_text || cues.iter().any(|cue| cue.voice.is_some()) {
        return;
    }
    for cue in cues.iter_mut() {
        let Some(first) = cue.lines.first_mut() else { continue };
        if let Some((name, words)) = written_speaker(first) {
            let (name, words) = (name.to_string(), words.to_string());
            cue.voice = Some(name);
            *first = words;
        }
    }
}

/// A line's speaker and words where it starts with a name and a colon (`Ada Lovelace: ...`,
/// `田中：...`): at most four words and 40 characters, not starting in lower case, without
/// marks a sentence has, and words after it.
fn written_speaker(line: &str) -> Option<(&str, &str)> {
    let (name, words) = line.split_once(": ").or_else(|| line.split_once('：'))?;
    let (name, words) = (name.trim(), words.trim());
    let a_name = !name.is_empty()
        && name.chars().count() <= 40
        && name.split_whitespace().count() <= 4
        && !name.starts_with(char::is_lowercase)
        && !name.contains(['?', '!', ',', ';', '"', '(', ')', '[', ']', ':']);
    (a_name && !words.is_empty()).then_some((name, words))
}

/// WebVTT's blocks that are no cue: a comment, a style sheet, a region's definition.
fn starts_a_block_left_out(line: &str) -> bool {
    ["NOTE", "STYLE", "REGION"].iter().any(|word| {
        line.strip_prefix(word)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t']))
    })
}

fn is_cue_number(line: &str) -> bool {
    !line.is_empty() && line.len() <= 9 && line.bytes().all(|b| b.is_ascii_digit())
}

/// A timing line's start and end in milliseconds: `00:01:02,500 --> 00:01:04,000` (SubRip),
/// `01:02.500 --> 01:04.000 align:start` (WebVTT, settings after the end), `0:1:2.5` (Teams).
fn cue_timing(line: &str) -> Option<(u64, u64)> {
    match line.split_once("-->") {
        Some((start, rest)) => {
            let end = rest.split_whitespace().next()?;
            Some((timestamp_ms(start.trim())?, timestamp_ms(end)?))
        }
        // SubViewer's (YouTube's `.sbv`): `0:00:00.378,0:00:11.378`, hours to milliseconds.
        None => {
            let (start, end) = line.split_once(',')?;
            let full = |time: &str| (time.matches(':').count() == 2 && time.contains('.')).then(|| timestamp_ms(time));
            Some((full(start)??, full(end)??))
        }
    }
}

/// `[[hours:]minutes:]seconds[.fraction]` (a comma for the point too), in milliseconds.
pub(super) fn timestamp_ms(text: &str) -> Option<u64> {
    let (whole, fraction) = match text.split_once(['.', ',']) {
        Some((whole, fraction)) => (whole, fraction),
        None => (text, ""),
    };
    let number = |digits: &str| -> Option<u64> {
        let fits = !digits.is_empty() && digits.len() <= 9 && digits.bytes().all(|b| b.is_ascii_digit());
        fits.then(|| digits.parse().ok()).flatten()
    };
    let parts: Vec<&str> = whole.split(':').collect();
    if !(2..=3).contains(&parts.len()) {
        return None;
    }
    let seconds = parts
        .iter()
        .try_fold(0u64, |total, part| Some(total * 60 + number(part)?))?;
    let millis = match fraction {
        "" => 0,
        // Its first three bytes digits (read as before), so that none is cut inside a character.
        digits if !digits.bytes().take(3).all(|b| b.is_ascii_digit()) => return None,
        digits => {
            let kept = &digits[..digits.len().min(3)];
            number(kept)? * 10u64.pow(3 - kept.len() as u32)
        }
    };
    Some(seconds * 1000 + millis)
}

/// A cue line as read: its text, the speaker its first `<v Name>` tag names, whether it holds
/// a karaoke timestamp.
#[derive(Debug, Default, PartialEq)]
struct CueLine {
    text: String,
    voice: Option<String>,
    timed_words: bool,
}

/// A cue line's text without its markup (tags, karaoke timestamps, ruby text, `{\...}`
/// overrides; SubStation's `\N` and `\h` read as spaces), its character references decoded and
/// its spaces collapsed.
fn plain_text(line: &str) -> CueLine {
    let mut read = CueLine::default();
    let mut text = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find(['<', '{']) {
        text.push_str(&rest[..at]);
        rest = &rest[at..];
        // A tag's name (or a karaoke timestamp) follows its `<` at once: `a < b` is text.
        let starts_a_tag = rest[1..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '/');
        let (close, is_tag) = match rest.as_bytes()[0] {
            b'<' if starts_a_tag => ('>', true),
            b'{' if rest[1..].starts_with('\\') => ('}', false),
            opening => {
                text.push(opening as char);
                rest = &rest[1..];
                continue;
            }
        };
        // Up to the next `<` or `{` at most, so that every character is looked at a few times.
        let end = rest[1..].find([close, '<', '{']).map(|end| end + 1);
        let Some(end) = end.filter(|end| rest.as_bytes()[*end] == close as u8) else {
            text.push_str(&rest[..1]);
            rest = &rest[1..];
            continue;
        };
        let inside = &rest[1..end];
        rest = &rest[end + 1..];
        if !is_tag {
            continue;
        }
        if let Some(name) = inside.strip_prefix('v').filter(|n| n.starts_with([' ', '.'])) {
            let name = name.split_once(' ').map_or("", |(_, name)| name).trim();
            if read.voice.is_none() && !name.is_empty() {
                read.voice = Some(name.to_string());
            }
        }
        read.timed_words |= timestamp_ms(inside).is_some();
        if inside == "rt" || inside.starts_with("rt ") || inside.starts_with("rt.") {
            // Ruby text (a reading written above the text) is left out, to its end tag.
            rest = rest.find("</rt>").map_or("", |end| &rest[end + "</rt>".len()..]);
        }
    }
    text.push_str(rest);
    let text = ["\\N", "\\n", "\\h"]
        .iter()
        .fold(decode_character_references(&text), |text, escape| {
            text.replace(escape, " ")
        });
    read.text = collapse_whitespace(&text);
    read
}

/// Lines a roll-up caption carries on from the cue before, at most (CEA-608 rolls up to four).
const ROLLED_LINES: usize = 4;

/// The lines of `cue` that the cue before did not show: captions that roll up start each cue
/// with the last lines of the one before (a line said again after others, a cue's first line
/// again, is kept). A cue that only repeats the last lines of the one before is left out where
/// the file's words carry karaoke timestamps, as YouTube's automatic captions do between their
/// cues; elsewhere it is a line said again.
fn new_lines<'a>(cue: &'a Cue, before: Option<&Cue>, karaoke: bool) -> &'a [String] {
    let Some(before) = before else {
        return &cue.lines;
    };
    let adds_a_line = usize::from(!karaoke);
    let most = ROLLED_LINES
        .min(before.lines.len())
        .min(cue.lines.len().saturating_sub(adds_a_line));
    let carried = (1..=most)
        .rev()
        .find(|k| cue.lines[..*k] == before.lines[before.lines.len() - k..])
        .unwrap_or(0);
    &cue.lines[carried..]
}

/// A file's cues as paragraphs, and the speakers their voices name.
struct Transcript {
    paragraphs: Vec<Paragraph>,
    speakers: Vec<String>,
}

/// A paragraph's text, and where each of its cues starts in it and in the recording.
#[derive(Default)]
struct Paragraph {
    text: String,
    times: Vec<TimeMark>,
}

impl Paragraph {
    fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Marks the words written from here on as said `start_ms` into the recording.
    fn mark(&mut self, start_ms: u64) {
        let seconds = u32::try_from(start_ms / 1000).unwrap_or(u32::MAX);
        if self.times.last().is_none_or(|last| last.seconds != seconds) {
            let at = u32::try_from(self.text.len()).unwrap_or(u32::MAX);
            self.times.push(TimeMark { at, seconds });
        }
    }
}

impl Transcript {
    fn of(cues: &[Cue]) -> Self {
        let mut transcript = Transcript {
            paragraphs: Vec::new(),
            speakers: Vec::new(),
        };
        let mut paragraph = Paragraph::default();
        let (mut voice, mut last_end): (Option<&str>, Option<u64>) = (None, None);
        let karaoke = cues.iter().any(|cue| cue.timed_words);
        for (at, cue) in cues.iter().enumerate() {
            let new_lines = new_lines(cue, at.checked_sub(1).map(|before| &cues[before]), karaoke);
            if new_lines.is_empty() {
                last_end = Some(last_end.map_or(cue.end_ms, |end| end.max(cue.end_ms)));
                continue;
            }
            let paused = last_end.is_some_and(|end| cue.start_ms >= end.saturating_add(PAUSE_MS));
            let speaker_changed = cue.voice.is_some() && cue.voice.as_deref() != voice;
            if (paused || speaker_changed) && !paragraph.is_empty() {
                transcript.paragraphs.push(std::mem::take(&mut paragraph));
            }
            if paragraph.is_empty() {
                paragraph.mark(cue.start_ms);
            }
            if let Some(name) = cue.voice.as_deref().filter(|_| paragraph.is_empty()) {
                paragraph.text.push_str(name);
                paragraph.text.push_str(": ");
                if !transcript.speakers.iter().any(|s| s == name) {
                    transcript.speakers.push(name.to_string());
                }
            }
            for (at, line) in new_lines.iter().enumerate() {
                if !paragraph.is_empty() && !paragraph.text.ends_with(": ") {
                    paragraph.text.push(' ');
                }
                if at == 0 {
                    paragraph.mark(cue.start_ms);
                }
                paragraph.text.push_str(line);
            }
            if cue.voice.is_some() {
                voice = cue.voice.as_deref();
            }
            last_end = Some(cue.end_ms);
        }
        if !paragraph.is_empty() {
            transcript.paragraphs.push(paragraph);
        }
        transcript
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{detect_format, raw_for_test, said_when, AutoParser, Format, Parser};

    fn texts(name: &str, bytes: &[u8]) -> Vec<String> {
        let parsed = AutoParser.parse(&raw_for_test(name, bytes.to_vec())).unwrap();
        assert_eq!(parsed.documents.len(), 1, "{name}");
        parsed.documents[0].blocks.iter().map(|b| b.text.clone()).collect()
    }

    #[test]
    fn subrip_cues_are_read_for_their_text_and_paragraphs_follow_the_pauses() {
        let srt = "1\r\n00:00:01,000 --> 00:00:03,200\r\n<i>Where is</i> the\r\n{\\an8}harbour master?\r\n\r\n\
                   2\r\n00:00:03,400 --> 00:00:05,000\r\n<font color=\"#ffff00\">On the quay</font> &amp; waiting.\r\n\r\n\
                   3\r\n00:00:09,000 --> 00:00:11,000\r\n- A storm is coming.\r\n\r\n";
        assert_eq!(
            texts("harbour.srt", srt.as_bytes()),
            [
                "Where is the harbour master? On the quay & waiting.",
                "- A storm is coming."
            ]
        );
        let parsed = AutoParser.parse(&raw_for_test("harbour.srt", srt)).unwrap();
        let document = &parsed.documents[0];
        assert_eq!(document.title, "harbour");
        assert_eq!(document.metadata["duration_seconds"], serde_json::json!(11.0));
        assert!(!document.metadata.contains_key("speakers"));
    }

    #[test]
    fn webvtt_voices_are_speakers_and_header_notes_and_styles_are_left_out() {
        let vtt = "WEBVTT - Harbour board\nKind: captions\nLanguage: en\n\n\
                   STYLE\n::cue { color: yellow }\n\n\
                   NOTE made by the\nmeeting recorder\n\n\
                   3f2a-1\n00:00:00.000 --> 00:00:02.500 align:start position:10%\n<v Ada Lovelace>Good morning, everyone.</v>\n\n\
                   00:02.600 --> 00:04.000\n<v Ada Lovelace>The tide tables are late.\n\n\
                   0:0:4.1 --> 0:0:6.0\n<v.loud Charles Babbage>They are <c.yellow>printed</c> tonight.</v>\n\n\
                   00:00:06.100 --> 00:00:07.000\n<v Ada Lovelace>Thank you.\n";
        assert_eq!(
            texts("board.vtt", vtt.as_bytes()),
            [
                "Ada Lovelace: Good morning, everyone. The tide tables are late.",
                "Charles Babbage: They are printed tonight.",
                "Ada Lovelace: Thank you."
            ]
        );
        let parsed = AutoParser.parse(&raw_for_test("board.vtt", vtt)).unwrap();
        assert_eq!(
            parsed.documents[0].metadata["speakers"],
            serde_json::json!(["Ada Lovelace", "Charles Babbage"])
        );
        assert_eq!(parsed.documents[0].metadata["duration_seconds"], serde_json::json!(7.0));
        assert_eq!(
            said_when(&parsed.documents[0]),
            [
                vec![
                    ("Ada Lovelace: Good morning, everyone. ", 0),
                    ("The tide tables are late.", 2)
                ],
                vec![("Charles Babbage: They are printed tonight.", 4)],
                vec![("Ada Lovelace: Thank you.", 6)],
            ]
        );
    }

    #[test]
    fn speakers_written_before_their_words_are_the_transcripts_speakers() {
        // Zoom's transcript: every cue starts with its speaker's name.
        let zoom = "WEBVTT\n\n1\n00:00:01.000 --> 00:00:04.000\nAda Lovelace: Good morning, everyone.\n\n\
                    2\n00:00:04.100 --> 00:00:06.000\nAda Lovelace: The tide tables are late.\n\n\
                    3\n00:00:06.100 --> 00:00:08.000\nCharles Babbage: They are printed tonight.\n\n\
                    4\n00:00:08.100 --> 00:00:09.000\n田中：了解です。\n\n\
                    5\n00:00:09.100 --> 00:00:10.000\nand the quay?\n";
        assert_eq!(
            texts("zoom.vtt", zoom.as_bytes()),
            [
                "Ada Lovelace: Good morning, everyone. The tide tables are late.",
                "Charles Babbage: They are printed tonight.",
                "田中: 了解です。 and the quay?"
            ]
        );
        let parsed = AutoParser.parse(&raw_for_test("zoom.vtt", zoom)).unwrap();
        assert_eq!(
            parsed.documents[0].metadata["speakers"],
            serde_json::json!(["Ada Lovelace", "Charles Babbage", "田中"])
        );
        // A film's subtitles with a line that looks so: left as it is, no speakers.
        let film = "1\n00:00:01,000 --> 00:00:02,000\nWhere is he?\n\n\
                    2\n00:00:02,100 --> 00:00:03,000\nNote: the quay is closed.\n\n\
                    3\n00:00:03,100 --> 00:00:04,000\nthe tide: it turns at noon\n";
        assert_eq!(
            texts("film.srt", film.as_bytes()),
            ["Where is he? Note: the quay is closed. the tide: it turns at noon"]
        );
        let parsed = AutoParser.parse(&raw_for_test("film.srt", film)).unwrap();
        assert!(!parsed.documents[0].metadata.contains_key("speakers"));
    }

    #[test]
    fn rolling_captions_are_read_once_and_karaoke_timestamps_and_ruby_text_are_left_out() {
        let vtt = "WEBVTT\nKind: captions\nLanguage: en\n\n\
                   00:00:00.000 --> 00:00:02.350 align:start position:0%\n \n\
                   the<00:00:00.420><c> tide</c><00:00:00.840><c> turns</c>\n\n\
                   00:00:02.350 --> 00:00:02.360 align:start position:0%\nthe tide turns\n \n\n\
                   00:00:02.360 --> 00:00:05.000 align:start position:0%\nthe tide turns\n\
                   at<00:00:02.600><c> noon</c>\n\n\
                   00:00:05.000 --> 00:00:05.010 align:start position:0%\nat noon\n \n\n\
                   00:00:05.010 --> 00:00:07.000 align:start position:0%\nat noon\ntoday\n\n\
                   00:00:07.000 --> 00:00:09.000\n<ruby>東京<rt>とうきょう</rt></ruby>の港\n";
        assert_eq!(
            texts("tides.vtt", vtt.as_bytes()),
            ["the tide turns at noon today 東京の港"]
        );
        let parsed = AutoParser.parse(&raw_for_test("tides.vtt", vtt)).unwrap();
        assert_eq!(
            said_when(&parsed.documents[0]),
            [vec![
                ("the tide turns ", 0),
                ("at noon ", 2),
                ("today ", 5),
                ("東京の港", 7)
            ]]
        );
    }

    #[test]
    fn lines_said_again_are_kept_where_captions_do_not_roll() {
        let cue = |n: usize, lines: &str| format!("{n}\n00:00:{n:02},000 --> 00:00:{n:02},900\n{lines}\n\n");
        let srt: String = [
            cue(1, "- Thanks for coming.\n- Nice place."),
            cue(2, "- Thanks for coming."),
            cue(3, "To the van!"),
            cue(4, "To the van!"),
            // Rolled up two lines at a time.
            cue(5, "The harbour master"),
            cue(6, "The harbour master\nis on the quay"),
            cue(7, "is on the quay\nwith the pilot."),
        ]
        .concat();
        assert_eq!(
            texts("film.srt", srt.as_bytes()),
            [
                "- Thanks for coming. - Nice place. - Thanks for coming. To the van! To the van! \
              The harbour master is on the quay with the pilot."
            ]
        );
    }

    #[test]
    fn stray_text_between_cues_is_kept_and_numbers_are_not_text() {
        // Hand-edited: a blank line inside cue 1, no blank line before cue 3's number; cut
        // off after cue 5's number.
        let srt = "1\n00:00:01,000 --> 00:00:02,000\nFirst line\n\nsecond line\n\n\
                   2\n00:00:02,100 --> 00:00:03,000\nThird\n\
                   3\n00:00:03,100 --> 00:00:04,000\nFourth\n\n\
                   4\n00:00:04,100 --> 00:00:05,000\nThe answer is\n42\n\n5\n";
        assert_eq!(
            texts("edited.srt", srt.as_bytes()),
            ["First line second line Third Fourth The answer is 42"]
        );
    }

    #[test]
    fn subtitles_are_told_by_their_first_lines_and_files_without_cues_are_text() {
        let srt = b"1\n00:00:01,000 --> 00:00:02,000\nHello\n";
        let vtt = b"\xEF\xBB\xBFWEBVTT\n\n00:01.000 --> 00:02.000\nHello\n";
        assert_eq!(detect_format("clip", srt).unwrap(), Format::Subtitles);
        assert_eq!(detect_format("clip", vtt).unwrap(), Format::Subtitles);
        assert_eq!(detect_format("clip.VTT", b"x").unwrap(), Format::Subtitles);
        assert_eq!(detect_format("notes", b"WEBVTTX is a word\n").unwrap(), Format::Text);
        assert_eq!(detect_format("notes", b"1\nfirst\n").unwrap(), Format::Text);
        // SubViewer's: a timing line, then the cue's text.
        let sbv = b"0:00:00.378,0:00:11.378\nCaption text #1\n\n0:00:11.378,0:00:12.305\nCaption text #2\n";
        assert_eq!(detect_format("clip", sbv).unwrap(), Format::Subtitles);
        assert_eq!(detect_format("clip.sbv", b"x").unwrap(), Format::Subtitles);
        // Times one to a line are a series of values, not cues.
        let series = b"0:00:00.378,0:00:11.378\n0:00:11.378,0:00:12.305\n";
        assert_eq!(detect_format("times", series).unwrap(), Format::Text);
        // A `.srt` that holds no cue is read as the text it is, and says so.
        let parsed = AutoParser.parse(&raw_for_test("notes.srt", "Just a note.")).unwrap();
        assert_eq!(parsed.documents[0].blocks[0].text, "Just a note.");
        assert!(parsed.documents[0].warnings[0].contains("no subtitle cue"));
        // So is a `.ass` that is no SubStation script; one that is, without events, has no text.
        let parsed = AutoParser
            .parse(&raw_for_test("class.ass", "Notes of the class."))
            .unwrap();
        assert_eq!(parsed.documents[0].blocks[0].text, "Notes of the class.");
        assert!(parsed.documents[0].warnings[0].contains("no SubStation script"));
        // Cues with no text: a file with nothing to search.
        let empty = "WEBVTT\n\n00:01.000 --> 00:02.000\n<c></c>\n\n00:03.000 --> 00:04.000\n";
        let error = AutoParser.parse(&raw_for_test("silence.vtt", empty)).unwrap_err();
        assert_eq!(
            error,
            ParseError::NoTextIn("subtitles whose 2 cues hold no text".into())
        );
        assert!(error.is_no_document());
        let error = AutoParser
            .parse(&raw_for_test("none.vtt", "WEBVTT\n\nNOTE nothing yet\n"))
            .unwrap_err();
        assert_eq!(error, ParseError::NoTextIn("a WebVTT file with no cue".into()));
    }

    #[test]
    fn subviewer_cues_are_read_as_subrips_are() {
        let sbv = "0:00:00.378,0:00:02.378\nWhere is the\nharbour master?\n\n\
                   0:00:02.500,0:00:03.000\nOn the quay.\n\n\
                   0:01:03.489,0:01:05.489\nA storm is coming.\n";
        assert_eq!(
            texts("clip.sbv", sbv.as_bytes()),
            ["Where is the harbour master? On the quay.", "A storm is coming."]
        );
        let parsed = AutoParser.parse(&raw_for_test("clip.sbv", sbv)).unwrap();
        assert_eq!(
            parsed.documents[0].metadata["duration_seconds"],
            serde_json::json!(65.489)
        );
        assert_eq!(parsed.documents[0].blocks[1].times[0].seconds, 63);
    }

    #[test]
    fn a_subrip_file_in_windows_1252_or_utf16_is_decoded() {
        let text = "1\r\n00:00:01,000 --> 00:00:02,000\r\nÇa va, Zoë?\r\n";
        let (cp1252, _, _) = encoding_rs::WINDOWS_1252.encode(text);
        assert_eq!(texts("film.srt", &cp1252), ["Ça va, Zoë?"]);
        let utf16: Vec<u8> = "\u{feff}"
            .encode_utf16()
            .chain(text.encode_utf16())
            .flat_map(u16::to_le_bytes)
            .collect();
        assert_eq!(texts("film", &utf16), ["Ça va, Zoë?"]);
    }

    #[test]
    fn timestamps_and_markup_are_read_in_every_writing() {
        assert_eq!(timestamp_ms("01:02:03,456"), Some(3_723_456));
        assert_eq!(timestamp_ms("02:03.5"), Some(123_500));
        assert_eq!(timestamp_ms("0:0:4.1"), Some(4_100));
        assert_eq!(timestamp_ms("100:00:00.000"), Some(360_000_000));
        for broken in [
            "",
            "12",
            "a:b",
            "1:2:3:4",
            "00:00:01.x",
            "99999999999:00",
            "0:01.00Ô»",
            "0:01.0Ô",
        ] {
            assert_eq!(timestamp_ms(broken), None, "{broken:?}");
        }
        let text = |line: &str| plain_text(line).text;
        assert_eq!(text("a < b and {c} <i>d"), "a < b and {c} d");
        assert_eq!(text("<rt>never closed"), "");
        assert_eq!(text("{\\i1}unclosed {\\b1"), "unclosed {\\b1");
        assert_eq!(text("hard\\hspace\\Nnew line"), "hard space new line");
        let read = plain_text("<v Bob>hi <b>there");
        assert_eq!(
            (read.text.as_str(), read.voice.as_deref(), read.timed_words),
            ("hi there", Some("Bob"), false)
        );
        assert!(plain_text("the<00:00:00.420><c> tide</c>").timed_words);
    }
}
