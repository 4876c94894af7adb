//! A segment's rows that tombstones hide, with what those rows add to the segment's keyword
//! index statistics (they stay in the index until compaction; the keyword lane takes them
//! away). Kept with the loaded segment, so a reload analyzes only the rows whose state
//! changed since the previous version, not every hidden row again.

use std::sync::Arc;

use quarry_indexer::chunk::Chunk;
use quarry_indexer::index::analysis::KeywordAnalyzer;
use quarry_indexer::index::KeywordStats;
use quarry_indexer::snapshot::Tombstones;
use rayon::prelude::*;

#[derive(Debug, Default, PartialEq)]
pub struct HiddenRows {
    /// Segment-local row numbers, ascending.
    pub rows: Vec<u32>,
    pub keyword_stats: KeywordStats,
}

impl HiddenRows {
    /// The rows of the segment `segment_id` (its `chunks`) that `tombstones` hide. `before`
    /// is the same segment's in the previous loaded version (`analyzer`: its keyword index's): kept as it is when the same rows
    /// are hidden, else its statistics are updated with the rows newly hidden and the rows
    /// no longer hidden, when those are fewer than the rows hidden now.
    pub fn of_segment(
        segment_id: &str,
        chunks: &[Chunk],
        analyzer: &KeywordAnalyzer,
        tombstones: &Tombstones,
        before: Option<&Arc<HiddenRows>>,
    ) -> Arc<HiddenRows> {
        let rows: Vec<u32> = if tombstones.is_empty() {
            Vec::new()
        } else {
            chunks
                .par_iter()
                .enumerate()
                .filter(|(_, chunk)| tombstones.hides(segment_id, &chunk.doc_id, &chunk.chunk_id))
                .map(|(row, _)| row as u32)
                .collect()
        };
        let stats_of = |rows: &[u32]| {
            KeywordStats::of_texts(analyzer, rows.par_iter().map(|&row| chunks[row as usize].text.as_str()))
        };
        match before {
            Some(before) if before.rows == rows => before.clone(),
            Some(before) => {
                let (newly_hidden, shown_again) = differences(&rows, &before.rows);
                let keyword_stats = if newly_hidden.len() + shown_again.len() < rows.len() {
                    let mut stats = before.keyword_stats.clone();
                    stats.add(&stats_of(&newly_hidden));
                    stats.remove(&stats_of(&shown_again));
                    // A term no hidden row holds any more is not listed, as in a fresh count.
                    stats.doc_freq.retain(|_, count| *count > 0);
                    stats
                } else {
                    stats_of(&rows)
                };
                Arc::new(HiddenRows { rows, keyword_stats })
            }
            None => {
                let keyword_stats = stats_of(&rows);
                Arc::new(HiddenRows { rows, keyword_stats })
            }
        }
    }
}

/// The values of ascending `now` missing from ascending `before`, and those of `before`
/// missing from `now`.
fn differences(now: &[u32], before: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let (mut added, mut removed) = (Vec::new(), Vec::new());
    let (mut i, mut j) = (0, 0);
    while i < now.len() || j < before.len() {
        match (now.get(i), before.get(j)) {
            (Some(a), Some(b)) if a == b => (i, j) = (i + 1, j + 1),
            (Some(a), Some(b)) if a < b => {
                added.push(*a);
                i += 1;
            }
            (Some(a), None) => {
                added.push(*a);
                i += 1;
            }
            (_, Some(b)) => {
                removed.push(*b);
                j += 1;
            }
            (None, None) => unreachable!("the loop stops when both are exhausted"),
        }
    }
    (added, removed)
}

#[cfg(test)]
mod tests {
    use super::differences;

    #[test]
    fn differences_of_ascending_rows() {
        assert_eq!(
            differences(&[1, 3, 4, 9], &[0, 3, 5, 9, 12]),
            (vec![1, 4], vec![0, 5, 12])
        );
        assert_eq!(differences(&[], &[2, 7]), (vec![], vec![2, 7]));
        assert_eq!(differences(&[2, 7], &[]), (vec![2, 7], vec![]));
        assert_eq!(differences(&[5], &[5]), (vec![], vec![]));
    }
}
