//! IR metrics as trec_eval computes them (the BEIR convention): nDCG@k with gain = the
//! relevance grade and a log2(rank + 1) discount, recall@k, MRR@k. A document counts as
//! relevant when its grade is > 0. A query whose judgements hold no relevant document
//! scores 0 on every metric (as in trec_eval); unjudged documents count as not relevant.

use std::collections::HashMap;

/// Judgements of one query: document id -> grade.
pub type Judgements = HashMap<String, i32>;

fn grade(judged: &Judgements, doc: &str) -> f64 {
    judged.get(doc).copied().unwrap_or(0).max(0) as f64
}

/// nDCG@k of a ranked list.
pub fn ndcg_at_k(ranked: &[&str], judged: &Judgements, k: usize) -> f64 {
    let dcg: f64 = ranked
        .iter()
        .take(k)
        .enumerate()
        .map(|(i, doc)| grade(judged, doc) / ((i + 2) as f64).log2())
        .sum();
    let mut ideal: Vec<f64> = judged.values().filter(|g| **g > 0).map(|g| *g as f64).collect();
    ideal.sort_by(|a, b| b.total_cmp(a));
    let idcg: f64 = ideal
        .iter()
        .take(k)
        .enumerate()
        .map(|(i, g)| g / ((i + 2) as f64).log2())
        .sum();
    if idcg == 0.0 {
        0.0
    } else {
        dcg / idcg
    }
}

/// Fraction of the relevant documents found in the top k.
pub fn recall_at_k(ranked: &[&str], judged: &Judgements, k: usize) -> f64 {
    let relevant = judged.values().filter(|g| **g > 0).count();
    if relevant == 0 {
        return 0.0;
    }
    let found = ranked.iter().take(k).filter(|doc| grade(judged, doc) > 0.0).count();
    found as f64 / relevant as f64
}

/// Reciprocal rank of the first relevant document within the top k.
pub fn mrr_at_k(ranked: &[&str], judged: &Judgements, k: usize) -> f64 {
    ranked
        .iter()
        .take(k)
        .position(|doc| grade(judged, doc) > 0.0)
        .map(|i| 1.0 / (i + 1) as f64)
        .unwrap_or(0.0)
}

/// Averages of every metric over a set of queries.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct Summary {
    pub queries: usize,
    pub ndcg_at_10: f64,
    pub recall_at_10: f64,
    pub recall_at_100: f64,
    pub mrr_at_10: f64,
}

/// Scores ranked lists (query id -> documents, best first) against qrels; queries without
/// judgements are left out, judged queries without a ranking score 0.
pub fn summarize(runs: &HashMap<String, Vec<String>>, qrels: &HashMap<String, Judgements>) -> Summary {
    let mut summary = Summary {
        queries: qrels.len(),
        ..Default::default()
    };
    if qrels.is_empty() {
        return summary;
    }
    for (query, judged) in qrels {
        let ranked: Vec<&str> = runs
            .get(query)
            .map(|r| r.iter().map(String::as_str).collect())
            .unwrap_or_default();
        summary.ndcg_at_10 += ndcg_at_k(&ranked, judged, 10);
        summary.recall_at_10 += recall_at_k(&ranked, judged, 10);
        summary.recall_at_100 += recall_at_k(&ranked, judged, 100);
        summary.mrr_at_10 += mrr_at_k(&ranked, judged, 10);
    }
    let n = qrels.len() as f64;
    summary.ndcg_at_10 /= n;
    summary.recall_at_10 /= n;
    summary.recall_at_100 /= n;
    summary.mrr_at_10 /= n;
    summary
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judged(pairs: &[(&str, i32)]) -> Judgements {
        pairs.iter().map(|(d, g)| (d.to_string(), *g)).collect()
    }

    #[test]
    fn ndcg_with_graded_judgements_by_hand() {
        // grades in ranked order: 3, 0, 2 ; ideal order 3, 2, 1.
        let j = judged(&[("a", 3), ("b", 0), ("c", 2), ("d", 1)]);
        let dcg = 3.0 / 2f64.log2() + 0.0 + 2.0 / 4f64.log2();
        let idcg = 3.0 / 2f64.log2() + 2.0 / 3f64.log2() + 1.0 / 4f64.log2();
        assert!((ndcg_at_k(&["a", "b", "c"], &j, 10) - dcg / idcg).abs() < 1e-12);
        // Cut at 1: only "a", ideal 3 -> 1.0.
        assert!((ndcg_at_k(&["a", "b", "c"], &j, 1) - 1.0).abs() < 1e-12);
        // Perfect ranking scores exactly 1.
        assert!((ndcg_at_k(&["a", "c", "d"], &j, 10) - 1.0).abs() < 1e-12);
        // Unjudged documents count as 0.
        assert!((ndcg_at_k(&["x", "a"], &judged(&[("a", 1)]), 10) - 1.0 / 3f64.log2()).abs() < 1e-12);
    }

    #[test]
    fn recall_and_mrr_by_hand() {
        let j = judged(&[("a", 1), ("b", 2), ("c", 0)]);
        assert_eq!(recall_at_k(&["c", "a", "x"], &j, 10), 0.5);
        assert_eq!(recall_at_k(&["c", "a", "b"], &j, 2), 0.5);
        assert_eq!(mrr_at_k(&["c", "x", "b"], &j, 10), 1.0 / 3.0);
        assert_eq!(mrr_at_k(&["c", "x", "b"], &j, 2), 0.0);
    }

    #[test]
    fn queries_without_relevant_documents_score_zero() {
        let only_zero = judged(&[("a", 0)]);
        assert_eq!(ndcg_at_k(&["a"], &only_zero, 10), 0.0);
        assert_eq!(recall_at_k(&["a"], &only_zero, 10), 0.0);
        assert_eq!(mrr_at_k(&["a"], &only_zero, 10), 0.0);
        let qrels: HashMap<String, Judgements> =
            [("q1".to_string(), judged(&[("a", 1)])), ("q2".to_string(), only_zero)].into();
        let runs: HashMap<String, Vec<String>> = [("q1".to_string(), vec!["a".to_string()])].into();
        let s = summarize(&runs, &qrels);
        assert_eq!(s.queries, 2);
        assert_eq!(s.ndcg_at_10, 0.5);
        assert_eq!(s.mrr_at_10, 0.5);
    }
}
