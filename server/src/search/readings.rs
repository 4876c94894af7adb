//! How a search reads its query for the vector lane: the query's embedding as typed and,
//! when typo tolerance corrected some of its words ([`crate::search::spelling`]), the
//! embedding of the query with them corrected. A row scores by the reading nearest it, its
//! cosine the best of the two: the vector lane's counterpart of the keyword lane, where a
//! corrected word's row scores by the best of the typed word and its correction. A typing
//! error the model reads in pieces (`hydorgen` as `hyd ##org ##en`) says little of what the
//! query means; the corrected reading says it, and the typed one still counts where the word
//! was right after all (a word of another language that no row holds). A search by example
//! has its example's vector as its one reading.

use std::collections::HashMap;

use crate::error::ServerError;
use crate::search::hit::{best_first, Hit};
use crate::search::placed::{locate, PlacedPart};
use crate::search::spelling::Corrected;

/// How a search reads its query: its words corrected, the vectors it ranks rows by, and the
/// text the corrected one embeds.
#[derive(Debug, Clone, Default)]
pub struct QueryReadings {
    /// The query's words no live row holds, each with its correction (looked up when the
    /// request asks for suggestions or tolerates typos).
    pub corrected: Vec<Corrected>,
    /// Whether the lanes read the corrected words as their corrections too (typo tolerance).
    pub typo_tolerant: bool,
    /// The query as typed first (or the example's vector); then, under typo tolerance, the
    /// query with its corrected words. Empty when the mode ranks by words alone.
    pub vectors: Vec<Vec<f32>>,
    /// The ranking text with its corrected words, when a reading embeds it.
    pub corrected_text: Option<String>,
}

impl QueryReadings {
    /// The query's `corrected` words, read as their corrections when `typo_tolerant`; no
    /// vector yet.
    pub fn new(corrected: Vec<Corrected>, typo_tolerant: bool) -> Self {
        Self {
            corrected,
            typo_tolerant,
            vectors: Vec::new(),
            corrected_text: None,
        }
    }

    /// The corrections the lanes read (none without typo tolerance).
    pub fn tolerated(&self) -> &[Corrected] {
        match self.typo_tolerant {
            true => &self.corrected,
            false => &[],
        }
    }

    /// The best inner product of `embedding` with a reading (None: no reading).
    pub fn best_cosine(&self, embedding: &[f32]) -> Option<f32> {
        self.vectors
            .iter()
            .map(|vector| vector.iter().zip(embedding).map(|(a, b)| a * b).sum::<f32>())
            .reduce(f32::max)
    }

    /// The best inner product of `row`'s stored vector with a reading (None: no reading, or
    /// the vector cannot be read).
    pub fn stored_best_cosine(&self, parts: &[PlacedPart<'_>], row: usize) -> Option<f32> {
        self.best_cosine(&stored_vector(parts, row)?)
    }

    /// The `k` rows nearest a reading, each scored by its best reading: the rows each
    /// reading's `search` returned, a row some reading did not return scored by its `stored`
    /// vector. One reading: its own search's rows and scores.
    pub fn nearest(
        &self,
        k: usize,
        search: impl Fn(&[f32]) -> Result<Vec<Hit>, ServerError>,
        stored: impl Fn(usize) -> Option<Vec<f32>>,
    ) -> Result<Vec<Hit>, ServerError> {
        let vectors = match self.vectors.as_slice() {
            [] => return Ok(Vec::new()),
            [one] => return search(one),
            several => several,
        };
        let mut found: Vec<HashMap<usize, f32>> = Vec::with_capacity(vectors.len());
        for vector in vectors {
            found.push(search(vector)?.iter().map(|h| (h.row, h.score)).collect());
        }
        let mut rows: Vec<usize> = found.iter().flat_map(|hits| hits.keys().copied()).collect();
        rows.sort_unstable();
        rows.dedup();
        let mut hits: Vec<Hit> = rows
            .into_iter()
            .filter_map(|row| {
                let complete = found.iter().all(|hits| hits.contains_key(&row));
                let best = match complete {
                    true => found.iter().map(|hits| hits[&row]).reduce(f32::max),
                    false => stored(row).and_then(|vector| self.best_cosine(&vector)),
                };
                // A row whose vector cannot be read keeps the best score a search gave it.
                let best = best.or_else(|| found.iter().filter_map(|hits| hits.get(&row).copied()).reduce(f32::max));
                best.map(|score| Hit::new(row, score))
            })
            .collect();
        best_first(&mut hits, k);
        Ok(hits)
    }
}

/// Row `row`'s stored vector, of the part holding it (None: it cannot be read).
pub fn stored_vector(parts: &[PlacedPart<'_>], row: usize) -> Option<Vec<f32>> {
    let (at, local) = locate(parts, row);
    at.part.searcher.snapshot().embedding(local).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn readings(vectors: Vec<Vec<f32>>) -> QueryReadings {
        let mut readings = QueryReadings::new(Vec::new(), true);
        readings.vectors = vectors;
        readings
    }

    /// Rows by reading: the first reading finds rows 0 and 1, the second rows 1 and 2.
    fn search(query: &[f32]) -> Result<Vec<Hit>, ServerError> {
        Ok(match query[0] > 0.5 {
            true => vec![Hit::new(0, 0.9), Hit::new(1, 0.5)],
            false => vec![Hit::new(1, 0.8), Hit::new(2, 0.7)],
        })
    }

    #[test]
    fn a_row_scores_by_its_best_reading() {
        let two = readings(vec![vec![1.0, 0.0], vec![0.0, 1.0]]);
        // Row 0 only the first reading found: its stored vector gives the second's cosine.
        let stored = |row: usize| match row {
            0 => Some(vec![0.9, 0.95]),
            2 => Some(vec![0.2, 0.7]),
            _ => None,
        };
        let hits = two.nearest(3, search, stored).unwrap();
        assert_eq!(hits, [Hit::new(0, 0.95), Hit::new(1, 0.8), Hit::new(2, 0.7)]);
        assert_eq!(two.nearest(1, search, stored).unwrap(), [Hit::new(0, 0.95)]);
        // A row whose vector cannot be read keeps the best score a search gave it.
        let hits = two.nearest(3, search, |_| None).unwrap();
        assert_eq!(hits, [Hit::new(0, 0.9), Hit::new(1, 0.8), Hit::new(2, 0.7)]);
        // One reading: its search's rows as they came.
        let one = readings(vec![vec![1.0, 0.0]]);
        assert_eq!(
            one.nearest(2, search, stored).unwrap(),
            [Hit::new(0, 0.9), Hit::new(1, 0.5)]
        );
        assert_eq!(two.best_cosine(&[0.3, 0.4]), Some(0.4));
        assert_eq!(readings(Vec::new()).best_cosine(&[0.3, 0.4]), None);
    }
}
