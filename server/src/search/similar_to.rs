//! A search by example (`similar_to`, "more like this"): the vector lane ranks by the stored
//! embedding of a chunk, or of a document (the normalized mean of its live chunks'), in place
//! of a query's, so finding what resembles a result needs no text and no call to the model.
//! The example's document is left out of the results (a chunk's neighbours overlap it and
//! would come first) unless `include_source` asks for it. A query beside the example still
//! counts: its phrases and excluded words hold, and its words rank the keyword lane of
//! `hybrid` and `auto`.

use serde::{Deserialize, Serialize};

use crate::error::ServerError;
use crate::search::filter::Filters;
use crate::search::loaded::LoadedSnapshot;
use crate::search::placed::SearchPart;

/// The longest chunk or document id an example may name.
pub const MAX_EXAMPLE_ID_CHARS: usize = 1024;

/// What a search by example ranks by: one chunk or one document, by id.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SimilarTo {
    /// A result's `chunk_id`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chunk_id: Option<String>,
    /// A result's `metadata.doc_id`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub document_id: Option<String>,
    /// Whether the example's own document may be among the results.
    pub include_source: bool,
}

/// The example found: the vector the vector lane ranks by, and the document it is from.
#[derive(Debug, Clone, PartialEq)]
pub struct Example {
    pub vector: Vec<f32>,
    pub doc_id: String,
}

impl SimilarTo {
    /// Refuses an example that names neither a chunk nor a document, or both.
    pub fn validate(&self) -> Result<(), ServerError> {
        let bad = |m: String| Err(ServerError::InvalidRequest(m));
        let id =
            match (&self.chunk_id, &self.document_id) {
                (Some(_), Some(_)) => return bad("similar_to names a chunk_id or a document_id, not both".into()),
                (Some(id), None) => id,
                (None, Some(id)) => id,
                (None, None) => return bad(
                    "similar_to needs a chunk_id (a result's chunk_id) or a document_id (a result's metadata.doc_id)"
                        .into(),
                ),
            };
        if id.trim().is_empty() {
            return bad("similar_to's id must not be empty".into());
        }
        let chars = id.chars().count();
        if chars > MAX_EXAMPLE_ID_CHARS {
            return bad(format!(
                "similar_to's id is {chars} characters long; at most {MAX_EXAMPLE_ID_CHARS}"
            ));
        }
        Ok(())
    }

    /// The example in the first of `parts` that holds it live; an id no part holds is
    /// [`ServerError::UnknownExample`].
    pub fn example(&self, parts: &[SearchPart<'_>]) -> Result<Example, ServerError> {
        for part in parts {
            if let Some(example) = self.example_in(part.searcher.snapshot())? {
                return Ok(example);
            }
        }
        Err(self.not_found())
    }

    /// The error of an example that no collection searched serves.
    pub fn not_found(&self) -> ServerError {
        ServerError::UnknownExample(match (&self.chunk_id, &self.document_id) {
            (Some(id), _) => format!("no chunk `{id}` is served in the collections searched"),
            (None, id) => format!(
                "no document `{}` is served in the collections searched",
                id.as_deref().unwrap_or_default()
            ),
        })
    }

    fn example_in(&self, snapshot: &LoadedSnapshot) -> Result<Option<Example>, ServerError> {
        if let Some(chunk_id) = &self.chunk_id {
            // A chunk's id is its document's id, a dash and its place in the document.
            let Some((doc_id, _)) = chunk_id.rsplit_once('-') else {
                return Ok(None);
            };
            let row = snapshot
                .live_rows_of(doc_id)
                .into_iter()
                .find(|&row| snapshot.chunk(row).chunk_id == *chunk_id);
            return match row {
                Some(row) => Ok(Some(Example {
                    vector: snapshot.embedding(row)?,
                    doc_id: doc_id.to_string(),
                })),
                None => Ok(None),
            };
        }
        let doc_id = self.document_id.as_deref().unwrap_or_default();
        let rows = snapshot.live_rows_of(doc_id);
        if rows.is_empty() {
            return Ok(None);
        }
        let mut mean = vec![0f32; snapshot.dim()];
        for row in rows {
            for (sum, value) in mean.iter_mut().zip(snapshot.embedding(row)?) {
                *sum += value;
            }
        }
        normalize(&mut mean);
        Ok(Some(Example {
            vector: mean,
            doc_id: doc_id.to_string(),
        }))
    }

    /// `filters` with the example's document left out, unless `include_source`.
    pub fn filters_for(&self, filters: &Filters, example: &Example) -> Option<Filters> {
        (!self.include_source).then(|| filters.leaving_out_document(&example.doc_id))
    }
}

/// Scales `vector` to length 1 (a zero vector stays as it is).
fn normalize(vector: &mut [f32]) {
    let norm = vector.iter().map(|v| v * v).sum::<f32>().sqrt();
    if norm > 0.0 {
        vector.iter_mut().for_each(|v| *v /= norm);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn by_chunk(id: &str) -> SimilarTo {
        SimilarTo {
            chunk_id: Some(id.into()),
            ..Default::default()
        }
    }

    #[test]
    fn an_example_names_one_chunk_or_one_document() {
        assert!(by_chunk("d1-0").validate().is_ok());
        let document = SimilarTo {
            document_id: Some("d1".into()),
            ..Default::default()
        };
        assert!(document.validate().is_ok());
        let refused = |example: SimilarTo, says: &str| {
            let error = example.validate().unwrap_err().to_string();
            assert!(error.contains(says), "{error}");
        };
        refused(SimilarTo::default(), "needs a chunk_id");
        refused(
            SimilarTo {
                chunk_id: Some("d1-0".into()),
                document_id: Some("d1".into()),
                include_source: false,
            },
            "not both",
        );
        refused(by_chunk(" "), "must not be empty");
        refused(by_chunk(&"x".repeat(MAX_EXAMPLE_ID_CHARS + 1)), "at most 1024");
        let read: SimilarTo = serde_json::from_str(r#"{"document_id": "d1", "include_source": true}"#).unwrap();
        assert!(read.include_source && read.document_id.as_deref() == Some("d1"));
        assert!(serde_json::from_str::<SimilarTo>(r#"{"chunk": "d1-0"}"#).is_err());
    }

    #[test]
    fn the_source_document_is_left_out_unless_asked_for() {
        let example = Example {
            vector: vec![1.0],
            doc_id: "d1".into(),
        };
        let filters = Filters {
            tags: vec!["finance".into()],
            ..Default::default()
        };
        let left_out = by_chunk("d1-0").filters_for(&filters, &example).unwrap();
        assert_eq!(left_out.tags, ["finance"]);
        assert_eq!(left_out.exclude.unwrap().doc_id, ["d1"]);
        let kept = SimilarTo {
            include_source: true,
            ..by_chunk("d1-0")
        };
        assert_eq!(kept.filters_for(&filters, &example), None);
    }

    #[test]
    fn a_documents_vector_is_scaled_to_length_one() {
        let mut mean = vec![3.0, 4.0];
        normalize(&mut mean);
        assert_eq!(mean, [0.6, 0.8]);
        let mut zero = vec![0.0, 0.0];
        normalize(&mut zero);
        assert_eq!(zero, [0.0, 0.0]);
    }
}
