//! A run writes a segment's row files while it embeds: the rows of documents whose place is
//! settled (nothing sorting before them still to come) go to chunks.parquet and
//! documents.parquet as they come, and what is left once the segment is cut after them.
//! chunks.parquet must be the one written at the cut (`--row-files-at-cut`), byte for byte,
//! and documents.parquet hold the same documents, with a file that partly fails among the
//! rest, and the keyword index (a part of it may be built while the run embeds) be the
//! same index; cut into several segments, each segment's rows must follow its documents' URI order.
//! The runs are `quarry bench-pipeline` (seeded vectors in place of the model): 20,000
//! documents and about 72,000 chunks, enough for row groups of 16,384 rows to be written
//! before the cut although a document settles only some 10,000 to 20,000 rows after it
//! arrives (the files in flight).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use quarry_indexer::snapshot::{chunks_from_parquet_without_embeddings, documents_from_parquet, DocumentRecord};

fn quarry(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_quarry")).args(args).output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A seeded corpus of 20,000 documents in 250 JSONL files, one of them with a broken line.
fn corpus(dir: &Path) -> PathBuf {
    let corpus = dir.join("corpus");
    let output = quarry(&[
        "gen-corpus",
        "--documents",
        "20000",
        "--per-file",
        "80",
        "--out",
        corpus.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let broken = corpus.join("corpus-00003.jsonl");
    let mut lines = std::fs::read_to_string(&broken).unwrap();
    lines.push_str("{\"_id\": \"broken\", \"text\": \n");
    std::fs::write(&broken, lines).unwrap();
    corpus
}

/// `quarry bench-pipeline corpus --out out` in 48-token windows with `extra` flags: its
/// report and its log.
fn run(corpus: &Path, out: &Path, extra: &[&str]) -> (serde_json::Value, String) {
    let mut args = vec![
        "bench-pipeline",
        corpus.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--json",
        "--progress",
        "quiet",
        "--index",
        "flat",
        "--chunk-tokens",
        "48",
        "--chunk-overlap",
        "0",
    ];
    args.extend_from_slice(extra);
    let output = quarry(&args);
    assert!(output.status.success(), "{}", text(&output.stderr));
    (serde_json::from_slice(&output.stdout).unwrap(), text(&output.stderr))
}

/// What each segment's log line says was done while the run embedded, in the order cut.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Early {
    rows_written: usize,
    rows: usize,
    documents_written: usize,
    rows_keyword_indexed: usize,
}

fn done_early(log: &str) -> Vec<Early> {
    log.lines()
        .filter_map(|line| {
            let (_, tail) = line.split_once("; ")?;
            let (early, rest) = tail.split_once(" of its ")?;
            let (rows, rest) = rest.split_once(" rows and ")?;
            let (documents, rest) = rest.split_once(" of its documents written and ")?;
            let (keyword, _) = rest.split_once(" rows taken into keyword parts while the run embedded")?;
            Some(Early {
                rows_written: early.parse().ok()?,
                rows: rows.parse().ok()?,
                documents_written: documents.parse().ok()?,
                rows_keyword_indexed: keyword.parse().ok()?,
            })
        })
        .collect()
}

/// The keyword index's files in `segment` that two builds of the same rows write alike, by
/// extension: its segment's files (not the document store, which holds no field, in blocks
/// that follow the parts the index was built in) and its language profile.
fn keyword_files(segment: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(segment.join("keyword"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            path.file_name().unwrap().to_string_lossy().len() > 32 || path.ends_with("quarry-languages.json")
        })
        .filter(|path| path.extension().is_some_and(|e| e != "store"))
        .map(|path| {
            let extension = path.extension().unwrap().to_string_lossy().into_owned();
            (extension, std::fs::read(&path).unwrap())
        })
        .collect()
}

/// Each segment's folder under the snapshot at `out`, by name.
fn segments(out: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(out.join("segments"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    found.sort();
    found
}

#[test]
fn rows_written_while_embedding_make_the_file_written_at_the_cut() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = corpus(dir.path());
    let (early, early_log) = run(&corpus, &dir.path().join("early"), &[]);
    let (at_cut, at_cut_log) = run(&corpus, &dir.path().join("at-cut"), &["--row-files-at-cut"]);
    for field in ["documents_indexed", "chunks", "documents_failed"] {
        assert_eq!(early[field], at_cut[field], "{field}: {early}");
    }
    assert_eq!(early["documents_failed"], 1, "the broken line fails alone: {early}");
    let chunks = early["chunks"].as_u64().unwrap() as usize;
    assert!(chunks > 2 * 16_384, "{chunks} chunks: too few for two row groups");

    // Whole row groups went to the file before the cut (how many depends on how far the
    // files were done as the documents came: at least the first), and whole keyword parts
    // of 65,536 rows to the keyword index (none, or one); nothing with the flag.
    let early_done = done_early(&early_log);
    assert!(
        matches!(early_done[..], [Early { rows_written, rows, rows_keyword_indexed, .. }]
            if rows_written >= 16_384 && rows_written % 16_384 == 0 && rows_written <= rows && rows == chunks
                && rows_keyword_indexed % 65_536 == 0 && rows_keyword_indexed <= rows),
        "{early_log}"
    );
    let nothing_early = Early {
        rows_written: 0,
        rows: chunks,
        documents_written: 0,
        rows_keyword_indexed: 0,
    };
    assert_eq!(done_early(&at_cut_log), [nothing_early], "{at_cut_log}");

    let segment = |out: &str| {
        let found = segments(&dir.path().join(out));
        assert_eq!(found.len(), 1, "{found:?}");
        found[0].clone()
    };
    let read = |out: &str, file: &str| std::fs::read(segment(out).join(file)).unwrap();
    let (early_file, at_cut_file) = (read("early", "chunks.parquet"), read("at-cut", "chunks.parquet"));
    assert!(
        early_file == at_cut_file,
        "chunks.parquet: {} bytes written while embedding, {} at the cut",
        early_file.len(),
        at_cut_file.len()
    );
    // The flat index holds every vector in row order: those laid out while the run embedded,
    // then the rest's, make the file of one layout at the cut.
    assert!(
        read("early", "vectors.faiss") == read("at-cut", "vectors.faiss"),
        "vectors.faiss differs"
    );
    // documents.parquet: the same rows but for when each run took its documents in.
    let documents = |out: &str| -> Vec<DocumentRecord> {
        let mut records = documents_from_parquet(read(out, "documents.parquet").into()).unwrap();
        records
            .iter_mut()
            .for_each(|r| r.ingested_at = chrono::DateTime::UNIX_EPOCH);
        records
    };
    let early_documents = documents("early");
    assert_eq!(early_documents.len(), 20_000, "the broken line is no document");
    assert!(
        early_documents == documents("at-cut"),
        "documents.parquet's rows differ"
    );
    // The keyword index: the same index, whether a part of it was built while the run embedded or not.
    let (early_keyword, at_cut_keyword) = (keyword_files(&segment("early")), keyword_files(&segment("at-cut")));
    assert_eq!(
        early_keyword.keys().collect::<Vec<_>>(),
        ["fast", "fieldnorm", "idx", "json", "pos", "term"]
    );
    for (extension, bytes) in &early_keyword {
        assert!(
            bytes == &at_cut_keyword[extension],
            "the keyword index's .{extension} files differ"
        );
    }
}

#[test]
fn each_segment_cut_while_rows_were_written_keeps_its_rows_in_uri_order() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = corpus(dir.path());
    let out = dir.path().join("snap");
    let (report, log) = run(&corpus, &out, &["--segment-chunks", "50000"]);
    let chunks = report["chunks"].as_u64().unwrap() as usize;
    let cut = done_early(&log);
    assert!(cut.len() >= 2, "{log}");
    assert_eq!(cut.iter().map(|early| early.rows).sum::<usize>(), chunks, "{log}");
    assert!(
        cut.iter().any(|early| early.rows_written > 0),
        "no rows written before a cut: {log}"
    );

    let found = segments(&out);
    assert_eq!(found.len(), cut.len(), "{found:?}");
    let mut rows = 0;
    for segment in &found {
        let bytes = |name: &str| std::fs::read(segment.join(name)).unwrap().into();
        let documents = documents_from_parquet(bytes("documents.parquet")).unwrap();
        let segment_chunks = chunks_from_parquet_without_embeddings(bytes("chunks.parquet")).unwrap();
        assert!(
            documents.windows(2).all(|pair| pair[0].uri < pair[1].uri),
            "{}: documents out of URI order",
            segment.display()
        );
        // Row by row, each document's chunks in order, in its documents' order.
        let expected: Vec<(String, u32)> = documents
            .iter()
            .flat_map(|d| (0..d.chunk_count).map(move |c| (d.doc_id.clone(), c)))
            .collect();
        let got: Vec<(String, u32)> = segment_chunks.iter().map(|c| (c.doc_id.clone(), c.index)).collect();
        assert!(
            expected == got,
            "{}: rows out of their documents' order",
            segment.display()
        );
        rows += got.len();
    }
    assert_eq!(rows, chunks);
}
