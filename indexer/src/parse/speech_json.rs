//! Speech-to-text services' JSON, read as transcripts: Whisper's (`whisper --output_format
//! json`, OpenAI's `verbose_json`, WhisperX's with its speakers, whisper.cpp's `-oj`), Amazon
//! Transcribe's, Deepgram's, AssemblyAI's, and the cloud services' of [`super::speech_cloud`]
//! (Azure's, Google's, IBM Watson's, Rev.ai's, Speechmatics'). Each is told by its shape (a whole object, never a name
//! or a key alone), and its timed pieces become [`Cue`]s, so the file is read as subtitles
//! are: paragraphs by pause and speaker, each chunk with the second its first words are said,
//! `duration_seconds` and `speakers`; the language the service names is metadata `language`.
//! Where a service gives words rather than sentences, the words make cues of a sentence (to `.`, `?`, `!`, `。`,
//! `？`, `！`), cut at a speaker's change, at a pause of [`PAUSE_MS`] and at [`CUE_WORDS`] words.

use serde_json::{Map, Value};

use super::speech_cloud::{azure_speech, google_speech, rev_ai, speechmatics, watson_speech};
use super::subtitles::{Cue, LATEST_MS, PAUSE_MS};

/// Words a cue made of timed words holds at most, so that a transcript without punctuation
/// still marks its time every so often.
pub const CUE_WORDS: usize = 40;

/// A speech service's transcript: its cues in the order they are said, and the language the
/// service names.
#[derive(Debug)]
pub(super) struct SpeechTranscript {
    pub cues: Vec<Cue>,
    pub language: Option<String>,
}

/// The transcript a JSON value is, if it has the shape of one of the services' outputs.
pub(super) fn speech_transcript(value: &Value) -> Option<SpeechTranscript> {
    let object = value.as_object()?;
    let (mut cues, language) = whisper(object)
        .or_else(|| whisper_cpp(object))
        .or_else(|| amazon_transcribe(object))
        .or_else(|| deepgram(object))
        .or_else(|| assembly_ai(object))
        .or_else(|| azure_speech(object))
        .or_else(|| google_speech(object))
        .or_else(|| watson_speech(object))
        .or_else(|| rev_ai(object))
        .or_else(|| speechmatics(object))?;
    cues.sort_by_key(|cue| cue.start_ms);
    Some(SpeechTranscript { cues, language })
}

pub(super) type Read = (Vec<Cue>, Option<String>);

/// Whisper's result: `segments`, each with a number `start` and `end` in seconds and a `text`
/// (WhisperX adds a `speaker`); `language` beside them.
fn whisper(object: &Map<String, Value>) -> Option<Read> {
    let segments = non_empty_array(object.get("segments"))?;
    let cues = segments
        .iter()
        .map(|segment| {
            let segment = segment.as_object()?;
            let text = segment.get("text")?.as_str()?;
            let start = seconds_ms(segment.get("start")?)?;
            let end = seconds_ms(segment.get("end")?)?;
            Some(cue(start, end, speaker_name(segment.get("speaker")), text))
        })
        .collect::<Option<Vec<_>>>()?;
    Some((cues, string(object.get("language"))))
}

/// whisper.cpp's (`whisper-cli -oj`): `transcription`, each piece with `offsets` `from` and
/// `to` in milliseconds (its `timestamps` the same as text) and a `text`; `result.language`.
fn whisper_cpp(object: &Map<String, Value>) -> Option<Read> {
    let pieces = non_empty_array(object.get("transcription"))?;
    let cues = pieces
        .iter()
        .map(|piece| {
            let offsets = piece.get("offsets")?;
            let ms = |key: &str| offsets.get(key)?.as_f64().and_then(held_ms);
            let text = piece.get("text")?.as_str()?;
            Some(cue(ms("from")?, ms("to")?, speaker_name(piece.get("speaker")), text))
        })
        .collect::<Option<Vec<_>>>()?;
    let language = object.get("result").and_then(|result| string(result.get("language")));
    Some((cues, language))
}

/// Amazon Transcribe's job output: `results` with `items` (words and punctuation, times as
/// strings of seconds; a word's speaker on it or in `speaker_labels`' segments), or its
/// `audio_segments` where the output has them.
fn amazon_transcribe(object: &Map<String, Value>) -> Option<Read> {
    let results = object.get("results")?.as_object()?;
    let items = results.get("items")?.as_array()?;
    results.get("transcripts")?.as_array()?;
    let language = string(results.get("language_code")).or_else(|| string(object.get("language_code")));
    if let Some(segments) = non_empty_array(results.get("audio_segments")) {
        let cues = segments
            .iter()
            .filter_map(|segment| {
                let segment = segment.as_object()?;
                Some(cue(
                    seconds_ms(segment.get("start_time")?)?,
                    seconds_ms(segment.get("end_time")?)?,
                    speaker_name(segment.get("speaker_label")),
                    segment.get("transcript")?.as_str()?,
                ))
            })
            .collect();
        return Some((cues, language));
    }
    let speakers_by_start = amazon_speakers_by_start(results);
    let mut words = Vec::new();
    for item in items.iter().filter_map(Value::as_object) {
        let content = item
            .get("alternatives")
            .and_then(Value::as_array)
            .and_then(|alternatives| alternatives.first())
            .and_then(|best| string(best.get("content")));
        let Some(content) = content else { continue };
        match item.get("type").and_then(Value::as_str) {
            Some("punctuation") => attach_punctuation(&mut words, &content),
            _ => {
                let (Some(start), Some(end)) = (
                    item.get("start_time").and_then(seconds_ms),
                    item.get("end_time").and_then(seconds_ms),
                ) else {
                    continue;
                };
                let speaker = speaker_name(item.get("speaker_label")).or_else(|| {
                    let key = item.get("start_time").and_then(string_of_number)?;
                    speakers_by_start.get(&key).cloned()
                });
                words.push(TimedWord {
                    start,
                    end,
                    speaker,
                    text: content,
                });
            }
        }
    }
    Some((cues_of_words(words), language))
}

/// The speaker of each word by its start time, from `speaker_labels`' segments (older outputs
/// put no speaker on the words themselves).
fn amazon_speakers_by_start(results: &Map<String, Value>) -> std::collections::HashMap<String, String> {
    let segments = results
        .get("speaker_labels")
        .and_then(|labels| labels.get("segments"))
        .and_then(Value::as_array);
    segments
        .into_iter()
        .flatten()
        .filter_map(|segment| segment.get("items")?.as_array())
        .flatten()
        .filter_map(|item| {
            let start = item.get("start_time").and_then(string_of_number)?;
            Some((start, speaker_name(item.get("speaker_label"))?))
        })
        .collect()
}

/// Deepgram's response: `results.utterances` where asked for, else each channel's first
/// alternative's `paragraphs` (sentences with times, a speaker per paragraph), else its
/// `words`.
fn deepgram(object: &Map<String, Value>) -> Option<Read> {
    let results = object.get("results")?.as_object()?;
    let channels = results.get("channels")?.as_array()?;
    let language = channels.iter().find_map(|c| string(c.get("detected_language")));
    let several_channels = channels.len() > 1;
    let channel_speaker =
        |index: usize, speaker: Option<&Value>| speaker_or_channel(speaker, several_channels, index as u64);
    if let Some(utterances) = non_empty_array(results.get("utterances")) {
        let cues = utterances
            .iter()
            .filter_map(|utterance| {
                let channel = utterance.get("channel").and_then(Value::as_u64).unwrap_or(0) as usize;
                Some(cue(
                    seconds_ms(utterance.get("start")?)?,
                    seconds_ms(utterance.get("end")?)?,
                    channel_speaker(channel, utterance.get("speaker")),
                    utterance.get("transcript")?.as_str()?,
                ))
            })
            .collect();
        return Some((cues, language));
    }
    let mut cues = Vec::new();
    let mut told = false;
    for (index, channel) in channels.iter().enumerate() {
        let Some(best) = best_alternative(channel) else {
            continue;
        };
        let paragraphs = best
            .get("paragraphs")
            .and_then(|p| p.get("paragraphs"))
            .and_then(Value::as_array);
        if let Some(paragraphs) = paragraphs {
            told = true;
            for paragraph in paragraphs {
                let speaker = channel_speaker(index, paragraph.get("speaker"));
                for sentence in paragraph
                    .get("sentences")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let (Some(start), Some(end), Some(text)) = (
                        sentence.get("start").and_then(seconds_ms),
                        sentence.get("end").and_then(seconds_ms),
                        sentence.get("text").and_then(Value::as_str),
                    ) else {
                        continue;
                    };
                    cues.push(cue(start, end, speaker.clone(), text));
                }
            }
        } else if let Some(words) = best.get("words").and_then(Value::as_array) {
            told = true;
            let words = words
                .iter()
                .filter_map(|word| {
                    let text = string(word.get("punctuated_word")).or_else(|| string(word.get("word")))?;
                    Some(TimedWord {
                        start: seconds_ms(word.get("start")?)?,
                        end: seconds_ms(word.get("end")?)?,
                        speaker: channel_speaker(index, word.get("speaker")),
                        text,
                    })
                })
                .collect();
            cues.extend(cues_of_words(words));
        }
    }
    told.then_some((cues, language))
}

/// A Deepgram channel's first (most likely) alternative.
fn best_alternative(channel: &Value) -> Option<&Map<String, Value>> {
    channel.get("alternatives")?.as_array()?.first()?.as_object()
}

/// AssemblyAI's transcript: `utterances` (where speakers were asked for) or `words`, their
/// times in milliseconds; told by the `audio_url` or `audio_duration` beside them.
fn assembly_ai(object: &Map<String, Value>) -> Option<Read> {
    if !object.contains_key("audio_url") && !object.contains_key("audio_duration") {
        return None;
    }
    let language = string(object.get("language_code"));
    let ms = |value: Option<&Value>| value.and_then(Value::as_f64).and_then(held_ms);
    if let Some(utterances) = non_empty_array(object.get("utterances")) {
        let cues = utterances
            .iter()
            .filter_map(|utterance| {
                Some(cue(
                    ms(utterance.get("start"))?,
                    ms(utterance.get("end"))?,
                    speaker_name(utterance.get("speaker")),
                    utterance.get("text")?.as_str()?,
                ))
            })
            .collect();
        return Some((cues, language));
    }
    let words = non_empty_array(object.get("words"))?
        .iter()
        .filter_map(|word| {
            Some(TimedWord {
                start: ms(word.get("start"))?,
                end: ms(word.get("end"))?,
                speaker: speaker_name(word.get("speaker")),
                text: string(word.get("text"))?,
            })
        })
        .collect();
    Some((cues_of_words(words), language))
}

/// A word said from `start` to `end` (milliseconds), its punctuation attached.
pub(super) struct TimedWord {
    pub start: u64,
    pub end: u64,
    pub speaker: Option<String>,
    pub text: String,
}

/// Punctuation (Amazon Transcribe's, Rev.ai's and Speechmatics' items of their own) joined
/// to the word before it.
pub(super) fn attach_punctuation(words: &mut [TimedWord], punctuation: &str) {
    if let Some(word) = words.last_mut() {
        word.text.push_str(punctuation);
    }
}

/// Timed words made cues: a sentence each, cut where the speaker changes, at a pause and at
/// [`CUE_WORDS`] words.
pub(super) fn cues_of_words(words: Vec<TimedWord>) -> Vec<Cue> {
    let mut cues = Vec::new();
    let mut current: Vec<TimedWord> = Vec::new();
    for word in words {
        if let Some(last) = current.last() {
            let sentence_ended = last.text.trim_end().ends_with(['.', '?', '!', '。', '？', '！']);
            let paused = word.start.saturating_sub(last.end) >= PAUSE_MS;
            if sentence_ended || paused || last.speaker != word.speaker || current.len() >= CUE_WORDS {
                cues.push(cue_of_words(std::mem::take(&mut current)));
            }
        }
        current.push(word);
    }
    if !current.is_empty() {
        cues.push(cue_of_words(current));
    }
    cues
}

fn cue_of_words(words: Vec<TimedWord>) -> Cue {
    let start = words.first().map_or(0, |w| w.start);
    let end = words.iter().map(|w| w.end).max().unwrap_or(start);
    let speaker = words.first().and_then(|w| w.speaker.clone());
    let text: Vec<&str> = words.iter().map(|w| w.text.trim()).filter(|t| !t.is_empty()).collect();
    cue(start, end, speaker, &text.join(" "))
}

pub(super) fn cue(start_ms: u64, end_ms: u64, speaker: Option<String>, text: &str) -> Cue {
    let mut cue = Cue::starting(start_ms, end_ms.max(start_ms));
    cue.voice = speaker;
    cue.add_text(super::text::collapse_whitespace(text));
    cue
}

/// A speaker as the file names it: a number or a single letter (Deepgram's `0`, AssemblyAI's
/// `A`) as `Speaker 0`, a label (`spk_0`, `SPEAKER_00`, a name) as it is.
pub(super) fn speaker_name(value: Option<&Value>) -> Option<String> {
    let name = match value? {
        Value::Number(number) => number.to_string(),
        Value::String(name) => name.trim().to_string(),
        _ => return None,
    };
    let bare = name.chars().all(|c| c.is_ascii_digit()) || name.chars().count() == 1;
    match name.is_empty() {
        true => None,
        false if bare => Some(format!("Speaker {name}")),
        false => Some(name),
    }
}

/// A piece's speaker as the file names it, else its channel (`Channel 1`) where the
/// recording has several channels.
pub(super) fn speaker_or_channel(speaker: Option<&Value>, several_channels: bool, channel: u64) -> Option<String> {
    speaker_name(speaker).or_else(|| several_channels.then(|| format!("Channel {channel}")))
}

/// Seconds (a number, or a string of one as Amazon Transcribe writes them) in milliseconds.
pub(super) fn seconds_ms(value: &Value) -> Option<u64> {
    let seconds = match value {
        Value::Number(number) => number.as_f64()?,
        Value::String(text) => text.trim().parse::<f64>().ok()?,
        _ => return None,
    };
    held_ms(seconds * 1000.0)
}

pub(super) fn held_ms(ms: f64) -> Option<u64> {
    (ms.is_finite() && ms >= 0.0).then(|| (ms.round() as u64).min(LATEST_MS))
}

/// A number or a string of one as a string, to match times written either way.
fn string_of_number(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.trim().to_string()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    }
}

pub(super) fn string(value: Option<&Value>) -> Option<String> {
    Some(value?.as_str()?.trim().to_string()).filter(|s| !s.is_empty())
}

pub(super) fn non_empty_array(value: Option<&Value>) -> Option<&Vec<Value>> {
    value?.as_array().filter(|items| !items.is_empty())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::parse::{block_texts_of, document_of, raw_for_test, said_when, AutoParser, Parser};

    fn whisper_segment(start: f64, end: f64, text: &str) -> serde_json::Value {
        json!({"id": 0, "seek": 0, "start": start, "end": end, "text": text, "tokens": [50364, 1044],
               "temperature": 0.0, "avg_logprob": -0.21, "compression_ratio": 1.3, "no_speech_prob": 0.01})
    }

    #[test]
    fn whispers_segments_are_cues_and_its_language_is_the_documents() {
        let result = json!({
            "text": " The tide turns at noon. The harbour master is late. Ships wait outside.",
            "segments": [
                whisper_segment(0.0, 2.4, " The tide turns at noon."),
                whisper_segment(2.4, 4.98, " The harbour master is late."),
                whisper_segment(61.5, 63.0, " Ships wait outside."),
            ],
            "language": "en"
        });
        let document = document_of("harbour.json", result.to_string());
        assert_eq!(document.title, "harbour");
        assert_eq!(
            said_when(&document),
            [
                vec![("The tide turns at noon. ", 0), ("The harbour master is late.", 2)],
                vec![("Ships wait outside.", 61)],
            ]
        );
        assert_eq!(document.metadata["language"], "en");
        assert_eq!(document.metadata["duration_seconds"], json!(63.0));
        // WhisperX's: a speaker on each segment, no text beside them.
        let diarized = json!({
            "segments": [
                {"start": 0.031, "end": 1.5, "text": " Good morning.", "speaker": "SPEAKER_00",
                 "words": [{"word": "Good", "start": 0.031, "end": 0.4, "score": 0.9}]},
                {"start": 1.6, "end": 3.0, "text": " Morning, Ada.", "speaker": "SPEAKER_01"},
            ],
            "word_segments": [{"word": "Good", "start": 0.031, "end": 0.4, "score": 0.9}]
        });
        let document = document_of("meeting.json", diarized.to_string());
        assert_eq!(
            document.blocks.iter().map(|b| b.text.as_str()).collect::<Vec<_>>(),
            ["SPEAKER_00: Good morning.", "SPEAKER_01: Morning, Ada."]
        );
        assert_eq!(document.metadata["speakers"], json!(["SPEAKER_00", "SPEAKER_01"]));
        assert!(!document.metadata.contains_key("language"));
    }

    #[test]
    fn whisper_cpps_pieces_are_cues_in_milliseconds() {
        let output = json!({
            "systeminfo": "AVX = 1", "model": {"type": "base"}, "params": {"model": "ggml-base.bin", "language": "auto"},
            "result": {"language": "ja"},
            "transcription": [
                {"timestamps": {"from": "00:00:00,000", "to": "00:00:02,400"}, "offsets": {"from": 0, "to": 2400}, "text": " 潮が満ちる。"},
                {"timestamps": {"from": "00:01:01,500", "to": "00:01:03,000"}, "offsets": {"from": 61500, "to": 63000}, "text": " 船が待つ。"},
            ]
        });
        let document = document_of("harbour.json", output.to_string());
        assert_eq!(
            said_when(&document),
            [vec![("潮が満ちる。", 0)], vec![("船が待つ。", 61)]]
        );
        assert_eq!(document.metadata["language"], "ja");
    }

    fn aws_word(start: &str, end: &str, content: &str) -> serde_json::Value {
        json!({"start_time": start, "end_time": end, "type": "pronunciation",
               "alternatives": [{"confidence": "0.98", "content": content}]})
    }

    fn aws_mark(content: &str) -> serde_json::Value {
        json!({"type": "punctuation", "alternatives": [{"confidence": "0.0", "content": content}]})
    }

    #[test]
    fn amazon_transcribes_words_make_sentences_and_their_speakers_are_read() {
        let speaker_items = |label: &str, starts: &[&str]| -> Vec<serde_json::Value> {
            starts
                .iter()
                .map(|s| json!({"start_time": s, "end_time": s, "speaker_label": label}))
                .collect()
        };
        let job = json!({
            "jobName": "miel", "accountId": "1", "status": "COMPLETED",
            "results": {
                "language_code": "es-ES",
                "transcripts": [{"transcript": "Hola. Qué tal estás? Me gusta la miel."}],
                "speaker_labels": {"speakers": 2, "segments": [
                    {"start_time": "0.94", "end_time": "2.85", "speaker_label": "spk_0",
                     "items": speaker_items("spk_0", &["0.94", "1.52", "1.75", "1.98"])},
                    {"start_time": "3.94", "end_time": "5.45", "speaker_label": "spk_1",
                     "items": speaker_items("spk_1", &["3.94", "4.29", "4.71", "4.86"])},
                ]},
                "items": [
                    aws_word("0.94", "1.51", "Hola"), aws_mark("."),
                    aws_word("1.52", "1.75", "Qué"), aws_word("1.75", "1.98", "tal"),
                    aws_word("1.98", "2.85", "estás"), aws_mark("?"),
                    aws_word("3.94", "4.29", "Me"), aws_word("4.29", "4.71", "gusta"),
                    aws_word("4.71", "4.86", "la"), aws_word("4.86", "5.45", "miel"), aws_mark("."),
                ]
            }
        });
        let document = document_of("miel.json", job.to_string());
        assert_eq!(
            said_when(&document),
            [
                vec![("spk_0: Hola. ", 0), ("Qué tal estás?", 1)],
                vec![("spk_1: Me gusta la miel.", 3)],
            ]
        );
        assert_eq!(document.metadata["speakers"], json!(["spk_0", "spk_1"]));
        assert_eq!(document.metadata["language"], "es-ES");
        // A newer output's audio segments are its cues.
        let mut newer = job.clone();
        newer["results"]["audio_segments"] = json!([
            {"id": 0, "transcript": "Hola. Qué tal estás?", "start_time": "0.94", "end_time": "2.85",
             "speaker_label": "spk_0", "items": [0, 1, 2, 3, 4, 5]},
            {"id": 1, "transcript": "Me gusta la miel.", "start_time": "3.94", "end_time": "5.45",
             "speaker_label": "spk_1", "items": [6, 7, 8, 9, 10]},
        ]);
        let document = document_of("miel.json", newer.to_string());
        assert_eq!(
            said_when(&document),
            [
                vec![("spk_0: Hola. Qué tal estás?", 0)],
                vec![("spk_1: Me gusta la miel.", 3)]
            ]
        );
    }

    #[test]
    fn deepgrams_utterances_paragraphs_or_words_are_read() {
        let utterances = json!({
            "metadata": {"request_id": "r", "duration": 9.5, "channels": 1},
            "results": {
                "channels": [{"alternatives": [{"transcript": "ignored", "confidence": 0.99, "words": []}],
                              "detected_language": "de"}],
                "utterances": [
                    {"start": 0.08, "end": 2.0, "confidence": 0.99, "channel": 0, "speaker": 0,
                     "transcript": "Guten Morgen.", "id": "a", "words": []},
                    {"start": 7.5, "end": 9.5, "confidence": 0.97, "channel": 0, "speaker": 1,
                     "transcript": "Die Flut kommt.", "id": "b", "words": []},
                ]
            }
        });
        let document = document_of("call.json", utterances.to_string());
        assert_eq!(
            said_when(&document),
            [
                vec![("Speaker 0: Guten Morgen.", 0)],
                vec![("Speaker 1: Die Flut kommt.", 7)]
            ]
        );
        assert_eq!(document.metadata["language"], "de");
        // Paragraphs of sentences, a speaker to each paragraph.
        let paragraphs = json!({"metadata": {}, "results": {"channels": [{"alternatives": [{
        "transcript": "x", "words": [],
        "paragraphs": {"transcript": "x", "paragraphs": [
            {"speaker": 0, "start": 0.0, "end": 4.0, "num_words": 7, "sentences": [
                {"text": "The tide turns.", "start": 0.0, "end": 1.5},
                {"text": "Ships wait.", "start": 2.5, "end": 4.0}]},
        ]}}]}]}});
        assert_eq!(
            said_when(&document_of("call.json", paragraphs.to_string())),
            [vec![("Speaker 0: The tide turns. ", 0), ("Ships wait.", 2)]]
        );
        // Words only, unpunctuated: cues of at most CUE_WORDS words, each marking its time.
        let words: Vec<_> = (0..100)
            .map(|i| json!({"word": format!("w{i}"), "start": i as f64 * 0.5, "end": i as f64 * 0.5 + 0.4, "confidence": 0.9}))
            .collect();
        let bare =
            json!({"metadata": {}, "results": {"channels": [{"alternatives": [{"transcript": "", "words": words}]}]}});
        let document = document_of("bare.json", bare.to_string());
        let marks: Vec<u32> = said_when(&document)[0].iter().map(|(_, s)| *s).collect();
        assert_eq!(marks, [0, 20, 40]);
        assert!(
            said_when(&document)[0][1].0.starts_with("w40 w41"),
            "{:?}",
            said_when(&document)
        );
    }

    #[test]
    fn assembly_ais_utterances_and_words_are_in_milliseconds() {
        let transcript = json!({
            "id": "t1", "status": "completed", "audio_url": "https://example.com/a.mp3",
            "language_code": "en_us", "audio_duration": 12,
            "text": "Good morning. The tide is late.",
            "utterances": [
                {"speaker": "A", "start": 250, "end": 1900, "confidence": 0.9, "text": "Good morning.", "words": []},
                {"speaker": "B", "start": 2100, "end": 4200, "confidence": 0.9, "text": "The tide is late.", "words": []},
            ],
            "words": []
        });
        let document = document_of("standup.json", transcript.to_string());
        assert_eq!(
            said_when(&document),
            [
                vec![("Speaker A: Good morning.", 0)],
                vec![("Speaker B: The tide is late.", 2)]
            ]
        );
        assert_eq!(document.metadata["speakers"], json!(["Speaker A", "Speaker B"]));
        assert_eq!(document.metadata["duration_seconds"], json!(4.2));
        let words_only = json!({
            "audio_url": "https://example.com/a.mp3", "text": "Good morning. Late again.",
            "words": [
                {"text": "Good", "start": 0, "end": 300}, {"text": "morning.", "start": 300, "end": 900},
                {"text": "Late", "start": 5000, "end": 5300}, {"text": "again.", "start": 5300, "end": 5800},
            ]
        });
        assert_eq!(
            block_texts_of("standup.json", words_only.to_string()),
            ["Good morning.", "Late again."]
        );
    }

    #[test]
    fn json_not_shaped_as_a_transcript_is_read_as_before() {
        // Segments without times: flattened, as any JSON.
        let segments = json!({"segments": [{"name": "north", "text": "quay"}]});
        assert_eq!(
            block_texts_of("map.json", segments.to_string()),
            ["segments[0].name: north\nsegments[0].text: quay"]
        );
        // A record with a text: one document, as before (OpenAI's plain `json` response too).
        assert_eq!(
            block_texts_of("reply.json", json!({"text": "The tide turns."}).to_string()),
            ["The tide turns."]
        );
        // A transcript with no words said fails as such.
        let silent = json!({"jobName": "x", "results": {"transcripts": [{"transcript": ""}], "items": []}});
        let error = AutoParser
            .parse(&raw_for_test("silent.json", silent.to_string()))
            .unwrap_err();
        assert!(
            format!("{error:?}").contains("a speech transcript with no words said"),
            "{error:?}"
        );
        // Absurd times are held, not overflowed; negative ones make no transcript.
        let far = json!({"segments": [{"start": 1e300, "end": 1e301, "text": "far"}]});
        assert_eq!(block_texts_of("far.json", far.to_string()), ["far"]);
        let negative = json!({"segments": [{"start": -1.0, "end": 2.0, "text": "back"}]});
        assert_eq!(
            block_texts_of("back.json", negative.to_string()),
            ["segments[0].end: 2.0\nsegments[0].start: -1.0\nsegments[0].text: back"]
        );
    }
}
