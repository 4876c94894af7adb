//! A collection's own layers (seed 003's GenerateDatasetContext): its L1 overview and its L0
//! abstract, made from its documents' abstracts rather than from their text.
//!
//! The extractive way reads each abstract as one sentence of a document that is the whole
//! collection and picks among them as a document's layers are picked (centroid centrality and
//! MMR, `extractive.rs`): the overview is the abstracts most central to the collection and
//! least like each other, the most central first; the abstract is the most central one. A
//! summarizer that writes (`--summaries llm`) ranks the abstracts the same way to choose
//! which of them its prompt holds. Over a large collection at most [`COLLECTION_SAMPLE`]
//! abstracts are read, evenly spaced in the order given, so the cost is bounded and the
//! result the same each time.

use super::extractive::{pick, Budget, DOCUMENT_OVERVIEW};
use super::{DocumentLayers, ExtractiveSummarizer, Sentence, Summarizer};

/// The most abstracts a collection's layers are made from.
pub const COLLECTION_SAMPLE: usize = 10_000;
/// The longest abstract read, in characters (an LLM's abstracts are up to 1,000).
const MAX_ABSTRACT_CHARS: usize = 1_000;

/// One document's abstract (its L0) and the name a collection's listing gives it.
#[derive(Debug, Clone, Copy)]
pub struct NamedAbstract<'a> {
    pub name: &'a str,
    pub text: &'a str,
}

/// At most [`COLLECTION_SAMPLE`] of the documents, evenly spaced from the first.
pub fn sampled<'a>(documents: &[NamedAbstract<'a>]) -> Vec<NamedAbstract<'a>> {
    sample(documents.len()).into_iter().map(|i| documents[i]).collect()
}

/// The places of at most [`COLLECTION_SAMPLE`] of `count` documents, evenly spaced from the
/// first.
fn sample(count: usize) -> Vec<usize> {
    if count <= COLLECTION_SAMPLE {
        return (0..count).collect();
    }
    (0..COLLECTION_SAMPLE).map(|k| k * count / COLLECTION_SAMPLE).collect()
}

/// Of the documents (a sample of the collection), those whose abstracts stand for it, the most
/// central first, within `budget` (counting each abstract's characters); empty when none has
/// an abstract of three terms or more (or, failing that, any abstract at all: the first then).
pub fn representative(documents: &[NamedAbstract<'_>], budget: Budget) -> Vec<usize> {
    let with_text: Vec<usize> = (0..documents.len())
        .filter(|&i| !documents[i].text.trim().is_empty())
        .collect();
    let sentences: Vec<Sentence> = with_text
        .iter()
        .enumerate()
        .map(|(position, &i)| Sentence {
            text: documents[i].text.split_whitespace().collect::<Vec<_>>().join(" "),
            position,
        })
        .collect();
    // No language is told: a collection may hold many; words are read as written.
    match pick(&sentences, None, MAX_ABSTRACT_CHARS, budget) {
        Some(chosen) => chosen.into_iter().map(|k| with_text[k]).collect(),
        None => with_text.into_iter().take(1).collect(),
    }
}

/// The extractive layers of a collection of these documents (see the module's doc), made by
/// [`ExtractiveSummarizer`]; empty when none has an abstract.
pub fn extractive_collection_layers(documents: &[NamedAbstract<'_>]) -> DocumentLayers {
    let sampled = sampled(documents);
    let chosen = representative(&sampled, DOCUMENT_OVERVIEW);
    let Some(&first) = chosen.first() else {
        return DocumentLayers::default();
    };
    let overview = chosen
        .iter()
        .map(|&i| sampled[i].text.trim())
        .collect::<Vec<_>>()
        .join(" ");
    DocumentLayers {
        abstract_text: sampled[first].text.trim().to_string(),
        overview,
        made_by: ExtractiveSummarizer.name().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named<'a>(abstracts: &'a [(String, String)]) -> Vec<NamedAbstract<'a>> {
        abstracts
            .iter()
            .map(|(name, text)| NamedAbstract { name, text })
            .collect()
    }

    fn collection(texts: &[&str]) -> Vec<(String, String)> {
        texts
            .iter()
            .enumerate()
            .map(|(i, text)| (format!("doc-{i}.md"), text.to_string()))
            .collect()
    }

    const HARBOUR: &[&str] = &[
        "The harbour cranes load containers onto ships at night.",
        "Ships wait in the harbour until the cranes are free.",
        "A new crane doubles the containers the harbour loads each day.",
        "The cafeteria serves soup on Fridays.",
        "Container ships leave the harbour at high tide.",
        "Ships wait in the harbour until the cranes are free.",
        "",
        "Parking",
    ];

    #[test]
    fn the_collections_abstract_is_its_most_central_document_and_the_overview_its_representatives() {
        let abstracts = collection(HARBOUR);
        let layers = extractive_collection_layers(&named(&abstracts));
        assert_eq!(layers.made_by, "extractive-v1");
        assert!(HARBOUR.contains(&layers.abstract_text.as_str()), "{layers:?}");
        assert!(
            layers.abstract_text.contains("harbour"),
            "about the harbour: {layers:?}"
        );
        assert!(
            layers.overview.starts_with(&layers.abstract_text),
            "the most central first: {layers:?}"
        );
        // Each abstract once, the label never.
        assert_eq!(
            layers.overview.matches("until the cranes are free").count(),
            1,
            "{layers:?}"
        );
        assert!(!layers.overview.contains("Parking"), "{layers:?}");
        assert_eq!(
            layers,
            extractive_collection_layers(&named(&abstracts)),
            "deterministic"
        );
    }

    #[test]
    fn japanese_abstracts_and_a_collection_of_labels_or_nothing() {
        let japanese = collection(&[
            "港のクレーンは夜にコンテナを船に積みます。",
            "船はクレーンが空くまで港で待ちます。",
            "食堂は金曜日にスープを出します。",
            "新しいクレーンで港が積むコンテナは倍になります。",
        ]);
        let layers = extractive_collection_layers(&named(&japanese));
        assert!(layers.abstract_text.contains("クレーン"), "{layers:?}");
        let labels = collection(&["", "Parking", "Lobby"]);
        let layers = extractive_collection_layers(&named(&labels));
        assert_eq!(
            (layers.abstract_text.as_str(), layers.overview.as_str()),
            ("Parking", "Parking")
        );
        assert_eq!(extractive_collection_layers(&[]), DocumentLayers::default());
        assert_eq!(
            extractive_collection_layers(&named(&collection(&["", " "]))),
            DocumentLayers::default()
        );
    }

    #[test]
    fn a_large_collection_is_read_through_an_even_sample() {
        assert_eq!(sample(3), vec![0, 1, 2]);
        let spaced = sample(25_000);
        assert_eq!(spaced.len(), COLLECTION_SAMPLE);
        assert_eq!((spaced[0], spaced[1], spaced[COLLECTION_SAMPLE - 1]), (0, 2, 24_997));
        let texts: Vec<String> = (0..25_000)
            .map(|i| match i % 5 {
                0 => format!("Report {i} counts the containers the harbour cranes loaded."),
                _ => format!("Note {i} about the weather, rain and wind at sea {}.", i % 97),
            })
            .collect();
        let abstracts: Vec<(String, String)> = texts
            .into_iter()
            .enumerate()
            .map(|(i, t)| (format!("{i}"), t))
            .collect();
        let layers = extractive_collection_layers(&named(&abstracts));
        assert!(
            !layers.abstract_text.is_empty() && layers.overview.chars().count() <= 1_000,
            "{layers:?}"
        );
    }
}
