//! LRC lyrics (`.lrc`: the synchronized lyrics music players show line by line): each line's
//! time tags (`[01:02.50]`, several where the line is sung again) make it a cue of
//! [`super::subtitles`] at each time, in time order; the ID tags `[ti:...]`, `[ar:...]` and
//! `[al:...]` the title, artist and album; `[offset:+500]` moves every time 500 ms earlier;
//! enhanced LRC's word times (`<01:02.80>`) taken off.

use super::subtitles::{timestamp_ms, Cue};
use super::text::collapse_whitespace;

/// A song's timed lines as cues, and its ID tags.
#[derive(Default)]
pub(super) struct Lyrics {
    pub cues: Vec<Cue>,
    pub title: Option<String>,
    pub artist: Option<String>,
    pub album: Option<String>,
}

/// The lyrics of an LRC file.
pub(super) fn read_lyrics(text: &str) -> Lyrics {
    let mut lyrics = Lyrics::default();
    let mut timed: Vec<(u64, String)> = Vec::new();
    let mut offset_ms: i64 = 0;
    for line in text.lines().map(str::trim) {
        let mut rest = line;
        let mut times = Vec::new();
        while let Some((tag, after)) = rest.strip_prefix('[').and_then(|r| r.split_once(']')) {
            match timestamp_ms(tag.trim()) {
                Some(time) => times.push(time),
                None => {
                    let Some((key, value)) = tag.split_once(':') else { break };
                    let value = value.trim().to_string();
                    match key.trim().to_ascii_lowercase().as_str() {
                        "ti" if !value.is_empty() => lyrics.title = Some(value),
                        "ar" if !value.is_empty() => lyrics.artist = Some(value),
                        "al" if !value.is_empty() => lyrics.album = Some(value),
                        "offset" => offset_ms = value.trim_start_matches('+').parse().unwrap_or(0),
                        _ => {}
                    }
                }
            }
            rest = after;
        }
        let words = without_word_times(rest);
        for time in times {
            timed.push((time, words.clone()));
        }
    }
    timed.sort_by_key(|(time, _)| *time);
    lyrics.cues = timed
        .into_iter()
        .map(|(time, words)| {
            let time = time.saturating_add_signed(-offset_ms);
            // A line's end is not written: each line a point in time, so that lines apart by
            // a pause stand apart.
            let mut cue = Cue::starting(time, time);
            cue.add_text(words);
            cue
        })
        .collect();
    lyrics
}

/// A line with enhanced LRC's word times (`<01:02.80>`) taken off, its white space collapsed.
fn without_word_times(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find('<') {
        out.push_str(&rest[..at]);
        match rest[at + 1..].split_once('>') {
            Some((inside, after)) if timestamp_ms(inside.trim()).is_some() => rest = after,
            _ => {
                out.push('<');
                rest = &rest[at + 1..];
            }
        }
    }
    out.push_str(rest);
    collapse_whitespace(&out)
}

#[cfg(test)]
mod tests {
    use crate::parse::{detect_format, raw_for_test, AutoParser, Format, Parser};

    const SONG: &str = "[ti:Harbour Lights]\n[ar:The Pilots]\n[al:Tide Tables]\n[offset:+500]\n[length: 03:12]\n\
                        [00:12.50]The lanterns on the quay\n\
                        [00:17.00]Burn <00:17.40>until <00:17.90>the dawn\n\
                        [00:22.00][01:10.00]Harbour lights, harbour lights\n\
                        [00:26.00]\n\
                        [01:02.00]The tide is turning <home>\n\
                        a line without a time\n";

    #[test]
    fn timed_lines_are_cues_in_time_order_and_id_tags_the_title_and_metadata() {
        assert_eq!(
            detect_format("harbour.lrc", SONG.as_bytes()).unwrap(),
            Format::Subtitles
        );
        let parsed = AutoParser.parse(&raw_for_test("harbour.lrc", SONG)).unwrap();
        let document = &parsed.documents[0];
        assert_eq!(document.title, "Harbour Lights");
        assert_eq!(document.metadata["artist"], "The Pilots");
        assert_eq!(document.metadata["album"], "Tide Tables");
        let lines: Vec<(&str, u32)> = document
            .blocks
            .iter()
            .map(|block| (block.text.as_str(), block.times[0].seconds))
            .collect();
        // Each line a paragraph (lines are points in time, apart by more than the pause); the
        // chorus at both its times; the offset moves every time half a second earlier.
        assert_eq!(
            lines,
            [
                ("The lanterns on the quay", 12),
                ("Burn until the dawn", 16),
                ("Harbour lights, harbour lights", 21),
                ("The tide is turning <home>", 61),
                ("Harbour lights, harbour lights", 69),
            ]
        );
        assert_eq!(document.metadata["duration_seconds"], serde_json::json!(69.5));
    }

    #[test]
    fn an_lrc_file_without_times_is_read_as_text() {
        let parsed = AutoParser
            .parse(&raw_for_test("notes.lrc", "[ti:Draft]\nwords to come\n"))
            .unwrap();
        assert_eq!(
            parsed.documents[0].blocks[0].text.trim_end(),
            "[ti:Draft]\nwords to come"
        );
        assert!(parsed.documents[0].warnings[0].contains("no timed line"));
    }
}
