//! `quarry bench-cpu-stages`: can the CPU feed the GPU? The stages of a run that stay on the
//! CPU whatever the device — parse + chunk (the parse stage's work, files and the documents
//! of a file in parallel; the chunker also yields each chunk's model ids; then each chunk's
//! language and each document's layers, `--summaries`), the model's
//! tokenization of the chunks the chunker handed no ids (the embed stage's CPU part), the
//! BM25 keyword index over the chunk texts with the languages the parse stage told (built
//! beside the vector index after embedding; also with the English analyzer of earlier
//! indexes, to compare),
//! and writing the segment into a local folder (chunks.parquet with the embeddings,
//! documents.parquet, a flat vectors.faiss, the keyword files, their checksums; seeded unit
//! vectors stand in for the embeddings, of which only the size matters here) — timed apart
//! over a folder of files, on rayon pools of the sizes asked for, in model tokens per second,
//! to compare with the embedding throughput of `bench-embed`.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use rayon::prelude::*;

use quarry_datasets::synthetic::clustered_unit_vectors;
use quarry_indexer::chunk::{Chunk, ChunkerConfig, TokenChunker};
use quarry_indexer::embed::{Embeddings, ModelDir, ModelTokenizer};
use quarry_indexer::index::{build_english_keyword_index, build_keyword_index_detected, build_vector_index, IndexSpec};
use quarry_indexer::parse::AutoParser;
use quarry_indexer::pipeline::{add_layers, parse_and_chunk, ChunkSettings, ChunkedDoc};
use quarry_indexer::snapshot::{DocumentRecord, SnapshotWriter};
use quarry_indexer::source::RawDocument;
use quarry_indexer::store::StoreOptions;

/// One pool size's measurement.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CpuStages {
    pub threads: usize,
    pub files: usize,
    pub documents: usize,
    pub chunks: usize,
    /// Chunks that came without model ids (their ids would pass the window), which the embed
    /// stage tokenizes.
    pub untokenized_chunks: usize,
    /// Model tokens of the chunks (specials excluded), as the chunker counts them.
    pub chunk_tokens: u64,
    pub parse_chunk_secs: f64,
    /// Tokenizing the untokenized chunks for the model, in groups of `TOKENIZE_GROUP`.
    pub tokenize_secs: f64,
    /// Building the keyword index over every chunk text, in row order, on the pool, with the
    /// chunks' languages from the parse stage (as a run builds it).
    pub keyword_index_secs: f64,
    /// The same with the English analyzer of indexes written before the multilingual one.
    pub keyword_index_english_secs: f64,
    /// Writing the segment's files into a local folder.
    pub write_segment_secs: f64,
    pub parse_chunk_tokens_per_sec: f64,
    pub keyword_index_tokens_per_sec: f64,
    pub keyword_index_english_tokens_per_sec: f64,
    /// Both stages on one pool, one after the other (they overlap in a run, sharing the cores).
    pub cpu_tokens_per_sec: f64,
}

/// Chunk texts per tokenization call, as the embed stage groups them.
pub const TOKENIZE_GROUP: usize = 2048;

/// What `quarry index` parses and chunks with by default, for `model`, and the model's tokenizer.
pub fn default_settings(model: &ModelDir) -> anyhow::Result<(ChunkSettings, Arc<ModelTokenizer>)> {
    let info = model.info()?;
    let tokenizer = Arc::new(ModelTokenizer::from_file(&model.tokenizer_file(), info.max_tokens)?);
    let chunker = Arc::new(TokenChunker::new(
        ChunkerConfig::default(),
        tokenizer.clone(),
        &info.sha256,
    )?);
    let settings = ChunkSettings {
        parser: std::sync::Arc::new(AutoParser),
        chunker,
        tags: Vec::new(),
        max_document_tokens: 500_000,
        summarizer: quarry_indexer::summary::default_summarizer(),
        ingested_at: chrono::Utc::now(),
    };
    Ok((settings, tokenizer))
}

/// Every regular file below `folder`, read into memory, in path order.
pub fn read_folder(folder: &Path) -> anyhow::Result<Vec<RawDocument>> {
    let mut paths = Vec::new();
    let mut pending = vec![folder.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            if path.is_dir() {
                pending.push(path);
            } else {
                paths.push(path);
            }
        }
    }
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let bytes = std::fs::read(&path)?;
            let relative = path
                .strip_prefix(folder)
                .unwrap_or(&path)
                .to_string_lossy()
                .into_owned();
            Ok(RawDocument {
                uri: format!("file://{}", path.display()),
                relative_path: relative,
                size: bytes.len() as u64,
                bytes: bytes.into(),
                etag: None,
                source: "file".into(),
                content_type: None,
            })
        })
        .collect()
}

/// Parses, chunks and tokenizes `files`, builds their keyword index and writes their segment
/// (`dim`-wide vectors), on a pool of `threads` threads.
pub fn measure(
    files: &[RawDocument],
    settings: &ChunkSettings,
    tokenizer: &ModelTokenizer,
    dim: usize,
    threads: usize,
) -> anyhow::Result<CpuStages> {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build()?;
    pool.install(|| {
        let started = Instant::now();
        let parsed: Vec<_> = files.par_iter().map(|raw| parse_and_chunk(raw, settings)).collect();
        let failures: usize = parsed.iter().map(|(_, failures)| failures.len()).sum();
        anyhow::ensure!(failures == 0, "{failures} documents failed to parse or chunk");
        let mut documents: Vec<_> = parsed.into_iter().flat_map(|(documents, _)| documents).collect();
        add_layers(&mut documents, settings.summarizer.as_ref());
        let parse_chunk_secs = started.elapsed().as_secs_f64();
        let chunks: usize = documents.iter().map(|d| d.chunks.len()).sum();
        let without_ids = documents
            .iter()
            .flat_map(|d| d.chunks.iter().zip(&d.model_ids))
            .filter(|(_, ids)| ids.is_none());
        let texts: Vec<&str> = without_ids.map(|(c, _)| c.text.as_str()).collect();
        let chunk_tokens: u64 = documents
            .iter()
            .flat_map(|d| d.chunks.iter().map(|c| c.token_count as u64))
            .sum();
        let started = Instant::now();
        for group in texts.chunks(TOKENIZE_GROUP) {
            tokenizer.encode_for_model(group)?;
        }
        let tokenize_secs = started.elapsed().as_secs_f64();
        let keyword_dir = tempfile::tempdir()?;
        let started = Instant::now();
        // As a run builds it: over the languages the parse stage told.
        let all_texts: Vec<&str> = documents
            .iter()
            .flat_map(|d| d.chunks.iter().map(|c| c.text.as_str()))
            .collect();
        let languages: Vec<_> = documents.iter().flat_map(|d| d.languages.iter().copied()).collect();
        build_keyword_index_detected(keyword_dir.path(), &all_texts, &languages)?;
        let keyword_index_secs = started.elapsed().as_secs_f64();
        let english_dir = tempfile::tempdir()?;
        let started = Instant::now();
        build_english_keyword_index(
            english_dir.path(),
            documents.iter().flat_map(|d| d.chunks.iter().map(|c| c.text.as_str())),
        )?;
        let keyword_index_english_secs = started.elapsed().as_secs_f64();
        let write_segment_secs = write_segment(&documents, keyword_dir.path(), dim)?;
        let rate = |secs: f64| if secs > 0.0 { chunk_tokens as f64 / secs } else { 0.0 };
        Ok(CpuStages {
            threads,
            files: files.len(),
            documents: documents.len(),
            chunks,
            untokenized_chunks: texts.len(),
            chunk_tokens,
            parse_chunk_secs,
            tokenize_secs,
            keyword_index_secs,
            keyword_index_english_secs,
            write_segment_secs,
            parse_chunk_tokens_per_sec: rate(parse_chunk_secs),
            keyword_index_tokens_per_sec: rate(keyword_index_secs),
            keyword_index_english_tokens_per_sec: rate(keyword_index_english_secs),
            cpu_tokens_per_sec: rate(parse_chunk_secs + tokenize_secs),
        })
    })
}

/// Writes `documents` (with seeded `dim`-wide unit vectors) as a segment into a temporary
/// local folder, as a run writes its new segment; returns the seconds it took.
fn write_segment(documents: &[ChunkedDoc], keyword_dir: &Path, dim: usize) -> anyhow::Result<f64> {
    let chunks: Vec<Chunk> = documents.iter().flat_map(|d| d.chunks.iter().cloned()).collect();
    let records: Vec<DocumentRecord> = documents.iter().map(|d| d.record.clone()).collect();
    let embeddings = Embeddings {
        dim,
        data: clustered_unit_vectors(chunks.len(), dim, 256, 7),
    };
    let vectors = build_vector_index(&IndexSpec::Flat, dim, &embeddings.data)?;
    let out = tempfile::tempdir()?;
    let writer = SnapshotWriter::open(&out.path().to_string_lossy(), &StoreOptions::default())?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let started = Instant::now();
    runtime.block_on(writer.write_segment("seg-bench", &chunks, &embeddings, &records, &vectors, keyword_dir))?;
    Ok(started.elapsed().as_secs_f64())
}

/// A Markdown table of the measurements.
pub fn markdown(results: &[CpuStages]) -> String {
    let mut out = String::from(
        "| threads | documents | chunks | untokenized | tokens | parse+chunk s | tokenize s | parse+chunk M tok/s | both M tok/s | keyword index s | keyword index M tok/s | English analyzer s | English analyzer M tok/s | write segment s |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for r in results {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |\n",
            r.threads,
            r.documents,
            r.chunks,
            r.untokenized_chunks,
            r.chunk_tokens,
            r.parse_chunk_secs,
            r.tokenize_secs,
            r.parse_chunk_tokens_per_sec / 1e6,
            r.cpu_tokens_per_sec / 1e6,
            r.keyword_index_secs,
            r.keyword_index_tokens_per_sec / 1e6,
            r.keyword_index_english_secs,
            r.keyword_index_english_tokens_per_sec / 1e6,
            r.write_segment_secs
        ));
    }
    out
}
