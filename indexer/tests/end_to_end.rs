//! End to end on real parts: an msmarco-5k slice (plus broken files) indexed into a local
//! folder and, through a real S3 API (moto_server on loopback), from S3 into S3. Checks
//! counts, failures, checksums, and that the embeddings read back are those of the texts; an
//! S3 object's text read in the charset its Content-Type declares; JSONL corpora past the
//! size limit read as streams, locally and from S3.

use crate::common;

use std::path::Path;

use object_store::{ObjectStoreExt, PutPayload};
use quarry_indexer::index::{load_vector_index, KeywordIndex, TantivyKeywordIndex, VectorIndex};
use quarry_indexer::pipeline::{run_with_embedder, ProgressMode, RunOptions, RunReport};
use quarry_indexer::snapshot::{layout, SnapshotReader};
use quarry_indexer::store::{open_location, StoreOptions};

const SLICE: usize = 120;

fn options(source: &str, out: &str) -> RunOptions {
    let mut options = RunOptions::new(source, out, common::model_dir());
    options.progress = ProgressMode::Quiet;
    options
}

/// A run's options with files past `max_file_bytes` too large to read whole.
fn limited(src: &Path, out: &Path, max_file_bytes: u64) -> RunOptions {
    let mut run = options(src.to_str().unwrap(), out.to_str().unwrap());
    run.source_options.max_file_bytes = max_file_bytes;
    run
}

fn write(dir: &Path, name: &str, bytes: impl AsRef<[u8]>) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// Everything a published snapshot must satisfy, whatever store it lives in.
async fn check_snapshot(uri: &str, store: &StoreOptions, report: &RunReport, expected_docs: usize) {
    let reader = SnapshotReader::open(uri, store).await.unwrap();
    let manifest = reader.manifest();
    assert_eq!(Some(&manifest.version), report.version.as_ref());
    assert_eq!(manifest.counts.documents, expected_docs);
    assert_eq!(manifest.counts.chunks, report.chunks);
    assert_eq!(
        manifest.model.sha256,
        "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
    );
    assert_eq!(manifest.index.kind, "flat");
    let verification = reader.verify().await.unwrap();
    assert!(verification.ok(), "{:?}", verification.problems);
    assert!(verification.files_checked >= 4);

    let documents = reader.read_documents().await.unwrap();
    assert_eq!(documents.len(), expected_docs);
    let (chunks, embeddings) = reader.read_chunks().await.unwrap();
    assert_eq!(chunks.len(), manifest.counts.chunks);
    assert_eq!(
        documents.iter().map(|d| d.chunk_count as usize).sum::<usize>(),
        chunks.len()
    );
    assert_eq!(
        chunks.iter().map(|c| c.token_count as u64).sum::<u64>(),
        manifest.counts.tokens
    );

    // The stored vectors are the embeddings of the stored texts, row for row.
    let texts: Vec<&str> = chunks.iter().map(|c| c.text.as_str()).collect();
    let fresh = common::embedder().embed(&texts).unwrap();
    for (row, chunk) in chunks.iter().enumerate() {
        let cosine = common::cosine(embeddings.row(row), fresh.row(row));
        assert!(cosine > 0.99999, "row {row} ({}) has cosine {cosine}", chunk.chunk_id);
    }

    // Both indexes answer over the same rows.
    let scratch = tempfile::tempdir().unwrap();
    let segment = &manifest.segments[0].id;
    let vectors_path = scratch.path().join("vectors.faiss");
    std::fs::write(
        &vectors_path,
        reader
            .get(&layout::segment_file(segment, layout::VECTORS))
            .await
            .unwrap(),
    )
    .unwrap();
    let index = load_vector_index(&vectors_path, &manifest.index.params).unwrap();
    assert_eq!(index.len(), chunks.len());
    let hits = index.search(embeddings.row(7), 1).unwrap();
    assert_eq!(hits[0][0].row, 7);
    let keyword_dir = scratch.path().join("keyword");
    std::fs::create_dir(&keyword_dir).unwrap();
    for file in manifest.segments[0].files.iter().filter(|f| f.contains("/keyword/")) {
        let name = file.rsplit('/').next().unwrap();
        std::fs::write(keyword_dir.join(name), reader.get(file).await.unwrap()).unwrap();
    }
    let keyword = TantivyKeywordIndex::open(&keyword_dir).unwrap();
    assert_eq!(keyword.len(), chunks.len());
    let probe = &chunks[11];
    let query: String = probe
        .text
        .split_whitespace()
        .filter(|w| w.len() > 6)
        .take(6)
        .collect::<Vec<_>>()
        .join(" ");
    let hits = keyword.search(&query, 5).unwrap();
    assert!(
        hits.iter().any(|h| h.row == 11),
        "BM25 for {query:?} misses row 11: {hits:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_folder_to_local_snapshot_with_failures_isolated() {
    let src = tempfile::tempdir().unwrap();
    write(src.path(), "beir/corpus.jsonl", common::msmarco_slice(SLICE));
    write(src.path(), "notes/gpu.md", "# GPUs\n\nThey multiply matrices.\n");
    write(src.path(), "broken.pdf", b"%PDF-1.7\nthis is not really a pdf");
    write(src.path(), "empty.txt", b"");
    write(src.path(), "latin1.txt", b"caf\xe9 au lait");
    write(src.path(), ".cache/ignored.txt", "hidden");
    let out = tempfile::tempdir().unwrap();
    let out_uri = out.path().join("snap");
    let mut run = options(src.path().to_str().unwrap(), out_uri.to_str().unwrap());
    run.tags = vec!["nightly".into()];
    let report = run_with_embedder(run, common::embedder()).await.unwrap();

    assert_eq!(report.files_listed, 5);
    assert_eq!(report.documents_indexed, SLICE + 2);
    assert_eq!(report.documents_failed, 2, "{:#?}", report.failures);
    assert_eq!(report.documents_seen, SLICE + 4);
    let reason = |suffix: &str| {
        report
            .failures
            .iter()
            .find(|f| f.uri.ends_with(suffix))
            .map(|f| f.reason.clone())
            .unwrap_or_default()
    };
    assert!(
        reason("broken.pdf").starts_with("File appears corrupted"),
        "{}",
        reason("broken.pdf")
    );
    assert_eq!(reason("empty.txt"), "file is empty");
    assert_eq!(reason("latin1.txt"), "", "a Latin-1 file is read, not refused");
    assert_eq!(report.skipped.len(), 1);
    assert_eq!(report.skipped[0].reason, "hidden file");
    assert!(report.render_table().contains("documents failed     2"));

    check_snapshot(out_uri.to_str().unwrap(), &StoreOptions::default(), &report, SLICE + 2).await;

    let reader = SnapshotReader::open(out_uri.to_str().unwrap(), &StoreOptions::default())
        .await
        .unwrap();
    let documents = reader.read_documents().await.unwrap();
    let (chunks, _) = reader.read_chunks().await.unwrap();
    assert!(
        chunks.iter().any(|c| c.text == "café au lait"),
        "the Latin-1 file's text, read as Windows-1252"
    );
    let first_id = serde_json::from_str::<serde_json::Value>(common::msmarco_slice(1).trim()).unwrap()["_id"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(documents
        .iter()
        .any(|d| d.uri.ends_with(&format!("corpus.jsonl#{first_id}")) && d.file_name == "corpus.jsonl"));
    assert!(documents
        .iter()
        .all(|d| d.tags.contains(&"nightly".to_string()) && d.source == "file"));
    // The run report is stored beside the manifest.
    let stored_report = reader
        .get(&layout::report(report.version.as_ref().unwrap()))
        .await
        .unwrap();
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&stored_report).unwrap()["documents_failed"],
        2
    );

    // Ids are stable: a second run over the same files gives the same documents and chunks.
    let again = out.path().join("again");
    run_with_embedder(
        options(src.path().to_str().unwrap(), again.to_str().unwrap()),
        common::embedder(),
    )
    .await
    .unwrap();
    let other = SnapshotReader::open(again.to_str().unwrap(), &StoreOptions::default())
        .await
        .unwrap();
    let ids = |chunks: Vec<quarry_indexer::chunk::Chunk>| chunks.into_iter().map(|c| c.chunk_id).collect::<Vec<_>>();
    assert_eq!(
        ids(reader.read_chunks().await.unwrap().0),
        ids(other.read_chunks().await.unwrap().0)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_prefix_to_s3_snapshot_on_a_real_s3_api() {
    let server = common::S3Server::start("quarry-e2e");
    let store = StoreOptions {
        s3_endpoint: Some(server.endpoint.clone()),
    };
    let docs_uri = format!("s3://{}/incoming/docs", server.bucket);
    let docs = open_location(&docs_uri, &store, false).unwrap();
    docs.store
        .put(
            &docs.child("2024/corpus.jsonl"),
            PutPayload::from(common::msmarco_slice(40).into_bytes()),
        )
        .await
        .unwrap();
    docs.store
        .put(
            &docs.child("2024/readme.md"),
            PutPayload::from_static(b"# Readme\n\nS3 documents are indexed too."),
        )
        .await
        .unwrap();
    docs.store
        .put(&docs.child("2024/skip.log"), PutPayload::from_static(b"excluded"))
        .await
        .unwrap();

    let snap_uri = format!("s3://{}/snapshots/docs", server.bucket);
    let mut run = options(&docs_uri, &snap_uri);
    run.source_options.store = store.clone();
    run.source_options.exclude = vec!["**/*.log".into()];
    // corpus.jsonl (about 14 KB) is past this limit: it is read as a stream, by ranged GETs
    // asking for the listed ETag.
    run.source_options.max_file_bytes = 4096;
    run.out_store = store.clone();
    let report = run_with_embedder(run, common::embedder()).await.unwrap();
    assert_eq!(report.documents_indexed, 41, "{:#?}", report.failures);
    assert_eq!(report.skipped.len(), 1);
    check_snapshot(&snap_uri, &store, &report, 41).await;

    let reader = SnapshotReader::open(&snap_uri, &store).await.unwrap();
    let documents = reader.read_documents().await.unwrap();
    assert!(documents
        .iter()
        .all(|d| d.source == "s3" && d.uri.starts_with("s3://quarry-e2e/incoming/docs/2024/")));
    assert!(documents.iter().all(|d| d.etag.is_some()), "S3 etags are kept");

    let readme = documents
        .iter()
        .find(|d| d.uri.ends_with("2024/readme.md"))
        .unwrap()
        .doc_id
        .clone();
    let readme_rows = reader
        .read_chunks()
        .await
        .unwrap()
        .0
        .iter()
        .filter(|c| c.doc_id == readme)
        .count() as u64;
    assert!(readme_rows >= 1 && readme_rows < report.chunks as u64);

    // The next night: readme.md changes, corpus.jsonl does not. Only the readme is fetched
    // (the corpus's ETag is the stored one) and only it is written, into a second segment.
    docs.store
        .put(
            &docs.child("2024/readme.md"),
            PutPayload::from_static(b"# Readme\n\nS3 documents are indexed incrementally."),
        )
        .await
        .unwrap();
    let mut again = options(&docs_uri, &snap_uri);
    again.source_options.store = store.clone();
    again.source_options.exclude = vec!["**/*.log".into()];
    again.out_store = store.clone();
    let second = run_with_embedder(again, common::embedder()).await.unwrap();
    let delta = second.delta.as_ref().expect("a delta over the first version");
    assert_eq!(
        (delta.files_unchanged, delta.documents_written, delta.documents_removed),
        (1, 1, 0),
        "{delta:?}"
    );
    assert_eq!(second.stages.iter().find(|s| s.stage == "fetch").unwrap().items, 1);
    // The readme's segment is read from S3: of its files the blocks holding their metadata,
    // the column naming each row's document and the readme's pages, fetched by range requests
    // and each checked against the manifest's block sums. Of it, only the readme's rows are
    // decoded.
    assert_eq!(
        (
            second.reuse.segments_read,
            second.reuse.rows_read,
            second.reuse.notes.len()
        ),
        (1, readme_rows, 0),
        "{:?}",
        second.reuse
    );
    let file =
        |name: &str| &reader.manifest().checksums[&layout::segment_file(&reader.manifest().segments[0].id, name)];
    let (chunks_file, documents_file) = (file(layout::CHUNKS), file(layout::DOCUMENTS));
    assert!(chunks_file.blocks.is_some() && documents_file.blocks.is_some());
    assert!(
        second.reuse.bytes_read > 0 && second.reuse.bytes_read <= chunks_file.bytes + 2 * documents_file.bytes,
        "{:?}",
        second.reuse
    );
    assert_eq!(second.documents_indexed, 41);
    let reader = SnapshotReader::open(&snap_uri, &store).await.unwrap();
    assert!(reader.verify().await.unwrap().ok());
    assert_eq!(reader.manifest().segments.len(), 2);
    let readme: Vec<String> = reader
        .read_chunks()
        .await
        .unwrap()
        .0
        .into_iter()
        .filter(|c| c.text.contains("S3 documents are indexed"))
        .map(|c| c.text)
        .collect();
    assert!(
        readme.len() == 1 && readme[0].contains("incrementally"),
        "only the new readme is live: {readme:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_s3_objects_declared_charset_reads_its_text() {
    let server = common::S3Server::start("quarry-charset");
    let store = StoreOptions {
        s3_endpoint: Some(server.endpoint.clone()),
    };
    let docs_uri = format!("s3://{}/notes", server.bucket);
    let docs = open_location(&docs_uri, &store, false).unwrap();
    // Mac OS Roman, which no guess gives ("ß" and "ö" would read as "§" and "š"), and says so
    // in its Content-Type.
    let (mac, _, _) = encoding_rs::MACINTOSH.encode("Die Straße zum Kai öffnet um sechs.");
    let declared = object_store::PutOptions {
        attributes: object_store::Attributes::from_iter([(
            object_store::Attribute::ContentType,
            object_store::AttributeValue::from("text/plain; charset=macintosh"),
        )]),
        ..Default::default()
    };
    docs.store
        .put_opts(&docs.child("kai.txt"), PutPayload::from(mac.into_owned()), declared)
        .await
        .unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut run = options(&docs_uri, out.path().to_str().unwrap());
    run.source_options.store = store.clone();
    let report = run_with_embedder(run, common::embedder()).await.unwrap();
    assert_eq!(report.documents_indexed, 1, "{:#?}", report.failures);
    let reader = SnapshotReader::open(out.path().to_str().unwrap(), &StoreOptions::default())
        .await
        .unwrap();
    let chunks = reader.read_chunks().await.unwrap().0;
    assert!(
        chunks[0].text.contains("Die Straße zum Kai öffnet"),
        "{}",
        chunks[0].text
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_documents_fail_alone() {
    let src = tempfile::tempdir().unwrap();
    write(src.path(), "small.txt", "A short note.");
    write(src.path(), "big.txt", "word ".repeat(5000));
    let out = tempfile::tempdir().unwrap();
    let mut run = options(src.path().to_str().unwrap(), out.path().to_str().unwrap());
    run.max_document_tokens = 1000;
    let report = run_with_embedder(run, common::embedder()).await.unwrap();
    assert_eq!(report.documents_indexed, 1);
    assert_eq!(report.failures.len(), 1);
    // Seed 004's message, with this run's limit; the document's own count apart.
    assert_eq!(
        report.failures[0].reason,
        "Document too large: exceeds maximum token limit (1k tokens)."
    );
    assert_eq!(
        report.failures[0].detail.as_deref(),
        Some("5000 tokens; the limit is 1000")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_embedded_as_base64_are_left_out_and_a_file_of_nothing_else_fails_alone() {
    // 6,000 bytes of noise in base64, as one string and in MIME's lines.
    let noise: Vec<u8> = (0..6000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8)
        .collect();
    let encoded = {
        let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        noise
            .chunks(3)
            .flat_map(|c| {
                let n = (c[0] as u32) << 16 | (c[1] as u32) << 8 | c[2] as u32;
                (0..4).map(move |k| alphabet[(n >> (18 - 6 * k) & 63) as usize] as char)
            })
            .collect::<String>()
    };
    let lines: Vec<&str> = (0..encoded.len())
        .step_by(76)
        .map(|at| &encoded[at..(at + 76).min(encoded.len())])
        .collect();
    let src = tempfile::tempdir().unwrap();
    let record = serde_json::json!({"title": "Pump report", "body": "The centrifugal pump failed at dawn.", "attachment": encoded});
    write(src.path(), "report.json", record.to_string());
    write(src.path(), "cover.txt", lines.join("\n"));
    write(src.path(), "notes.md", "# Notes\n\nA small file about pumps.\n");
    let out = tempfile::tempdir().unwrap();
    let run = options(src.path().to_str().unwrap(), out.path().to_str().unwrap());
    let report = run_with_embedder(run, common::embedder()).await.unwrap();
    assert_eq!(report.documents_indexed, 2, "{:#?}", report.failures);
    assert_eq!(report.failures.len(), 1);
    assert!(report.failures[0].uri.ends_with("cover.txt"));
    assert_eq!(
        report.failures[0].reason,
        "no text content found: only base64-encoded data (an embedded file or picture)"
    );
    let warned: Vec<&str> = report
        .warnings
        .iter()
        .filter(|w| w.uri.ends_with("report.json"))
        .map(|w| w.warning.as_str())
        .collect();
    assert_eq!(warned, ["left out 8 k characters of base64-encoded data in one place (an embedded file or picture: no text to search)"]);
    let reader = SnapshotReader::open(out.path().to_str().unwrap(), &StoreOptions::default())
        .await
        .unwrap();
    let (chunks, _) = reader.read_chunks().await.unwrap();
    let report_chunks: Vec<&str> = chunks
        .iter()
        .filter(|c| c.doc_id != chunks.iter().find(|d| d.text.contains("small file")).unwrap().doc_id)
        .map(|c| c.text.as_str())
        .collect();
    assert_eq!(report_chunks.len(), 1, "{report_chunks:?}");
    assert!(report_chunks[0].contains("The centrifugal pump failed at dawn."));
    assert!(!report_chunks[0].contains(&encoded[..40]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_jsonl_corpus_past_the_size_limit_is_read_as_a_stream() {
    use std::io::Write;
    // 12 passages, each followed by 1,000 blank lines (so the stream's batches of 4,096 lines
    // split them over three batches at little embedding cost), a bad line among them; and a
    // gzipped corpus, read as a stream whatever its size.
    let passages: Vec<String> = common::msmarco_slice(17).lines().map(str::to_string).collect();
    let mut corpus = String::new();
    for (i, passage) in passages[..12].iter().enumerate() {
        corpus.push_str(passage);
        corpus.push_str(&"\n".repeat(1001));
        if i == 6 {
            corpus.push_str("{\"_id\": \"broken\", \"text\": \n");
        }
    }
    let mut gzipped = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gzipped
        .write_all((passages[12..].join("\n") + "\n").as_bytes())
        .unwrap();
    let src = tempfile::tempdir().unwrap();
    write(src.path(), "beir/corpus.jsonl", &corpus);
    write(src.path(), "beir/more.jsonl.gz", gzipped.finish().unwrap());
    write(src.path(), "notes.md", "# Notes\n\nA small file, read whole.\n");
    let out = tempfile::tempdir().unwrap();
    let run = |out: &Path, max_file_bytes: u64| limited(src.path(), out, max_file_bytes);
    let streamed = run_with_embedder(run(&out.path().join("streamed"), 4096), common::embedder())
        .await
        .unwrap();
    assert!(corpus.len() > 4096 * 3);
    assert_eq!(streamed.documents_indexed, 18, "{:#?}", streamed.failures);
    assert_eq!(streamed.failures.len(), 1, "{:#?}", streamed.failures);
    let bad_line = 7 * 1001 + 1;
    assert!(streamed.failures[0]
        .uri
        .ends_with(&format!("beir/corpus.jsonl#L{bad_line}")));
    assert!(
        streamed.failures[0]
            .reason
            .starts_with(&format!("line {bad_line}: invalid JSON")),
        "{:?}",
        streamed.failures[0]
    );
    // Within the limit the same file is read whole: the same documents, texts and chunks.
    let whole = run_with_embedder(run(&out.path().join("whole"), 256 << 20), common::embedder())
        .await
        .unwrap();
    assert_eq!(whole.documents_indexed, 18);
    let rows = |name: &'static str| {
        let uri = out.path().join(name);
        async move {
            let reader = SnapshotReader::open(uri.to_str().unwrap(), &StoreOptions::default())
                .await
                .unwrap();
            let documents = reader.read_documents().await.unwrap();
            let mut documents: Vec<(String, String, String)> = documents
                .into_iter()
                .map(|d| (d.uri, d.file_name, d.content_hash))
                .collect();
            documents.sort();
            let (chunks, _) = reader.read_chunks().await.unwrap();
            (documents, chunks.into_iter().map(|c| c.chunk_id).collect::<Vec<_>>())
        }
    };
    let (streamed_rows, whole_rows) = (rows("streamed").await, rows("whole").await);
    assert_eq!(streamed_rows, whole_rows);
    assert!(streamed_rows
        .0
        .iter()
        .any(|(uri, name, _)| uri.contains("more.jsonl.gz#") && name == "more.jsonl.gz"));
    // The next night nothing changed: the gzipped corpus is not read again; corpus.jsonl,
    // which had a failure, is (as any file with one), and none of its documents is written.
    let again = run_with_embedder(run(&out.path().join("streamed"), 4096), common::embedder())
        .await
        .unwrap();
    let delta = again.delta.as_ref().expect("a delta over the first version");
    assert_eq!(
        (
            delta.files_unchanged,
            delta.documents_unchanged,
            delta.documents_written
        ),
        (2, 12, 0),
        "{delta:?}"
    );
    assert_eq!(again.stages.iter().find(|s| s.stage == "fetch").unwrap().items, 1);
}

/// A MediaWiki dump of `pages` pages, every other one a redirect (left out).
fn wiki_dump(pages: usize) -> String {
    let pages: String = (1..=pages)
        .map(|id| {
            let (title, text) = match id % 2 {
                0 => (
                    format!("Page {id}"),
                    format!("The river of page {id} runs north. [[Category:Rivers {}]]", id % 3),
                ),
                _ => (format!("Redirect {id}"), "#REDIRECT [[Page 2]]".to_string()),
            };
            let redirect = if id % 2 == 1 {
                "<redirect title=\"Page 2\" />"
            } else {
                ""
            };
            format!(
                "<page><title>{title}</title><ns>0</ns><id>{id}</id>{redirect}<revision><id>{}</id>\
                 <timestamp>2026-12-01T10:00:00Z</timestamp><model>wikitext</model><format>text/x-wiki</format>\
                 <text xml:space=\"preserve\">{text}</text></revision></page>\n",
                id * 10
            )
        })
        .collect();
    format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<mediawiki xmlns=\"http://www.mediawiki.org/xml/export-0.11/\" \
         version=\"0.11\" xml:lang=\"en\"><siteinfo><sitename>Wikipedia</sitename>\
         <base>https://en.wikipedia.org/wiki/Main_Page</base><namespaces>\
         <namespace key=\"14\" case=\"first-letter\">Category</namespace></namespaces></siteinfo>\n{pages}</mediawiki>\n"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mediawiki_dump_stack_exchange_table_mailbox_evernote_export_or_csv_compressed_or_past_the_size_limit_is_read_as_a_stream(
) {
    use std::io::Write;
    let src = tempfile::tempdir().unwrap();
    write(src.path(), "wiki/enwiki-pages-articles.xml", wiki_dump(40));
    let mut bzipped = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::default());
    bzipped.write_all(wiki_dump(12).as_bytes()).unwrap();
    write(
        src.path(),
        "wiki/enwiki-pages-articles1.xml-p1p12.bz2",
        bzipped.finish().unwrap(),
    );
    // Compressed XML that is no dump is read whole, as before; XML past the limit that is no
    // dump fails as too large.
    let mut gzipped = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gzipped
        .write_all(b"<?xml version=\"1.0\"?><note><p>Compressed XML that is no dump, read whole.</p></note>")
        .unwrap();
    write(src.path(), "notes/note.xml.gz", gzipped.finish().unwrap());
    write(
        src.path(),
        "notes/large.xml",
        format!("<?xml version=\"1.0\"?><data>{}</data>", "<p>row</p>".repeat(500)),
    );
    // A Stack Exchange posts table past the limit: 20 questions, each with an answer.
    let rows: String = (0..20)
        .map(|q| {
            format!(
                "<row Id=\"{}\" PostTypeId=\"1\" Title=\"How do rivers {q} bend?\" Body=\"&lt;p&gt;Asking about meanders, case {q}: why does a river on a flat plain bend, and why do its bends move downstream over the years?&lt;/p&gt;\" Tags=\"&lt;rivers&gt;\" />\n\
                 <row Id=\"{}\" PostTypeId=\"2\" ParentId=\"{}\" Body=\"&lt;p&gt;Erosion on the outer bank, case {q}, answered at some length too.&lt;/p&gt;\" />\n",
                2 * q + 1,
                2 * q + 2,
                2 * q + 1
            )
        })
        .collect();
    write(
        src.path(),
        "se/Posts.xml",
        format!("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<posts>\n{rows}</posts>\n"),
    );
    // A Thunderbird folder (no extension) past the limit, and a gzipped mailbox.
    let mailbox = |count: usize| -> String {
        (1..=count)
            .map(|i| {
                format!(
                    "From ops@example.com Tue Nov  3 09:{i:02}:00 2026\nFrom: ops@example.com\nSubject: pier report {i}\n\n\
                     The north pier's valve {i} was replaced and tested at six bar.\n\n"
                )
            })
            .collect()
    };
    write(src.path(), "mail/Inbox", mailbox(30));
    let mut gzipped = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gzipped.write_all(mailbox(5).as_bytes()).unwrap();
    write(src.path(), "mail/archive.mbox.gz", gzipped.finish().unwrap());
    // A table of 2,100 rows past the limit: three documents of up to 1,000 rows.
    let table: String = std::iter::once("id,part,notes\n".to_string())
        .chain((1..=2100).map(|i| format!("{i},valve {i},\"brass, fits pier {}\"\n", i % 9)))
        .collect();
    write(src.path(), "tables/parts.csv", &table);
    // An Evernote export past the limit (12 notes, each with a text file attached) and a
    // gzipped one (2 notes).
    let evernote = |count: usize| -> String {
        use base64::Engine;
        let notes: String = (1..=count)
            .map(|i| {
                let log = format!("Dredging log {i}: the channel was sounded at four metres.");
                format!(
                    "<note><title>Harbour note {i}</title><created>20260103T0900{i:02}Z</created>\
                     <content><![CDATA[<en-note><div>The quay's crane {i} was inspected.</div></en-note>]]></content>\
                     <resource><data encoding=\"base64\">{}</data><mime>text/plain</mime>\
                     <resource-attributes><file-name>log-{i}.txt</file-name></resource-attributes></resource></note>\n",
                    base64::engine::general_purpose::STANDARD.encode(log)
                )
            })
            .collect();
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<en-export application=\"Evernote\">\n{notes}</en-export>\n"
        )
    };
    write(src.path(), "evernote/Harbour.enex", evernote(12));
    let mut gzipped = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gzipped.write_all(evernote(2).as_bytes()).unwrap();
    write(src.path(), "evernote/Old.enex.gz", gzipped.finish().unwrap());
    let out = tempfile::tempdir().unwrap();
    let run = |out: &Path, max_file_bytes: u64| limited(src.path(), out, max_file_bytes);
    let streamed = run_with_embedder(run(&out.path().join("streamed"), 4096), common::embedder())
        .await
        .unwrap();
    assert!(wiki_dump(40).len() > 4096 && rows.len() > 4096 && mailbox(30).len() > 4096 && table.len() > 4096);
    assert!(evernote(12).len() > 4096);
    // 20 + 6 pages read, the note, 40 posts, 30 + 5 messages, 3 parts of a table, 12 + 2
    // Evernote notes; large.xml too large.
    assert_eq!(streamed.documents_indexed, 119, "{:#?}", streamed.failures);
    assert_eq!(streamed.failures.len(), 1, "{:#?}", streamed.failures);
    assert!(streamed.failures[0].uri.ends_with("notes/large.xml"));
    assert!(
        streamed.failures[0].reason.contains("too large"),
        "{:?}",
        streamed.failures[0]
    );
    let whole = run_with_embedder(run(&out.path().join("whole"), 256 << 20), common::embedder())
        .await
        .unwrap();
    assert_eq!(whole.documents_indexed, 120, "{:#?}", whole.failures);
    let documents = |name: &'static str| {
        let uri = out.path().join(name);
        async move {
            let reader = SnapshotReader::open(uri.to_str().unwrap(), &StoreOptions::default())
                .await
                .unwrap();
            let mut documents: Vec<(String, String, String, Vec<String>)> = reader
                .read_documents()
                .await
                .unwrap()
                .into_iter()
                .filter(|d| !d.uri.ends_with("large.xml"))
                .map(|d| (d.uri, d.file_name, d.content_hash, d.tags))
                .collect();
            documents.sort();
            documents
        }
    };
    let (streamed, whole) = (documents("streamed").await, documents("whole").await);
    assert_eq!(streamed, whole);
    assert!(streamed.iter().any(
        |(uri, name, _, tags)| uri.ends_with("enwiki-pages-articles1.xml-p1p12.bz2#page=4")
            && name == "enwiki-pages-articles1.xml-p1p12.bz2"
            && tags == &["Rivers 1".to_string()]
    ));
    assert!(streamed.iter().any(|(uri, ..)| uri.ends_with("notes/note.xml.gz")));
    assert!(streamed.iter().any(|(uri, ..)| uri.ends_with("se/Posts.xml#post=40")));
    assert!(streamed.iter().any(|(uri, ..)| uri.ends_with("mail/Inbox#message=30")));
    assert!(streamed
        .iter()
        .any(|(uri, ..)| uri.ends_with("mail/archive.mbox.gz#message=5")));
    assert!(streamed
        .iter()
        .any(|(uri, ..)| uri.ends_with("evernote/Harbour.enex#note=20260103T090012Z")));
    assert!(streamed
        .iter()
        .any(|(uri, ..)| uri.ends_with("evernote/Old.enex.gz#note=20260103T090002Z")));
    let parts: Vec<&str> = streamed
        .iter()
        .filter(|(uri, ..)| uri.contains("tables/parts.csv"))
        .map(|(uri, ..)| uri.rsplit('#').next().unwrap())
        .collect();
    assert_eq!(parts, ["rows=1002-2001", "rows=2-1001", "rows=2002-2101"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compressed_s3_objects_are_told_a_dump_or_not_by_their_first_bytes() {
    use std::io::Write;
    let server = common::S3Server::start("quarry-streams");
    let store = StoreOptions {
        s3_endpoint: Some(server.endpoint.clone()),
    };
    let docs_uri = format!("s3://{}/dumps", server.bucket);
    let docs = open_location(&docs_uri, &store, false).unwrap();
    let mut bzipped = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::default());
    bzipped.write_all(wiki_dump(12).as_bytes()).unwrap();
    let mut gzipped = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gzipped
        .write_all(b"<?xml version=\"1.0\"?><note><p>Gzipped XML on S3, no dump, read whole.</p></note>")
        .unwrap();
    for (key, bytes) in [
        ("enwiki-pages-articles1.xml-p1p12.bz2", bzipped.finish().unwrap()),
        ("note.xml.gz", gzipped.finish().unwrap()),
    ] {
        docs.store.put(&docs.child(key), PutPayload::from(bytes)).await.unwrap();
    }
    let snap_uri = format!("s3://{}/snapshots", server.bucket);
    let mut run = options(&docs_uri, &snap_uri);
    run.source_options.store = store.clone();
    run.out_store = store.clone();
    // The dump's first MiB is read (a ranged GET) and inflated on a blocking thread, then the
    // dump is streamed; the note's the same, then it is fetched whole.
    let report = run_with_embedder(run, common::embedder()).await.unwrap();
    assert_eq!(report.documents_indexed, 7, "{:#?}", report.failures);
    let reader = SnapshotReader::open(&snap_uri, &store).await.unwrap();
    let mut uris: Vec<String> = reader
        .read_documents()
        .await
        .unwrap()
        .into_iter()
        .map(|d| d.uri)
        .collect();
    uris.sort();
    assert_eq!(
        uris[0],
        "s3://quarry-streams/dumps/enwiki-pages-articles1.xml-p1p12.bz2#page=10"
    );
    assert_eq!(uris[6], "s3://quarry-streams/dumps/note.xml.gz");
}
