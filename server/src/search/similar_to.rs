//! A search by example (`similar_to`, "more like this"): the vector lane ranks by the stored
//! embedding of a chunk, or of a document (the normalized mean of its live chunks'), in place
//! of a query's, so finding what resembles a result needs no text and no call to the model.
//! Several examples rank by their mean (`like`), and examples to steer away from (`unlike`)
//! by `2 × mean(like) - mean(unlike)`, normalized (Qdrant's "average vector" recommendation:
//! the mean of the likes moved as far again away from the unlikes). The examples' documents
//! are left out of the results (a chunk's neighbours overlap it and would come first) unless
//! `include_source` asks for them. A query beside the examples still counts: its phrases and
//! excluded words hold, and its words rank the keyword lane of `hybrid` and `auto`.

use serde::{Deserialize, Serialize};

use crate::error::ServerError;
use crate::search::filter::Filters;
use crate::search::loaded::LoadedSnapshot;
use crate::search::placed::SearchPart;

/// The longest chunk or document id an example may name.
pub const MAX_EXAMPLE_ID_CHARS: usize = 1024;
/// The most examples one search may name, `like` and `unlike` together (each is looked up
/// in every collection searched; a document's by all of its chunks).
pub const MAX_EXAMPLES: usize = 32;

/// What a search by example ranks by: a chunk or a document by id, more of them in `like`,
/// and those to steer away from in `unlike`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SimilarTo {
    /// A result's `chunk_id`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chunk_id: Option<String>,
    /// A result's `metadata.doc_id`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub document_id: Option<String>,
    /// More examples the results resemble, each a chunk or a document.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub like: Vec<ExampleId>,
    /// Examples the results resemble less.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unlike: Vec<ExampleId>,
    /// Whether the examples' own documents may be among the results.
    pub include_source: bool,
}

/// One example: a chunk or a document, by id.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ExampleId {
    /// A result's `chunk_id`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chunk_id: Option<String>,
    /// A result's `metadata.doc_id`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub document_id: Option<String>,
}

/// The examples found: the vector the vector lane ranks by, and the documents they are from.
#[derive(Debug, Clone, PartialEq)]
pub struct Example {
    pub vector: Vec<f32>,
    pub doc_ids: Vec<String>,
}

impl SimilarTo {
    /// The examples the results resemble: the one named at the top, then `like`'s.
    pub fn likes(&self) -> Vec<ExampleId> {
        self.named().into_iter().chain(self.like.iter().cloned()).collect()
    }

    /// The example named at the top (`chunk_id` or `document_id`), if any.
    fn named(&self) -> Option<ExampleId> {
        let named = ExampleId {
            chunk_id: self.chunk_id.clone(),
            document_id: self.document_id.clone(),
        };
        (named.chunk_id.is_some() || named.document_id.is_some()).then_some(named)
    }

    /// Refuses examples that name neither a chunk nor a document, or both; no example to
    /// resemble (only `unlike`s); an empty or overlong id; more than [`MAX_EXAMPLES`].
    pub fn validate(&self) -> Result<(), ServerError> {
        // No example at the top is only right beside a `like` list (refused as naming none).
        if let Some(named) = self.named().or_else(|| self.like.is_empty().then(ExampleId::default)) {
            named.validate("similar_to")?;
        }
        for (list, examples) in [("like", &self.like), ("unlike", &self.unlike)] {
            for (i, example) in examples.iter().enumerate() {
                example.validate(&format!("similar_to.{list}[{i}]"))?;
            }
        }
        let count = self.likes().len() + self.unlike.len();
        if count > MAX_EXAMPLES {
            return Err(ServerError::InvalidRequest(format!(
                "similar_to names {count} examples; at most {MAX_EXAMPLES}"
            )));
        }
        Ok(())
    }

    /// The examples found in `parts` (each in the first part that holds it live) as one
    /// vector; an id no part holds is [`ServerError::UnknownExample`].
    pub fn example(&self, parts: &[SearchPart<'_>]) -> Result<Example, ServerError> {
        let mut doc_ids: Vec<String> = Vec::new();
        let mut found = |examples: &[ExampleId]| -> Result<Vec<Vec<f32>>, ServerError> {
            let mut vectors = Vec::with_capacity(examples.len());
            for example in examples {
                let (vector, doc_id) = example.found_in(parts)?;
                if !doc_ids.contains(&doc_id) {
                    doc_ids.push(doc_id);
                }
                vectors.push(vector);
            }
            Ok(vectors)
        };
        let likes = found(&self.likes())?;
        let unlikes = found(&self.unlike)?;
        Ok(Example {
            vector: steered(&likes, &unlikes),
            doc_ids,
        })
    }

    /// The error of examples that no collection searched serves (for a scope with no
    /// version served: the first example).
    pub fn not_found(&self) -> ServerError {
        self.likes().first().cloned().unwrap_or_default().not_found()
    }

    /// `filters` with the examples' documents left out, unless `include_source`.
    pub fn filters_for(&self, filters: &Filters, example: &Example) -> Option<Filters> {
        (!self.include_source).then(|| filters.leaving_out_documents(&example.doc_ids))
    }
}

impl ExampleId {
    /// Refuses an example (at `place` in the request) that names neither a chunk nor a
    /// document, or both, or whose id is empty or overlong.
    fn validate(&self, place: &str) -> Result<(), ServerError> {
        let bad = |m: String| Err(ServerError::InvalidRequest(m));
        let id = match (&self.chunk_id, &self.document_id) {
            (Some(_), Some(_)) => return bad(format!("{place} names a chunk_id or a document_id, not both")),
            (Some(id), None) => id,
            (None, Some(id)) => id,
            (None, None) => {
                return bad(format!(
                    "{place} needs a chunk_id (a result's chunk_id) or a document_id (a result's metadata.doc_id)"
                ))
            }
        };
        if id.trim().is_empty() {
            return bad(format!("{place}'s id must not be empty"));
        }
        let chars = id.chars().count();
        if chars > MAX_EXAMPLE_ID_CHARS {
            return bad(format!(
                "{place}'s id is {chars} characters long; at most {MAX_EXAMPLE_ID_CHARS}"
            ));
        }
        Ok(())
    }

    /// The example's vector and document in the first of `parts` that holds it live.
    fn found_in(&self, parts: &[SearchPart<'_>]) -> Result<(Vec<f32>, String), ServerError> {
        for part in parts {
            if let Some(found) = self.found_in_snapshot(part.searcher.snapshot())? {
                return Ok(found);
            }
        }
        Err(self.not_found())
    }

    fn not_found(&self) -> ServerError {
        ServerError::UnknownExample(match (&self.chunk_id, &self.document_id) {
            (Some(id), _) => format!("no chunk `{id}` is served in the collections searched"),
            (None, id) => format!(
                "no document `{}` is served in the collections searched",
                id.as_deref().unwrap_or_default()
            ),
        })
    }

    fn found_in_snapshot(&self, snapshot: &LoadedSnapshot) -> Result<Option<(Vec<f32>, String)>, ServerError> {
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
                Some(row) => Ok(Some((snapshot.embedding(row)?, doc_id.to_string()))),
                None => Ok(None),
            };
        }
        let doc_id = self.document_id.as_deref().unwrap_or_default();
        let rows = snapshot.live_rows_of(doc_id);
        if rows.is_empty() {
            return Ok(None);
        }
        // The sum, scaled to length 1, is the mean's direction: no chunk's vector is kept.
        let mut mean = vec![0f32; snapshot.dim()];
        for row in rows {
            for (sum, value) in mean.iter_mut().zip(snapshot.embedding(row)?) {
                *sum += value;
            }
        }
        normalize(&mut mean);
        Ok(Some((mean, doc_id.to_string())))
    }
}

/// The vector examples rank by: one example's own; the normalized mean of several; with
/// examples to steer away from, `2 × mean(likes) - mean(unlikes)`, normalized.
fn steered(likes: &[Vec<f32>], unlikes: &[Vec<f32>]) -> Vec<f32> {
    if let ([one], []) = (likes, unlikes) {
        return one.clone();
    }
    let mut vector = mean_of(likes);
    if !unlikes.is_empty() {
        for (value, away) in vector.iter_mut().zip(mean_of(unlikes)) {
            *value = 2.0 * *value - away;
        }
    }
    normalize(&mut vector);
    vector
}

/// The element-wise mean of `vectors` (all of one length; none: an empty vector).
fn mean_of(vectors: &[Vec<f32>]) -> Vec<f32> {
    let mut mean = vec![0f32; vectors.first().map_or(0, Vec::len)];
    for vector in vectors {
        for (sum, value) in mean.iter_mut().zip(vector) {
            *sum += value;
        }
    }
    let count = vectors.len().max(1) as f32;
    mean.iter_mut().for_each(|v| *v /= count);
    mean
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
                ..Default::default()
            },
            "not both",
        );
        // More examples in `like`, and examples to steer away from in `unlike`; never unlikes alone.
        let listed: SimilarTo = serde_json::from_str(
            r#"{"like": [{"chunk_id": "d1-0"}, {"document_id": "d2"}], "unlike": [{"document_id": "d3"}]}"#,
        )
        .unwrap();
        assert!(listed.validate().is_ok());
        assert_eq!(listed.likes().len(), 2);
        let with_named = SimilarTo {
            document_id: Some("d0".into()),
            ..listed.clone()
        };
        assert_eq!(with_named.likes()[0].document_id.as_deref(), Some("d0"));
        refused(
            SimilarTo {
                like: Vec::new(),
                ..listed.clone()
            },
            "similar_to needs a chunk_id",
        );
        refused(
            SimilarTo {
                unlike: vec![ExampleId::default()],
                ..listed.clone()
            },
            "similar_to.unlike[0] needs a chunk_id",
        );
        refused(
            SimilarTo {
                like: vec![by_chunk("d1-0").likes()[0].clone(), by_chunk(" ").likes()[0].clone()],
                ..Default::default()
            },
            "similar_to.like[1]'s id must not be empty",
        );
        let many = SimilarTo {
            like: (0..MAX_EXAMPLES)
                .map(|i| by_chunk(&format!("d{i}-0")).likes()[0].clone())
                .collect(),
            unlike: vec![by_chunk("x-0").likes()[0].clone()],
            ..Default::default()
        };
        refused(many, "similar_to names 33 examples; at most 32");
        assert!(serde_json::from_str::<SimilarTo>(r#"{"like": [{"chunk": "d1-0"}]}"#).is_err());
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
            doc_ids: vec!["d1".into(), "d2".into()],
        };
        let filters = Filters {
            tags: vec!["finance".into()],
            ..Default::default()
        };
        let left_out = by_chunk("d1-0").filters_for(&filters, &example).unwrap();
        assert_eq!(left_out.tags, ["finance"]);
        assert_eq!(left_out.exclude.unwrap().doc_id, ["d1", "d2"]);
        let kept = SimilarTo {
            include_source: true,
            ..by_chunk("d1-0")
        };
        assert_eq!(kept.filters_for(&filters, &example), None);
    }

    #[test]
    fn examples_rank_by_their_mean_moved_away_from_the_unlikes() {
        let (x, y, z) = (vec![1.0, 0.0, 0.0], vec![0.0, 1.0, 0.0], vec![0.0, 0.0, 1.0]);
        // One example as it is; two by their mean, at length one.
        assert_eq!(steered(&[vec![0.6, 0.0, 0.0]], &[]), [0.6, 0.0, 0.0]);
        let half = std::f32::consts::FRAC_1_SQRT_2;
        assert_eq!(steered(&[x.clone(), y.clone()], &[]), [half, half, 0.0]);
        // 2 × mean(likes) - mean(unlikes): (1, 1, 0) - (0, 0, 1), at length one.
        let third = 1.0 / 3f32.sqrt();
        let away = steered(&[x.clone(), y.clone()], &[z]);
        assert!(
            away.iter()
                .zip([third, third, -third])
                .all(|(a, b)| (a - b).abs() < 1e-6),
            "{away:?}"
        );
        // An unlike that is one of the likes pulls toward the other like.
        let toward = steered(&[x.clone(), y.clone()], &[y]);
        assert!(toward[0] > 0.99 && toward[1].abs() < 1e-6, "{toward:?}");
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
