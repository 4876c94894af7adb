//! Which of a document's layers a search returns (seed 003): `L2`, its chunks (the default);
//! `L1`, its overview; `L0`, its one-sentence abstract. A search for L0 or L1 ranks chunks
//! as always and answers once per document, with that layer as the content; the chunk that
//! placed the document stays in `metadata.matched_chunk`.

use serde::{Deserialize, Serialize};

use crate::search::result::ChunkResult;
use quarry_indexer::snapshot::DocumentRecord;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub enum Layer {
    /// The abstract.
    L0,
    /// The overview.
    L1,
    /// The chunks.
    #[default]
    L2,
}

impl Layer {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::L0 => "L0",
            Self::L1 => "L1",
            Self::L2 => "L2",
        }
    }

    /// Whether results are documents (at most one chunk each) rather than chunks.
    pub fn per_document(self) -> bool {
        self != Self::L2
    }

    /// The document's text of this layer (None for L2, and for a document without layers:
    /// written before them, or with `--summaries off`).
    pub fn text_of(self, document: &DocumentRecord) -> Option<&str> {
        let text = match self {
            Self::L0 => &document.layers.abstract_text,
            Self::L1 => &document.layers.overview,
            Self::L2 => return None,
        };
        (!text.is_empty()).then_some(text.as_str())
    }

    /// Puts `document`'s layer in place of the chunk's text (and `token_count` of it, by
    /// `count_tokens`); `metadata.layer` says which layer the content is: L2 where the
    /// document has none.
    pub fn apply(
        self,
        chunk: &mut ChunkResult,
        document: &DocumentRecord,
        count_tokens: impl Fn(&str) -> Option<usize>,
    ) {
        let Some(text) = self.text_of(document) else {
            chunk.metadata.insert("layer".into(), Self::L2.as_str().into());
            return;
        };
        let matched = std::mem::replace(&mut chunk.content, text.to_string());
        chunk.metadata.insert("matched_chunk".into(), matched.into());
        chunk.metadata.insert("layer".into(), self.as_str().into());
        if let Some(tokens) = count_tokens(text) {
            chunk.metadata.insert("token_count".into(), tokens.into());
        }
        chunk.structured_data = None;
        chunk.content_type = quarry_indexer::parse::ContentType::Text;
    }
}

impl std::str::FromStr for Layer {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "l0" | "abstract" => Ok(Self::L0),
            "l1" | "overview" => Ok(Self::L1),
            "l2" | "detail" | "" => Ok(Self::L2),
            _ => Err(format!("unknown layer `{s}` (L0 abstract, L1 overview, L2 chunks)")),
        }
    }
}

impl<'de> Deserialize<'de> for Layer {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_by_seed_003s_names_and_the_issues() {
        for (name, layer) in [
            ("L0", Layer::L0),
            ("l1", Layer::L1),
            ("overview", Layer::L1),
            ("l2", Layer::L2),
        ] {
            assert_eq!(name.parse::<Layer>(), Ok(layer));
        }
        let err = "l3".parse::<Layer>().unwrap_err();
        assert!(err.contains("unknown layer `l3`"), "{err}");
        let parsed: Layer = serde_json::from_str("\"L0\"").unwrap();
        assert_eq!(parsed, Layer::L0);
    }
}
