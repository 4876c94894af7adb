//! `--summaries llm`: each document's layers written by the LLM endpoint (seed 003's
//! GenerateDocumentContext: two calls, an L0 one-sentence abstract and an L1 overview, over the
//! document's first [`PROMPT_INPUT_LIMIT`] characters). A document the endpoint fails on (after
//! its retries) or answers emptily gets the extractive layers instead, recorded as made by the
//! extractive summarizer, so the next run under the LLM makes them again; its run goes on.
//!
//! A collection's layers (seed 003's GenerateDatasetContext) take two calls in turn: an overview
//! of the collection from "- name: abstract" lines, one per document (its most representative
//! abstracts, ranked as the extractive summarizer ranks them, as many as fit in
//! [`PROMPT_INPUT_LIMIT`] characters), then the abstract from that overview. Where either call
//! fails, the extractive layers stand in.
//!
//! The summarizer is called where documents are parsed: on the batch run's parse stage, a
//! group of documents at a time, and on an upload's blocking task, never on an async worker.
//! It blocks that thread on the runtime the endpoint's client lives on while every document
//! of the group is summarized, with at most `--llm-concurrency` requests in flight (a
//! document's two calls go out together), however many threads parse.

use std::sync::Arc;

use futures::StreamExt;
use quarry_indexer::index::analysis::StemLanguage;
use quarry_indexer::summary::{
    extractive_collection_layers, representative, sampled, Budget, DocumentLayers, DocumentSentences,
    ExtractiveSummarizer, NamedAbstract, Sentence, Summaries, Summarizer,
};
use serde_json::{json, Map, Value};
use tokio::sync::Semaphore;

use crate::error::ServerError;
use crate::llm::{ChatCall, ChatMessage, LlmClient, LlmSettings};

/// The most characters of a document put in a prompt (seed 003's DefaultPromptInputLimit).
pub const PROMPT_INPUT_LIMIT: usize = 8000;
/// The longest L0 kept, in characters.
const MAX_ABSTRACT_CHARS: usize = 1000;
/// The longest L1 kept, in characters.
const MAX_OVERVIEW_CHARS: usize = 6000;

/// The instruction for L0.
pub const ABSTRACT_PROMPT: &str = "Summarize the document below in one sentence of at most 40 words, in the document's own language. Answer with that sentence only.";
/// The instruction for L1.
pub const OVERVIEW_PROMPT: &str = "Write an overview of the document below in at most five sentences, in the document's own language: what it is about, its main points, and what a reader finds in it. Answer with the overview only.";

/// The instruction for a collection's L1, over its documents' "- name: abstract" lines.
pub const COLLECTION_OVERVIEW_PROMPT: &str = "Below is a list of the documents of a collection, one line each: a document's name and a one-sentence summary of it. Write an overview of the collection in at most five sentences, in the language most of the documents are written in: what it holds, its main subjects, and what a reader finds in it. Answer with the overview only.";
/// The instruction for a collection's L0, over its L1.
pub const COLLECTION_ABSTRACT_PROMPT: &str = "Below is an overview of a collection of documents. Summarize it in one sentence of at most 40 words, in the overview's own language. Answer with that sentence only.";
/// The most documents a collection's overview prompt lists.
const COLLECTION_PROMPT_DOCUMENTS: usize = 400;

/// The summarizer `--summaries` names, with the LLM endpoint when one is set.
pub fn summarizer_for(
    summaries: Summaries,
    llm: Option<&LlmSettings>,
    runtime: tokio::runtime::Handle,
) -> Result<Arc<dyn Summarizer>, ServerError> {
    if let Some(built_in) = summaries.summarizer() {
        return Ok(built_in);
    }
    let settings = llm.ok_or_else(|| {
        ServerError::Settings("--summaries llm needs an LLM endpoint: set --llm-url and --llm-model".into())
    })?;
    Ok(Arc::new(LlmSummarizer::new(settings.clone(), runtime)?))
}

/// Layers written by an OpenAI-compatible chat-completions endpoint.
pub struct LlmSummarizer {
    client: LlmClient,
    runtime: tokio::runtime::Handle,
    /// Requests in flight at most, and documents summarized at once.
    concurrency: usize,
    requests: Semaphore,
    /// `llm:<model>`: another model is another summarizer, and makes the layers again.
    name: String,
    fallback: ExtractiveSummarizer,
}

impl LlmSummarizer {
    pub fn new(settings: LlmSettings, runtime: tokio::runtime::Handle) -> Result<Self, ServerError> {
        let name = format!("llm:{}", settings.model);
        let concurrency = settings.concurrency.max(1);
        Ok(Self {
            client: LlmClient::new(settings)?,
            runtime,
            concurrency,
            requests: Semaphore::new(concurrency),
            name,
            fallback: ExtractiveSummarizer,
        })
    }

    async fn ask(&self, instruction: &str, document: &str, max_tokens: u32) -> Result<String, ServerError> {
        let mut options = Map::new();
        options.insert("temperature".into(), json!(0));
        options.insert("max_tokens".into(), Value::from(max_tokens));
        let call = ChatCall {
            model: None,
            messages: vec![
                ChatMessage {
                    role: "system".into(),
                    content: instruction.into(),
                },
                ChatMessage {
                    role: "user".into(),
                    content: document.into(),
                },
            ],
            options,
        };
        let _request = self.requests.acquire().await.map_err(|_| ServerError::LlmAnswer {
            url: self.client.url().to_string(),
            reason: "the summarizer is closed".into(),
        })?;
        self.client.complete(&call).await
    }

    /// A collection's layers from its prompt's lines: the overview, then the abstract from it.
    async fn collection_written(&self, lines: &str) -> Result<DocumentLayers, ServerError> {
        let overview = tidy(
            &self.ask(COLLECTION_OVERVIEW_PROMPT, lines, 600).await?,
            MAX_OVERVIEW_CHARS,
            false,
        );
        if overview.is_empty() {
            return Err(self.empty_answer());
        }
        let abstract_text = tidy(
            &self.ask(COLLECTION_ABSTRACT_PROMPT, &overview, 120).await?,
            MAX_ABSTRACT_CHARS,
            true,
        );
        if abstract_text.is_empty() {
            return Err(self.empty_answer());
        }
        Ok(DocumentLayers {
            abstract_text,
            overview,
            made_by: self.name.clone(),
        })
    }

    fn empty_answer(&self) -> ServerError {
        ServerError::LlmAnswer {
            url: self.client.url().to_string(),
            reason: "an empty summary".into(),
        }
    }

    async fn written(&self, document: &str) -> Result<DocumentLayers, ServerError> {
        let (abstract_text, overview) = tokio::try_join!(
            self.ask(ABSTRACT_PROMPT, document, 120),
            self.ask(OVERVIEW_PROMPT, document, 600)
        )?;
        let abstract_text = tidy(&abstract_text, MAX_ABSTRACT_CHARS, true);
        let overview = tidy(&overview, MAX_OVERVIEW_CHARS, false);
        if abstract_text.is_empty() || overview.is_empty() {
            return Err(self.empty_answer());
        }
        Ok(DocumentLayers {
            abstract_text,
            overview,
            made_by: String::new(),
        })
    }
}

/// The document's text for a prompt: its sentences, a paragraph's worth to a line, cut at
/// [`PROMPT_INPUT_LIMIT`] characters.
fn prompt_text(sentences: &[Sentence]) -> String {
    let mut text = String::new();
    let mut chars = 0;
    for sentence in sentences {
        let room = PROMPT_INPUT_LIMIT.saturating_sub(chars + 1);
        if room == 0 {
            break;
        }
        if !text.is_empty() {
            text.push(' ');
            chars += 1;
        }
        let before = text.len();
        text.extend(sentence.text.chars().take(room));
        chars += text[before..].chars().count();
    }
    text
}

/// A collection's overview prompt: "- name: abstract" lines of its most representative
/// documents (of an even sample of it), the most central first, at most
/// [`COLLECTION_PROMPT_DOCUMENTS`] of them and [`PROMPT_INPUT_LIMIT`] characters.
fn collection_prompt_lines(documents: &[NamedAbstract<'_>]) -> String {
    let sampled = sampled(documents);
    let budget = Budget {
        sentences: COLLECTION_PROMPT_DOCUMENTS,
        chars: PROMPT_INPUT_LIMIT,
    };
    let mut text = String::new();
    let mut chars = 0;
    for i in representative(&sampled, budget) {
        let line = format!(
            "- {}: {}",
            sampled[i].name.split_whitespace().collect::<Vec<_>>().join(" "),
            sampled[i].text.split_whitespace().collect::<Vec<_>>().join(" ")
        );
        let length = line.chars().count() + usize::from(!text.is_empty());
        if chars + length > PROMPT_INPUT_LIMIT {
            continue;
        }
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&line);
        chars += length;
    }
    text
}

/// An answer trimmed (on one line for L0), cut at `max_chars`.
fn tidy(answer: &str, max_chars: usize, one_line: bool) -> String {
    let answer = answer.trim();
    let text = match one_line {
        true => answer.split_whitespace().collect::<Vec<_>>().join(" "),
        false => answer.to_string(),
    };
    text.chars().take(max_chars).collect()
}

impl Summarizer for LlmSummarizer {
    fn name(&self) -> &str {
        &self.name
    }

    fn layers(&self, sentences: &[Sentence], language: Option<StemLanguage>) -> DocumentLayers {
        self.layers_of_all(&[DocumentSentences { sentences, language }])
            .pop()
            .unwrap_or_default()
    }

    /// Every document's layers, `concurrency` documents at once (each one's two calls at once,
    /// within the same bound on requests in flight), in order.
    fn layers_of_all(&self, documents: &[DocumentSentences<'_>]) -> Vec<DocumentLayers> {
        let layers = futures::stream::iter(documents)
            .map(|document| async move {
                match self.written(&prompt_text(document.sentences)).await {
                    Ok(layers) => layers,
                    Err(e) => {
                        tracing::warn!("document layers: {e}; the extractive layers stand in until a later run");
                        DocumentLayers {
                            made_by: self.fallback.name().to_string(),
                            ..self.fallback.layers(document.sentences, document.language)
                        }
                    }
                }
            })
            .buffered(self.concurrency)
            .collect::<Vec<_>>();
        self.runtime.block_on(layers)
    }

    fn collection_layers(&self, documents: &[NamedAbstract<'_>]) -> DocumentLayers {
        let lines = collection_prompt_lines(documents);
        if lines.is_empty() {
            return DocumentLayers::default();
        }
        match self.runtime.block_on(self.collection_written(&lines)) {
            Ok(layers) => layers,
            Err(e) => {
                tracing::warn!("collection layers: {e}; the extractive layers stand in");
                extractive_collection_layers(documents)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_hold_the_first_characters_and_answers_are_tidied() {
        let sentences: Vec<Sentence> = (0..2000)
            .map(|position| Sentence {
                text: format!("Sentence number {position} is here."),
                position,
            })
            .collect();
        let text = prompt_text(&sentences);
        assert!(text.starts_with("Sentence number 0 is here. Sentence number 1"));
        assert!(text.chars().count() <= PROMPT_INPUT_LIMIT);
        assert_eq!(tidy("  One\n sentence.  ", 100, true), "One sentence.");
        assert_eq!(tidy("A.\n\nB.", 100, false), "A.\n\nB.");
        assert_eq!(tidy("abcdef", 3, true), "abc");
    }

    #[test]
    fn a_collections_prompt_lists_its_representative_abstracts_within_the_limit() {
        let texts: Vec<(String, String)> = (0..3_000)
            .map(|i| {
                let text = match i % 3 {
                    0 => format!("Report {i} counts the containers the harbour cranes loaded on ships."),
                    _ => format!("Note {i} tells of rain, wind and fog over the harbour {}.", i % 7),
                };
                (format!("file {i}.md"), text)
            })
            .collect();
        let documents: Vec<NamedAbstract<'_>> = texts.iter().map(|(name, text)| NamedAbstract { name, text }).collect();
        let lines = collection_prompt_lines(&documents);
        assert!(lines.chars().count() <= PROMPT_INPUT_LIMIT, "{}", lines.len());
        let listed: Vec<&str> = lines.lines().collect();
        assert!(
            (20..=COLLECTION_PROMPT_DOCUMENTS).contains(&listed.len()),
            "{}",
            listed.len()
        );
        for line in &listed {
            let (name, text) = line.trim_start_matches("- ").split_once(": ").unwrap();
            assert!(texts.iter().any(|(n, t)| n == name && t == text), "{line}");
        }
        assert!(
            listed.iter().any(|l| l.contains("Report")) && listed.iter().any(|l| l.contains("Note")),
            "both kinds of document stand for the collection"
        );
        assert_eq!(collection_prompt_lines(&documents[..0]), "");
    }

    #[test]
    fn llm_summaries_need_an_endpoint() {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let refused = summarizer_for(Summaries::Llm, None, runtime.handle().clone())
            .err()
            .unwrap();
        assert!(refused.to_string().contains("--llm-url"), "{refused}");
        let built_in = summarizer_for(Summaries::Off, None, runtime.handle().clone()).unwrap();
        assert_eq!(built_in.name(), "none");
    }
}
