//! Cloud speech services' JSON, read as transcripts as [`super::speech_json`] reads the others:
//! Azure AI Speech's batch transcriptions, Google Cloud Speech-to-Text's responses (v1 and v2),
//! IBM Watson Speech to Text's, Rev.ai's and Speechmatics', each told by its whole shape.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::speech_json::{
    attach_punctuation, cue, cues_of_words, held_ms, non_empty_array, seconds_ms, speaker_name, speaker_or_channel,
    string, Read, TimedWord,
};

/// Azure AI Speech's batch transcription: `recognizedPhrases`, each with its offset and
/// duration in ticks of 100 ns (`offsetMilliseconds` in newer outputs) and `nBest`, its
/// likeliest reading first (`display`: punctuated and cased); a phrase's `speaker` where
/// speakers were told apart, else its `channel` where there are several; its `locale` the
/// language. A phrase that recognized nothing (`NoMatch`) has no reading and is passed over.
pub(super) fn azure_speech(object: &Map<String, Value>) -> Option<Read> {
    let phrases = non_empty_array(object.get("recognizedPhrases"))?;
    let shaped = |phrase: &Value| phrase.get("recognitionStatus").is_some() || phrase.get("nBest").is_some();
    if !phrases.iter().all(shaped) {
        return None;
    }
    let ms = |phrase: &Value, ticks: &str, millis: &str| {
        let from_ticks = phrase.get(ticks).and_then(Value::as_f64).map(|t| t / 10_000.0);
        from_ticks
            .or_else(|| phrase.get(millis).and_then(Value::as_f64))
            .and_then(held_ms)
    };
    let channel = |phrase: &Value| phrase.get("channel").and_then(Value::as_u64).unwrap_or(0);
    let several_channels = phrases.iter().any(|p| channel(p) != channel(&phrases[0]));
    let mut timed = false;
    let cues = phrases
        .iter()
        .filter_map(|phrase| {
            let start = ms(phrase, "offsetInTicks", "offsetMilliseconds")?;
            timed = true;
            let best = phrase.get("nBest")?.as_array()?.first()?;
            let text = string(best.get("display")).or_else(|| string(best.get("lexical")))?;
            let duration = ms(phrase, "durationInTicks", "durationMilliseconds").unwrap_or(0);
            let speaker = speaker_or_channel(phrase.get("speaker"), several_channels, channel(phrase));
            Some(cue(start, start.saturating_add(duration), speaker, &text))
        })
        .collect();
    let language = phrases.iter().find_map(|p| string(p.get("locale")));
    timed.then_some((cues, language))
}

/// Google Cloud Speech-to-Text's response (`longrunningrecognize`, v1 and v2; what `gcloud ml
/// speech recognize-long-running` prints): `results`, each with `alternatives` (the likeliest
/// first: its `transcript` and its `words` with their times) and where it ends
/// (`resultEndTime`, v2's `resultEndOffset`), times written as durations (`"1.300s"`, or
/// `{"seconds": 1, "nanos": 300000000}`); `languageCode` the language. Where speakers were
/// told apart, the words carry a `speakerTag` (v2: `speakerLabel`; v1 repeats every word of the
/// recording, tagged, in its last result): those words make the cues, each word once.
/// Otherwise each result is a cue, from where the one before ended (or its first word) to its
/// end; a channel is a speaker where there are several.
pub(super) fn google_speech(object: &Map<String, Value>) -> Option<Read> {
    let results = non_empty_array(object.get("results"))?;
    let best: Vec<Option<&Map<String, Value>>> = results
        .iter()
        .map(|result| {
            let alternatives = result.as_object()?.get("alternatives")?.as_array()?;
            Some(alternatives.first().and_then(Value::as_object))
        })
        .collect::<Option<_>>()?;
    if best
        .iter()
        .flatten()
        .any(|b| !b.get("transcript").is_none_or(Value::is_string))
    {
        return None;
    }
    let language = results.iter().find_map(|r| string(r.get("languageCode")));
    let word = |value: &Value, speaker: Option<String>| {
        Some(TimedWord {
            start: duration_ms(either(value, "startTime", "startOffset")?)?,
            end: duration_ms(either(value, "endTime", "endOffset")?)?,
            speaker,
            text: string(value.get("word"))?,
        })
    };
    let tagged: Vec<TimedWord> = best
        .iter()
        .flat_map(|b| google_words(*b))
        .filter(|w| either(w, "speakerTag", "speakerLabel").is_some())
        .filter_map(|w| word(w, speaker_name(either(w, "speakerTag", "speakerLabel"))))
        .collect();
    if !tagged.is_empty() {
        let mut seen = HashSet::new();
        let mut once: Vec<TimedWord> = tagged
            .into_iter()
            .filter(|w| seen.insert((w.start, w.end, w.text.clone())))
            .collect();
        once.sort_by_key(|w| w.start);
        return Some((cues_of_words(once), language));
    }
    let channel = |result: &Value| result.get("channelTag").and_then(Value::as_u64).unwrap_or(1);
    let several_channels = results.iter().any(|r| channel(r) != channel(&results[0]));
    let mut ended_at = HashMap::new();
    let mut timed = false;
    let mut cues = Vec::new();
    for (result, best) in results.iter().zip(&best) {
        let words: Vec<TimedWord> = google_words(*best).filter_map(|w| word(w, None)).collect();
        let end = result
            .get("resultEndTime")
            .or_else(|| result.get("resultEndOffset"))
            .and_then(duration_ms)
            .or_else(|| words.iter().map(|w| w.end).max());
        let Some(end) = end else { continue };
        timed = true;
        let previous = ended_at.insert(channel(result), end).unwrap_or(0);
        let start = words.first().map_or(previous, |w| w.start).min(end);
        let text = best.and_then(|b| string(b.get("transcript"))).unwrap_or_default();
        if !text.is_empty() {
            let speaker = speaker_or_channel(None, several_channels, channel(result));
            cues.push(cue(start, end, speaker, &text));
        }
    }
    timed.then_some((cues, language))
}

/// Rev.ai's transcript: `monologues`, each a speaker's (`speaker`, a number; `speaker_name`
/// where named) `elements`: `text` ones are words with `ts` and `end_ts` in seconds, `punct`
/// ones punctuation (joined to the word before) or spaces. The words make the cues.
pub(super) fn rev_ai(object: &Map<String, Value>) -> Option<Read> {
    let monologues = non_empty_array(object.get("monologues"))?;
    let mut words: Vec<TimedWord> = Vec::new();
    for monologue in monologues {
        let speaker = speaker_name(monologue.get("speaker_name")).or_else(|| speaker_name(monologue.get("speaker")));
        for element in monologue.get("elements")?.as_array()? {
            let value = element.get("value")?.as_str()?;
            match element.get("type")?.as_str()? {
                "text" => words.push(TimedWord {
                    start: seconds_ms(element.get("ts")?)?,
                    end: seconds_ms(element.get("end_ts")?)?,
                    speaker: speaker.clone(),
                    text: value.trim().to_string(),
                }),
                _ => {
                    if !value.trim().is_empty() {
                        attach_punctuation(&mut words, value.trim());
                    }
                }
            }
        }
    }
    Some((cues_of_words(words), None))
}

/// Speechmatics' JSON (`json-v2`): `results`, each a `word` or `punctuation` with
/// `start_time` and `end_time` in seconds and `alternatives` whose first has its `content`
/// and `speaker` (`S1`; `UU`, unknown, is none); punctuation joined to the word before;
/// `metadata.transcription_config.language` the language. The words make the cues.
pub(super) fn speechmatics(object: &Map<String, Value>) -> Option<Read> {
    let results = non_empty_array(object.get("results"))?;
    let mut words: Vec<TimedWord> = Vec::new();
    for result in results {
        let best = result.get("alternatives")?.as_array()?.first()?;
        let content = best.get("content")?.as_str()?.trim();
        match result.get("type")?.as_str()? {
            "word" => words.push(TimedWord {
                start: seconds_ms(result.get("start_time")?)?,
                end: seconds_ms(result.get("end_time")?)?,
                speaker: speaker_name(best.get("speaker")).filter(|s| s != "UU"),
                text: content.to_string(),
            }),
            "punctuation" => attach_punctuation(&mut words, content),
            _ => {}
        }
    }
    let language = object
        .get("metadata")
        .and_then(|m| m.get("transcription_config"))
        .and_then(|c| string(c.get("language")));
    Some((cues_of_words(words), language))
}

/// IBM Watson Speech to Text's response: `results`, each with `alternatives` whose first has
/// its `timestamps` (`["word", start, end]`, in seconds); where speakers were told apart,
/// `speaker_labels` beside them (`from`, `to`, `speaker` for each word, by its start). The words
/// make the cues.
pub(super) fn watson_speech(object: &Map<String, Value>) -> Option<Read> {
    let results = non_empty_array(object.get("results"))?;
    let speakers: HashMap<u64, String> = object
        .get("speaker_labels")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|label| Some((seconds_ms(label.get("from")?)?, speaker_name(label.get("speaker"))?)))
        .collect();
    let mut words = Vec::new();
    for result in results {
        let best = result.get("alternatives")?.as_array()?.first()?;
        for stamp in best.get("timestamps")?.as_array()? {
            let [word, start, end] = stamp.as_array()?.as_slice() else {
                return None;
            };
            let start = seconds_ms(start)?;
            words.push(TimedWord {
                start,
                end: seconds_ms(end)?,
                speaker: speakers.get(&start).cloned(),
                text: word.as_str()?.trim().to_string(),
            });
        }
    }
    // Watson writes a pause it heard as `%HESITATION`.
    words.retain(|w| w.text != "%HESITATION");
    // Watson names no language in its response.
    Some((cues_of_words(words), None))
}

/// A Google result's alternative's words.
fn google_words(best: Option<&Map<String, Value>>) -> impl Iterator<Item = &Value> {
    best.and_then(|b| b.get("words")?.as_array()).into_iter().flatten()
}

/// `value`'s `key`, else its `other` (a field v1 and v2 name apart).
fn either<'a>(value: &'a Value, key: &str, other: &str) -> Option<&'a Value> {
    value.get(key).or_else(|| value.get(other))
}

/// A protocol buffer duration as JSON writes it (`"1.300s"`, `{"seconds": "1", "nanos":
/// 300000000}`), or a number of seconds, in milliseconds.
fn duration_ms(value: &Value) -> Option<u64> {
    match value {
        Value::String(text) => held_ms(text.trim().strip_suffix('s')?.parse::<f64>().ok()? * 1000.0),
        Value::Object(parts) => {
            let seconds = parts.get("seconds").map_or(Some(0.0), |s| match s {
                Value::String(text) => text.trim().parse::<f64>().ok(),
                other => other.as_f64(),
            })?;
            let nanos = parts.get("nanos").map_or(Some(0.0), Value::as_f64)?;
            held_ms(seconds * 1000.0 + nanos / 1e6)
        }
        number => seconds_ms(number),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::parse::{block_texts_of, document_of, said_when};

    #[test]
    fn azure_speechs_phrases_are_cues_in_ticks_with_their_speakers() {
        // A batch transcription with speakers told apart: its phrases grouped as Azure writes
        // them, not in time order; a phrase that recognized nothing passed over.
        let transcription = json!({
            "source": "https://example.blob.core.windows.net/audio/standup.wav",
            "timestamp": "2026-11-30T09:00:00Z", "durationInTicks": 61_000_000u64, "duration": "PT6.1S",
            "combinedRecognizedPhrases": [{"channel": 0, "lexical": "good morning the tide is late", "display": "Good morning. The tide is late."}],
            "recognizedPhrases": [
                {"recognitionStatus": "Success", "channel": 0, "speaker": 2, "offset": "PT3.5S", "duration": "PT2.1S",
                 "offsetInTicks": 35_000_000.0, "durationInTicks": 21_000_000.0, "locale": "en-GB",
                 "nBest": [{"confidence": 0.91, "lexical": "the tide is late", "display": "The tide is late."},
                           {"confidence": 0.4, "lexical": "the tied is late", "display": "The tied is late."}]},
                {"recognitionStatus": "Success", "channel": 0, "speaker": 1, "offset": "PT0.07S", "duration": "PT1.59S",
                 "offsetInTicks": 700_000.0, "durationInTicks": 15_900_000.0, "locale": "en-GB",
                 "nBest": [{"confidence": 0.95, "lexical": "good morning", "display": "Good morning."}]},
                {"recognitionStatus": "NoMatch", "channel": 0, "offsetInTicks": 60_000_000.0, "durationInTicks": 1_000_000.0}
            ]
        });
        let document = document_of("standup.json", transcription.to_string());
        assert_eq!(
            said_when(&document),
            [
                vec![("Speaker 1: Good morning.", 0)],
                vec![("Speaker 2: The tide is late.", 3)]
            ]
        );
        assert_eq!(document.metadata["language"], json!("en-GB"));
        assert_eq!(document.metadata["duration_seconds"], json!(5.6));
        // Newer outputs in milliseconds; two channels and no speakers: each channel a speaker.
        let channels = json!({"recognizedPhrases": [
            {"recognitionStatus": "Success", "channel": 1, "offsetMilliseconds": 900, "durationMilliseconds": 800,
             "nBest": [{"lexical": "yes", "display": "Yes."}]},
            {"recognitionStatus": "Success", "channel": 0, "offsetMilliseconds": 100, "durationMilliseconds": 700,
             "nBest": [{"lexical": "ready", "display": "Ready?"}]}
        ]});
        assert_eq!(
            block_texts_of("call.json", channels.to_string()),
            ["Channel 0: Ready?", "Channel 1: Yes."]
        );
    }

    #[test]
    fn google_speechs_results_or_tagged_words_are_cues() {
        // v1 with speakers told apart: the last result repeats every word, tagged.
        let word = |w: &str, start: &str, end: &str, tag: Option<u32>| match tag {
            Some(tag) => json!({"startTime": start, "endTime": end, "word": w, "speakerTag": tag}),
            None => json!({"startTime": start, "endTime": end, "word": w}),
        };
        let response = json!({"results": [
            {"alternatives": [{"transcript": "good morning", "confidence": 0.9,
                               "words": [word("good", "0.100s", "0.400s", None), word("morning", "0.400s", "0.900s", None)]}],
             "resultEndTime": "1s", "languageCode": "en-us"},
            {"alternatives": [{"transcript": " the tide is late", "confidence": 0.9,
                               "words": [word("the", "3s", "3.200s", None), word("tide", "3.200s", "3.500s", None),
                                         word("is", "3.500s", "3.600s", None), word("late", "3.600s", "4.100s", None)]}],
             "resultEndTime": "4.200s", "languageCode": "en-us"},
            {"alternatives": [{"words": [
                word("good", "0.100s", "0.400s", Some(1)), word("morning", "0.400s", "0.900s", Some(1)),
                word("the", "3s", "3.200s", Some(2)), word("tide", "3.200s", "3.500s", Some(2)),
                word("is", "3.500s", "3.600s", Some(2)), word("late", "3.600s", "4.100s", Some(2))]}]}
        ]});
        let document = document_of("standup.json", response.to_string());
        assert_eq!(
            said_when(&document),
            [
                vec![("Speaker 1: good morning", 0)],
                vec![("Speaker 2: the tide is late", 3)]
            ]
        );
        assert_eq!(document.metadata["language"], json!("en-us"));
        // Without speakers: a result a cue, from where the one before ended; v2's offsets and
        // durations written as objects.
        let v2 = json!({"results": [
            {"alternatives": [{"transcript": "Low water at noon."}], "resultEndOffset": {"seconds": "2", "nanos": 500_000_000}, "languageCode": "en-US"},
            {"alternatives": [{"transcript": "High water at six."}], "resultEndOffset": "9.250s", "languageCode": "en-US"}
        ]});
        let document = document_of("tides.json", v2.to_string());
        assert_eq!(
            said_when(&document),
            // One paragraph (no pause between them), each result's time marked.
            [vec![("Low water at noon. ", 0), ("High water at six.", 2)]]
        );
        assert_eq!(document.metadata["duration_seconds"], json!(9.25));
        // Results with no time at all are no transcript.
        let untimed = json!({"results": [{"alternatives": [{"transcript": "quay"}]}]});
        assert_eq!(
            block_texts_of("untimed.json", untimed.to_string()),
            ["results[0].alternatives[0].transcript: quay"]
        );
    }

    #[test]
    fn watsons_timestamps_and_speaker_labels_are_read() {
        let response = json!({
            "result_index": 0,
            "results": [
                {"final": true, "alternatives": [{"transcript": "good morning ", "confidence": 0.96,
                    "timestamps": [["good", 0.1, 0.4], ["morning", 0.4, 0.9]]}]},
                {"final": true, "alternatives": [{"transcript": "%HESITATION the tide is late ", "confidence": 0.9,
                    "timestamps": [["%HESITATION", 2.8, 3.0], ["the", 3.0, 3.2], ["tide", 3.2, 3.5], ["is", 3.5, 3.6], ["late", 3.6, 4.1]]}]}
            ],
            "speaker_labels": [
                {"from": 0.1, "to": 0.4, "speaker": 0, "confidence": 0.5, "final": true},
                {"from": 0.4, "to": 0.9, "speaker": 0, "confidence": 0.5, "final": true},
                {"from": 2.8, "to": 3.0, "speaker": 1, "confidence": 0.5, "final": true},
                {"from": 3.0, "to": 3.2, "speaker": 1, "confidence": 0.5, "final": true},
                {"from": 3.2, "to": 3.5, "speaker": 1, "confidence": 0.5, "final": true},
                {"from": 3.5, "to": 3.6, "speaker": 1, "confidence": 0.5, "final": true},
                {"from": 3.6, "to": 4.1, "speaker": 1, "confidence": 0.5, "final": true}
            ]
        });
        let document = document_of("standup.json", response.to_string());
        assert_eq!(
            said_when(&document),
            [
                vec![("Speaker 0: good morning", 0)],
                vec![("Speaker 1: the tide is late", 3)]
            ]
        );
        // Results without timestamps (not asked for) are no transcript.
        let untimed =
            json!({"results": [{"alternatives": [{"transcript": "quay"}], "final": true}], "result_index": 0});
        assert_eq!(
            block_texts_of("untimed.json", untimed.to_string()),
            ["result_index: 0\nresults[0].alternatives[0].transcript: quay\nresults[0].final: true"]
        );
    }

    #[test]
    fn rev_ais_monologues_and_speechmatics_words_are_read() {
        let rev = json!({"monologues": [
            {"speaker": 0, "elements": [
                {"type": "text", "value": "Good", "ts": 0.1, "end_ts": 0.4, "confidence": 1},
                {"type": "punct", "value": " "},
                {"type": "text", "value": "morning", "ts": 0.4, "end_ts": 0.9, "confidence": 1},
                {"type": "punct", "value": "."}]},
            {"speaker": 1, "speaker_name": "Harbour master", "elements": [
                {"type": "text", "value": "Late", "ts": 3.0, "end_ts": 3.4},
                {"type": "punct", "value": " "},
                {"type": "text", "value": "again", "ts": 3.4, "end_ts": 3.9},
                {"type": "punct", "value": "!"}]}
        ]});
        assert_eq!(
            said_when(&document_of("call.json", rev.to_string())),
            [
                vec![("Speaker 0: Good morning.", 0)],
                vec![("Harbour master: Late again!", 3)]
            ]
        );
        let speechmatics = json!({
            "format": "2.9",
            "metadata": {"created_at": "2026-11-30T09:00:00Z", "type": "transcription", "transcription_config": {"language": "de", "diarization": "speaker"}},
            "results": [
                {"type": "word", "start_time": 0.1, "end_time": 0.5, "alternatives": [{"content": "Guten", "confidence": 1.0, "language": "de", "speaker": "S1"}]},
                {"type": "word", "start_time": 0.5, "end_time": 0.9, "alternatives": [{"content": "Morgen", "confidence": 1.0, "language": "de", "speaker": "S1"}]},
                {"type": "punctuation", "start_time": 0.9, "end_time": 0.9, "is_eos": true, "attaches_to": "previous", "alternatives": [{"content": ".", "confidence": 1.0, "language": "de", "speaker": "S1"}]},
                {"type": "word", "start_time": 1.2, "end_time": 1.6, "alternatives": [{"content": "Ja", "confidence": 0.9, "language": "de", "speaker": "UU"}]}
            ]
        });
        let document = document_of("call.json", speechmatics.to_string());
        // An unknown speaker's words go on in the paragraph, their time marked.
        assert_eq!(said_when(&document), [vec![("S1: Guten Morgen. ", 0), ("Ja", 1)]]);
        assert_eq!(document.metadata["language"], json!("de"));
    }
}
