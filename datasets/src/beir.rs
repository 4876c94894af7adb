//! The BEIR layout: `corpus.jsonl` ({_id, title, text}), `queries.jsonl` ({_id, text}),
//! `qrels/<split>.tsv` (query-id, corpus-id, score; with or without a header line).

use std::collections::HashMap;
use std::path::Path;

use crate::DatasetError;

/// One corpus document.
#[derive(Debug, Clone, PartialEq)]
pub struct CorpusDoc {
    pub id: String,
    pub title: String,
    pub text: String,
}

/// One query.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    pub id: String,
    pub text: String,
}

/// Relevance grades: query id -> (document id -> grade).
pub type Qrels = HashMap<String, HashMap<String, i32>>;

/// A loaded BEIR dataset (one qrels split).
#[derive(Debug, Clone)]
pub struct BeirDataset {
    pub corpus: Vec<CorpusDoc>,
    pub queries: Vec<Query>,
    pub qrels: Qrels,
}

impl BeirDataset {
    /// Loads `corpus.jsonl`, `queries.jsonl` and `qrels/<split>.tsv` from `dir`.
    pub fn load(dir: &Path, split: &str) -> Result<Self, DatasetError> {
        Ok(Self {
            corpus: load_corpus(&dir.join("corpus.jsonl"))?,
            queries: load_queries(&dir.join("queries.jsonl"))?,
            qrels: load_qrels(&dir.join("qrels").join(format!("{split}.tsv")))?,
        })
    }

    /// The queries that have judgements, in file order (the ones a metric averages over).
    pub fn judged_queries(&self) -> Vec<&Query> {
        self.queries.iter().filter(|q| self.qrels.contains_key(&q.id)).collect()
    }
}

fn read(path: &Path) -> Result<String, DatasetError> {
    std::fs::read_to_string(path).map_err(|source| DatasetError::Io {
        path: path.display().to_string(),
        source,
    })
}

fn json_lines(path: &Path) -> Result<Vec<(usize, serde_json::Value)>, DatasetError> {
    let text = read(path)?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, line)| {
            serde_json::from_str(line)
                .map(|v| (i + 1, v))
                .map_err(|e| DatasetError::Line {
                    path: path.display().to_string(),
                    line: i + 1,
                    reason: format!("invalid JSON: {e}"),
                })
        })
        .collect()
}

fn id_of(value: &serde_json::Value, path: &Path, line: usize) -> Result<String, DatasetError> {
    match &value["_id"] {
        serde_json::Value::String(s) => Ok(s.clone()),
        serde_json::Value::Number(n) => Ok(n.to_string()),
        _ => Err(DatasetError::Line {
            path: path.display().to_string(),
            line,
            reason: "missing `_id`".into(),
        }),
    }
}

fn string_field(value: &serde_json::Value, name: &str) -> String {
    value[name].as_str().unwrap_or("").to_string()
}

pub fn load_corpus(path: &Path) -> Result<Vec<CorpusDoc>, DatasetError> {
    json_lines(path)?
        .into_iter()
        .map(|(line, v)| {
            Ok(CorpusDoc {
                id: id_of(&v, path, line)?,
                title: string_field(&v, "title"),
                text: string_field(&v, "text"),
            })
        })
        .collect()
}

pub fn load_queries(path: &Path) -> Result<Vec<Query>, DatasetError> {
    json_lines(path)?
        .into_iter()
        .map(|(line, v)| {
            Ok(Query {
                id: id_of(&v, path, line)?,
                text: string_field(&v, "text"),
            })
        })
        .collect()
}

/// Reads a qrels TSV; a first line whose score column is not a number is a header.
pub fn load_qrels(path: &Path) -> Result<Qrels, DatasetError> {
    let text = read(path)?;
    let mut qrels: Qrels = HashMap::new();
    for (index, line) in text.lines().enumerate() {
        let fields: Vec<&str> = line.split('\t').map(str::trim).collect();
        if line.trim().is_empty() {
            continue;
        }
        let bad = |reason: &str| DatasetError::Line {
            path: path.display().to_string(),
            line: index + 1,
            reason: reason.into(),
        };
        // Accept both (query, doc, score) and TREC's (query, 0, doc, score).
        let (query, doc, score) = match fields.as_slice() {
            [q, d, s] => (*q, *d, *s),
            [q, _, d, s] => (*q, *d, *s),
            _ => return Err(bad("expected query-id, corpus-id and score separated by tabs")),
        };
        let Ok(score) = score.parse::<i32>() else {
            if index == 0 {
                continue; // header
            }
            return Err(bad(&format!("score `{score}` is not an integer")));
        };
        qrels
            .entry(query.to_string())
            .or_default()
            .insert(doc.to_string(), score);
    }
    Ok(qrels)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_with_and_without_header() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("qrels")).unwrap();
        std::fs::write(
            dir.path().join("corpus.jsonl"),
            "{\"_id\": \"d1\", \"title\": \"T\", \"text\": \"x\"}\n{\"_id\": 2, \"text\": \"y\"}\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("queries.jsonl"),
            "{\"_id\": \"q1\", \"text\": \"what\"}\n{\"_id\": \"q2\", \"text\": \"unjudged\"}\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("qrels/test.tsv"),
            "query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\t2\t0\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("qrels/dev.tsv"), "q1\td1\t1\n").unwrap();
        let data = BeirDataset::load(dir.path(), "test").unwrap();
        assert_eq!(
            data.corpus[1],
            CorpusDoc {
                id: "2".into(),
                title: String::new(),
                text: "y".into()
            }
        );
        assert_eq!(data.qrels["q1"]["d1"], 2);
        assert_eq!(data.qrels["q1"]["2"], 0);
        assert_eq!(data.judged_queries().len(), 1);
        assert_eq!(load_qrels(&dir.path().join("qrels/dev.tsv")).unwrap()["q1"]["d1"], 1);
    }

    #[test]
    fn errors_name_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("q.tsv");
        std::fs::write(&path, "q1\td1\t1\nq2\td2\tmaybe\n").unwrap();
        let err = load_qrels(&path).unwrap_err().to_string();
        assert!(err.ends_with("q.tsv, line 2: score `maybe` is not an integer"), "{err}");
        std::fs::write(&path, "{\"_id\": \"a\"}\n{oops\n").unwrap();
        let err = load_corpus(&path).unwrap_err().to_string();
        assert!(err.contains("line 2: invalid JSON"), "{err}");
    }
}
