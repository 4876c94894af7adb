//! MicroDVD subtitles (`.sub` as text: `{1025}{1100}Where is he?|He left.`), timed in video
//! frames: at the frame rate a first cue `{1}{1}23.976` declares, else at [`FRAME_RATE`]. `|` is
//! a line break, `{y:i}`-style codes and a line's leading `/` (italics) are taken off; the
//! format has no tags, so `<LAUGHING>` is text.

use super::subtitles::Cue;
use super::text::collapse_whitespace;

/// Frames a second where the file does not say: film's rate, which most MicroDVD files are
/// timed in (a rate is not in the file, so a file timed at 25 without saying so reads 4% slow).
pub const FRAME_RATE: f64 = 23.976;

/// Whether a file's first line is a MicroDVD cue (`{0}{25}text`, or `{1}{1}23.976`).
pub(super) fn looks_like_microdvd(head: &str) -> bool {
    let first = head
        .trim_start_matches('\u{feff}')
        .trim_start()
        .lines()
        .next()
        .unwrap_or("");
    frames(first).is_some()
}

/// A line's start and end frames (the end may be empty) and the text after them.
fn frames(line: &str) -> Option<(u64, Option<u64>, &str)> {
    let number = |text: &str| -> Option<u64> {
        (text.len() <= 12 && !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()))
            .then(|| text.parse().ok())
            .flatten()
    };
    let rest = line.trim_start().strip_prefix('{')?;
    let (start, rest) = rest.split_once('}')?;
    let rest = rest.strip_prefix('{')?;
    let (end, text) = rest.split_once('}')?;
    let end = match end {
        "" => None,
        end => Some(number(end)?),
    };
    Some((number(start)?, end, text))
}

/// The cues of a MicroDVD file, in time order. A line that is no cue (frames missing or
/// broken) is read into the cue before it, its broken frames taken off, so its words are kept.
pub(super) fn read_cues(text: &str) -> Vec<Cue> {
    let mut lines = text.lines().filter(|line| !line.trim().is_empty()).peekable();
    let declared = lines
        .peek()
        .and_then(|line| frames(line))
        .and_then(|(start, end, text)| {
            let rate = text.trim().parse::<f64>().ok()?;
            (start <= 1 && end == Some(start) && rate.is_finite() && (1.0..=300.0).contains(&rate)).then_some(rate)
        });
    if declared.is_some() {
        lines.next();
    }
    let rate = declared.unwrap_or(FRAME_RATE);
    let ms = |frame: u64| (frame as f64 * 1000.0 / rate).round() as u64;
    let mut cues: Vec<Cue> = Vec::new();
    for line in lines {
        let text = match frames(line) {
            Some((start, end, text)) => {
                let start_ms = ms(start);
                cues.push(Cue::starting(
                    start_ms,
                    end.map_or(start_ms, |end| ms(end).max(start_ms)),
                ));
                text
            }
            None => without_broken_frames(line),
        };
        let Some(cue) = cues.last_mut() else { continue };
        for part in text.split('|') {
            // No tags in MicroDVD: `<LAUGHING>` is the caption's text.
            cue.add_text(collapse_whitespace(
                without_codes(part).trim_start().trim_start_matches('/'),
            ));
        }
    }
    cues.retain(Cue::has_text);
    cues.sort_by_key(|cue| cue.start_ms);
    cues
}

/// A line without the brace groups of digits it starts with (`{}{425}{567} text`).
fn without_broken_frames(line: &str) -> &str {
    let mut rest = line.trim_start();
    while let Some(inner) = rest.strip_prefix('{') {
        match inner.split_once('}') {
            Some((digits, after)) if digits.bytes().all(|b| b.is_ascii_digit()) => rest = after,
            _ => break,
        }
    }
    rest
}

/// A line without its control codes (`{y:i}`, `{C:$0000FF}`, `{s:20}`, `{f:Arial}`).
fn without_codes(line: &str) -> String {
    let mut kept = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find('{') {
        kept.push_str(&rest[..at]);
        let code = &rest[at + 1..];
        let is_code = code.len() > 1 && code.as_bytes()[0].is_ascii_alphabetic() && code.as_bytes()[1] == b':';
        match code.find('}').filter(|_| is_code) {
            Some(end) => rest = &code[end + 1..],
            None => {
                kept.push('{');
                rest = code;
            }
        }
    }
    kept.push_str(rest);
    kept
}

#[cfg(test)]
mod tests {
    use crate::parse::{detect_format, raw_for_test, said_when, AutoParser, Format, Parser};

    #[test]
    fn frames_are_timed_at_the_declared_rate_and_codes_are_taken_off() {
        let sub = "{1}{1}25\r\n{25}{75}{y:i}Where is the|harbour master?\r\n{100}{150}/On the quay.\r\n\
                   {500}{}{c:$0000FF}A storm {is} coming <THUNDER>.\r\n{}{525}{550} Take cover!\r\n";
        assert_eq!(detect_format("harbour.sub", sub.as_bytes()).unwrap(), Format::Subtitles);
        assert_eq!(detect_format("harbour.txt", sub.as_bytes()).unwrap(), Format::Text);
        let parsed = AutoParser.parse(&raw_for_test("harbour.sub", sub)).unwrap();
        assert_eq!(
            said_when(&parsed.documents[0]),
            [
                vec![("Where is the harbour master? ", 1), ("On the quay.", 4)],
                vec![("A storm {is} coming <THUNDER>. Take cover!", 20)]
            ]
        );
        // Without a declared rate, film's: frame 2398 is 100 s in.
        let film = "{2398}{2450}The tide turns.\n{2500}{2600}Ships wait.\n";
        let parsed = AutoParser.parse(&raw_for_test("film.sub", film)).unwrap();
        assert_eq!(said_when(&parsed.documents[0])[0][0], ("The tide turns.", 100));
    }
}
