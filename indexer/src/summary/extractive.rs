//! Layers from a document's own sentences, with no model: centroid centrality and maximal
//! marginal relevance over the sentences' terms.
//!
//! Each sentence is a vector of its terms as the keyword lane's multilingual analyzer reads
//! the document's language (stems without stop words; character pairs in scripts written
//! without spaces), weighted by tf·idf over the document's sentences, so words every sentence
//! uses weigh little. A sentence is central as its cosine with the rest of the document (the
//! sum of the other sentences' vectors, as in LexRank's centroid). L0 is the most central
//! sentence; L1 adds, one at a time, the sentence best by MMR (Carbonell and Goldstein 1998:
//! centrality less similarity to those already chosen, λ = 0.7), and lists them in the
//! document's order. Deterministic: ties go to the earlier sentence.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use super::sentences::Sentence;
use super::{DocumentLayers, Summarizer};
use crate::index::analysis::{KeywordAnalyzer, LanguageProfile, StemLanguage, TextReader};

/// A candidate has at least this many distinct terms (shorter ones are headings, labels)...
const MIN_TERMS: usize = 3;
/// ...and at most this many characters (longer ones are lists or tables run together).
const MAX_SENTENCE_CHARS: usize = 600;
/// L1 stops at this many sentences...
const OVERVIEW_SENTENCES: usize = 5;
/// ...or before it would pass this many characters (its first sentence always goes in).
const OVERVIEW_CHARS: usize = 1_000;
/// MMR's weight of centrality against novelty.
const MMR_LAMBDA: f32 = 0.7;
/// A sentence stands for the document when it has no sentence of MIN_TERMS: at most this
/// many characters of it.
const FALLBACK_CHARS: usize = 300;

/// The default summarizer (see the module's doc).
pub struct ExtractiveSummarizer;

impl Summarizer for ExtractiveSummarizer {
    fn name(&self) -> &str {
        "extractive-v1"
    }

    fn layers(&self, sentences: &[Sentence], language: Option<StemLanguage>) -> DocumentLayers {
        let Some(chosen) = pick(sentences, language, MAX_SENTENCE_CHARS, DOCUMENT_OVERVIEW) else {
            return fallback(sentences);
        };
        let abstract_text = sentences[chosen[0]].text.clone();
        let mut in_order = chosen;
        in_order.sort_unstable();
        let overview = in_order
            .iter()
            .map(|&i| sentences[i].text.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        DocumentLayers {
            abstract_text,
            overview,
            made_by: String::new(),
        }
    }
}

/// How much an overview holds: at most `sentences` of them, and no more than `chars`
/// characters (its first sentence always goes in).
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    pub sentences: usize,
    pub chars: usize,
}

/// A document's overview: OVERVIEW_SENTENCES, OVERVIEW_CHARS.
pub(super) const DOCUMENT_OVERVIEW: Budget = Budget {
    sentences: OVERVIEW_SENTENCES,
    chars: OVERVIEW_CHARS,
};

/// The sentences MMR picks among the candidates (at least MIN_TERMS distinct terms, at most
/// `max_chars` characters, each text once, those that end as sentences do first), in the
/// order picked, the most central first, within `budget`; None when no sentence is a
/// candidate.
pub(super) fn pick(
    sentences: &[Sentence],
    language: Option<StemLanguage>,
    max_chars: usize,
    budget: Budget,
) -> Option<Vec<usize>> {
    let vectors = TermVectors::of(sentences, language);
    let chars: Vec<usize> = sentences.iter().map(|s| s.text.chars().count()).collect();
    // A sentence said again (boilerplate, a repeated line) is a candidate once; sentences
    // that end as sentences do go before unterminated text (headings, labels, list items).
    let mut seen = std::collections::HashSet::new();
    let sized: Vec<usize> = (0..sentences.len())
        .filter(|&i| vectors.terms[i].len() >= MIN_TERMS && chars[i] <= max_chars)
        .filter(|&i| seen.insert(sentences[i].text.as_str()))
        .collect();
    let terminated: Vec<usize> = sized
        .iter()
        .copied()
        .filter(|&i| is_terminated(&sentences[i].text))
        .collect();
    let candidates = if terminated.is_empty() { sized } else { terminated };
    if candidates.is_empty() {
        return None;
    }
    let centrality: Vec<f32> = (0..sentences.len()).map(|i| vectors.centrality(i)).collect();
    Some(mmr(&candidates, &centrality, &vectors, &chars, budget))
}

/// Whether `text` ends with a sentence terminal of some script (closing quotes and brackets
/// after it allowed).
fn is_terminated(text: &str) -> bool {
    const TERMINALS: &[char] = &[
        '.', '!', '?', '。', '！', '？', '｡', '؟', '۔', '।', '॥', '…', '܂', '።', '။',
    ];
    const CLOSERS: &[char] = &['"', '\'', '”', '’', '»', ')', ']', '」', '』', '）', '】'];
    text.trim_end_matches(CLOSERS).ends_with(TERMINALS)
}

/// The first sentence, cut at FALLBACK_CHARS, as both layers (nothing when there is no text).
fn fallback(sentences: &[Sentence]) -> DocumentLayers {
    let Some(first) = sentences.first() else {
        return DocumentLayers::default();
    };
    let text = match first.text.char_indices().nth(FALLBACK_CHARS) {
        Some((end, _)) => format!("{}…", first.text[..end].trim_end()),
        None => first.text.clone(),
    };
    DocumentLayers {
        abstract_text: text.clone(),
        overview: text,
        made_by: String::new(),
    }
}

thread_local! {
    /// The keyword lane's reader of each parse thread, kept from one document to the next: its
    /// stemmers, stop word lists and cache of the words it has read are made once, not per document.
    static READER: RefCell<TextReader> =
        RefCell::new(KeywordAnalyzer::Multilingual(Arc::new(LanguageProfile::default())).text_reader());
}

/// The sentences' tf·idf vectors over the document's terms.
struct TermVectors {
    /// Per sentence, (term id, weight), by term id.
    terms: Vec<Vec<(u32, f32)>>,
    norms: Vec<f32>,
    /// The sum of every sentence's vector, by term id, and its squared norm.
    total: Vec<f32>,
    total_sq: f32,
}

impl TermVectors {
    fn of(sentences: &[Sentence], language: Option<StemLanguage>) -> Self {
        READER.with_borrow_mut(|reader| Self::read(reader, sentences, language))
    }

    fn read(reader: &mut TextReader, sentences: &[Sentence], language: Option<StemLanguage>) -> Self {
        let mut ids: HashMap<String, u32> = HashMap::new();
        let mut counts: Vec<Vec<(u32, f32)>> = Vec::with_capacity(sentences.len());
        let mut occurrences: Vec<u32> = Vec::new();
        for sentence in sentences {
            occurrences.clear();
            reader.for_each_term_as(&sentence.text, language, |term, _| {
                let id = match ids.get(term) {
                    Some(&id) => id,
                    None => {
                        let id = ids.len() as u32;
                        ids.insert(term.to_string(), id);
                        id
                    }
                };
                occurrences.push(id);
            });
            occurrences.sort_unstable();
            let mut tf: Vec<(u32, f32)> = Vec::with_capacity(occurrences.len());
            for &id in &occurrences {
                match tf.last_mut() {
                    Some((last, count)) if *last == id => *count += 1.0,
                    _ => tf.push((id, 1.0)),
                }
            }
            counts.push(tf);
        }
        let mut df = vec![0u32; ids.len()];
        for tf in &counts {
            for &(id, _) in tf {
                df[id as usize] += 1;
            }
        }
        let n = sentences.len() as f32;
        let idf: Vec<f32> = df.iter().map(|&d| (1.0 + n / d as f32).ln()).collect();
        let mut total = vec![0f32; ids.len()];
        let terms: Vec<Vec<(u32, f32)>> = counts
            .into_iter()
            .map(|tf| {
                tf.into_iter()
                    .map(|(id, count)| {
                        let weight = count * idf[id as usize];
                        total[id as usize] += weight;
                        (id, weight)
                    })
                    .collect()
            })
            .collect();
        let norms = terms
            .iter()
            .map(|t| t.iter().map(|(_, w)| w * w).sum::<f32>().sqrt())
            .collect();
        let total_sq = total.iter().map(|w| w * w).sum();
        Self {
            terms,
            norms,
            total,
            total_sq,
        }
    }

    /// Sentence `i`'s cosine with the other sentences' sum (1 for a lone sentence):
    /// with rest = total - own, own·rest = own·total - |own|² and
    /// |rest|² = |total|² - 2 own·total + |own|².
    fn centrality(&self, i: usize) -> f32 {
        if self.terms.len() == 1 {
            return 1.0;
        }
        let own_total: f32 = self.terms[i].iter().map(|&(id, w)| w * self.total[id as usize]).sum();
        let own_sq = self.norms[i] * self.norms[i];
        let dot = own_total - own_sq;
        let rest_sq = (self.total_sq - 2.0 * own_total + own_sq).max(0.0);
        let denominator = self.norms[i] * rest_sq.sqrt();
        if denominator > 0.0 {
            (dot / denominator).clamp(0.0, 1.0)
        } else {
            0.0
        }
    }

    /// The cosine of sentences `a` and `b`.
    fn similarity(&self, a: usize, b: usize) -> f32 {
        let (x, y) = (&self.terms[a], &self.terms[b]);
        let (mut i, mut j, mut dot) = (0, 0, 0f32);
        while i < x.len() && j < y.len() {
            match x[i].0.cmp(&y[j].0) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    dot += x[i].1 * y[j].1;
                    i += 1;
                    j += 1;
                }
            }
        }
        let denominator = self.norms[a] * self.norms[b];
        if denominator > 0.0 {
            dot / denominator
        } else {
            0.0
        }
    }
}

/// The candidates MMR picks, in the order picked (the most central first), within `budget`;
/// `chars[i]` is sentence `i`'s length.
fn mmr(candidates: &[usize], centrality: &[f32], vectors: &TermVectors, chars: &[usize], budget: Budget) -> Vec<usize> {
    let mut chosen: Vec<usize> = Vec::new();
    let mut length = 0;
    let mut left: Vec<usize> = candidates.to_vec();
    // Per candidate left, its largest similarity to a chosen sentence.
    let mut redundancy = vec![0f32; left.len()];
    while chosen.len() < budget.sentences && !left.is_empty() {
        let score = |k: usize| MMR_LAMBDA * centrality[left[k]] - (1.0 - MMR_LAMBDA) * redundancy[k];
        // The best score; ties to the earlier sentence (candidates are in document order).
        let best = (0..left.len()).fold(0, |best, k| if score(k) > score(best) { k } else { best });
        let sentence = left.remove(best);
        redundancy.remove(best);
        length += chars[sentence] + usize::from(!chosen.is_empty());
        chosen.push(sentence);
        for (k, &other) in left.iter().enumerate() {
            redundancy[k] = redundancy[k].max(vectors.similarity(sentence, other));
        }
        // Those too long to add now never will be; shorter ones may still fit.
        let room = budget.chars.saturating_sub(length + 1);
        (left, redundancy) = left
            .iter()
            .copied()
            .zip(redundancy.iter().copied())
            .filter(|&(other, _)| chars[other] <= room)
            .unzip();
    }
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::analysis::detect;
    use crate::parse::Block;
    use crate::summary::sentences::tests::document;
    use crate::summary::sentences_of;

    /// The layers of a document of `text`, in the language detected in it.
    fn layers_of(text: &str) -> DocumentLayers {
        let sentences = sentences_of(&document(vec![Block::text(text, &[])]));
        ExtractiveSummarizer.layers(&sentences, detect(text).stem_language())
    }

    const RIVER: &str = "Contents. The Rhine is a river that flows from the Alps to the North Sea. \
        Many ships carry coal and grain on the Rhine between Basel and Rotterdam. \
        The weather in Basel was mild last spring. \
        Ships on the river Rhine pass castles and vineyards on their way to the sea. \
        Ships on the river Rhine pass castles and vineyards on their way to the sea.";

    #[test]
    fn the_abstract_is_the_most_central_sentence_and_the_overview_keeps_the_order() {
        let layers = layers_of(RIVER);
        assert!(
            layers.abstract_text.contains("Rhine"),
            "a sentence about the river, not the weather: {layers:?}"
        );
        assert!(RIVER.contains(&layers.abstract_text), "{layers:?}");
        assert!(layers.overview.contains(&layers.abstract_text));
        // The repeated sentence is chosen once at most; the heading-like "Contents." never.
        assert_eq!(layers.overview.matches("pass castles").count(), 1, "{layers:?}");
        assert!(!layers.overview.contains("Contents."), "{layers:?}");
        // In the document's order.
        let positions: Vec<usize> = layers
            .overview
            .split_inclusive(". ")
            .map(|s| RIVER.find(s.trim()).expect("a sentence of the document"))
            .collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]), "{positions:?}");
        // Deterministic.
        assert_eq!(layers, layers_of(RIVER));
    }

    #[test]
    fn german_and_japanese_documents_get_their_own_sentences() {
        let german = "Der Rhein fließt von den Alpen bis zur Nordsee. Auf dem Rhein fahren viele Schiffe mit Kohle. \
            Das Wetter war gestern schön. Die Schiffe auf dem Rhein fahren an Burgen vorbei.";
        let layers = layers_of(german);
        assert!(layers.abstract_text.contains("Rhein"), "{layers:?}");
        let japanese =
            "東京は日本の首都です。東京の人口はとても多いです。昨日は雨でした。東京には多くの会社があります。";
        let layers = layers_of(japanese);
        assert!(layers.abstract_text.starts_with("東京"), "{layers:?}");
        assert!(layers.abstract_text.ends_with('。') && japanese.contains(&layers.abstract_text));
    }

    #[test]
    fn headings_and_labels_give_way_to_sentences() {
        let text =
            "The quarry sample corpus\n\nA few small documents in every format quarry parses. They serve the tests.";
        let layers = layers_of(text);
        assert!(!layers.overview.contains("corpus A"), "{layers:?}");
        assert!(is_terminated("He said “yes.”") && is_terminated("東京です。") && !is_terminated("Contents"));
    }

    #[test]
    fn short_and_empty_documents() {
        let layers = layers_of("Hello.");
        assert_eq!(layers.abstract_text, "Hello.");
        assert_eq!(layers.overview, "Hello.");
        assert_eq!(layers_of("  "), DocumentLayers::default());
        let long_word = "x".repeat(5_000);
        let layers = layers_of(&long_word);
        assert_eq!(
            layers.abstract_text.chars().count(),
            FALLBACK_CHARS + 1,
            "cut, with an ellipsis"
        );
    }

    #[test]
    fn the_overview_is_bounded() {
        let text: String = (0..200)
            .map(|i| format!("Sentence number {i} talks about rivers, boats and harbour cranes {i}. "))
            .collect();
        let layers = layers_of(&text);
        assert!(
            layers.overview.chars().count() <= OVERVIEW_CHARS,
            "{}",
            layers.overview.len()
        );
        assert!(layers.overview.matches("Sentence number").count() <= OVERVIEW_SENTENCES);
    }
}
