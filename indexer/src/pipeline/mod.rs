//! The batch run: list -> fetch (async, bounded concurrency) -> parse + chunk (rayon) ->
//! embed (token-budget batches) -> FAISS + BM25 -> publish (a full version, or a delta over
//! the previous one; either way the segments are cut and written as the run embeds). Stages
//! are joined by bounded channels so parsing and chunking overlap embedding; one bad document
//! fails alone.

mod base;
mod compact;
mod delta;
mod fetch_stage;
mod file_completion;
mod keyword_ahead;
mod model_reading;
mod online;
mod own_pools;
mod plan;
mod progress;
mod publish;
mod publish_run;
mod rebase;
mod report;
mod reuse;
mod row_stream;
mod run_stages;
mod segment;
mod segmenter;
mod shard;
mod shard_publish;
mod spilled_vectors;
mod stages;
mod types;

pub use delta::{DeltaReport, PreviousVersion, PublishMode};
pub use progress::ProgressMode;
pub use report::{languages_line, Failure, RunReport, StageReport, Warning};
pub use reuse::{ReuseReport, StoredEmbeddings};

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use crate::chunk::{Chunker, ChunkerConfig, TokenChunker};
use crate::embed::{load_embedder, EmbedOptions, Embedder, ModelDir};
use crate::error::{IndexerError, Result};
use crate::index::IndexOptions;
use crate::parse::{AutoParser, Parser};
use crate::snapshot::SnapshotWriter;
use crate::source::{open_source, Source, SourceOptions};
use crate::store::StoreOptions;
use crate::summary::{default_summarizer, Summarizer};
use base::prepare_base;
pub(crate) use base::{survey, Survey};
pub use compact::{compact, segments_to_merge, CompactOptions, CompactReport};
pub use model_reading::{
    language_name, language_readings, sum_by_language, version_readings, weak_reading_warning, whole_share,
    READING_SAMPLE, WEAK_READING_SHARE,
};
pub use online::{publish_next_version, VersionChange};
pub use plan::{plan_run, FileCount, RunPlan, PLAN_EXAMPLES};
use publish_run::{publish_run, RunParts};
use run_stages::run_stages;
pub use segment::{assemble, BuiltIndexes, SegmentRows};
pub use shard::{shard_of, ShardRun};
pub use shard_publish::{publish_shards, ShardPublishReport};
pub use stages::{
    add_layers, embed_documents, embed_group_for, log_read_in_part, parse_and_chunk, parse_and_chunk_observed,
    ChunkSettings, DEFAULT_EMBED_GROUP,
};
pub use types::{ChunkedDoc, EmbeddedDoc};

/// Chunks per segment of a full run: larger than a 1M-chunk corpus, and the size from which
/// `--index auto` builds IVF.
pub const DEFAULT_SEGMENT_CHUNKS: usize = 2_000_000;

/// Everything one `quarry index` run needs.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub source: String,
    pub out: String,
    pub source_options: SourceOptions,
    /// How to reach the destination (the source has its own in `source_options`).
    pub out_store: StoreOptions,
    pub model_dir: PathBuf,
    pub embed: EmbedOptions,
    pub chunker: ChunkerConfig,
    pub index: IndexOptions,
    /// Tags added to every document.
    pub tags: Vec<String>,
    /// Documents with more tokens than this fail with "Document too large".
    pub max_document_tokens: usize,
    /// How each document's layers (L0, L1) are made.
    pub summarizer: Arc<dyn Summarizer>,
    /// Chunks embedded per group (each group is split into token-budget batches); None: the
    /// model's default ([`embed_group_for`]).
    pub embed_group: Option<usize>,
    pub progress: ProgressMode,
    /// Also write the JSON report here.
    pub report_path: Option<PathBuf>,
    /// Queries for the publish-time recall check; a sample of the chunks when empty.
    pub recall_queries: Vec<String>,
    /// Refuse to publish when the ANN recall@10 is below this.
    pub min_recall: Option<f64>,
    /// Reuse the previous version's embeddings of unchanged documents (incremental run).
    pub reuse: bool,
    /// Delta (build on the previous version; the default) or full (one new segment).
    pub publish: PublishMode,
    /// When a delta run merges segments afterwards (its merged segment uses `index`).
    pub compact: CompactOptions,
    /// Called once the embed stage has ended, before the publishing stages (the `quarry`
    /// binary hands the memory its allocator kept for the embedding batches back).
    pub after_embedding: Option<fn()>,
    /// A run writes a segment each time its embedded documents (a delta's: those that changed
    /// or arrived) reach this many chunks, while it embeds the next ones, so that it holds
    /// about two segments' documents at most.
    pub segment_chunks: usize,
    /// Write a segment's rows to its row files, and build its keyword index in parts, while
    /// the run embeds on, as their places in it are settled (the default); off, every row is
    /// written and indexed once the segment is cut. The files are the same either way.
    pub rows_while_embedding: bool,
    /// What parses the files: in this process ([`AutoParser`], the default), or in worker
    /// processes that no file can take the run down with ([`crate::parse::IsolatedParser`]).
    pub parser: Arc<dyn Parser>,
    /// Set for one shard of a sharded run: the run indexes that shard's files and records its
    /// part under `runs/<run id>/` instead of publishing (`quarry publish` merges the parts).
    pub shard: Option<ShardRun>,
}

impl RunOptions {
    /// Defaults for a source and destination.
    pub fn new(source: impl Into<String>, out: impl Into<String>, model_dir: PathBuf) -> Self {
        Self {
            source: source.into(),
            out: out.into(),
            source_options: SourceOptions::default(),
            out_store: StoreOptions::default(),
            model_dir,
            embed: EmbedOptions::default(),
            chunker: ChunkerConfig::default(),
            index: IndexOptions::default(),
            tags: Vec::new(),
            max_document_tokens: 500_000,
            summarizer: default_summarizer(),
            embed_group: None,
            progress: ProgressMode::Auto,
            report_path: None,
            recall_queries: Vec::new(),
            min_recall: None,
            reuse: true,
            publish: PublishMode::Delta,
            compact: CompactOptions::default(),
            after_embedding: None,
            segment_chunks: DEFAULT_SEGMENT_CHUNKS,
            rows_while_embedding: true,
            parser: Arc::new(AutoParser),
            shard: None,
        }
    }
}

impl RunOptions {
    /// How this run parses and chunks for `embedder`'s model (its tokenizer measures the
    /// chunks); documents are stamped `ingested_at`.
    pub(crate) fn chunk_settings(
        &self,
        embedder: &dyn Embedder,
        ingested_at: chrono::DateTime<chrono::Utc>,
    ) -> Result<ChunkSettings> {
        let chunker = TokenChunker::new(self.chunker, embedder.tokenizer().clone(), &embedder.info().sha256)?;
        Ok(ChunkSettings {
            parser: self.parser.clone(),
            chunker: Arc::new(chunker),
            tags: self.tags.clone(),
            max_document_tokens: self.max_document_tokens,
            summarizer: self.summarizer.clone(),
            ingested_at,
        })
    }
}

/// Loads the model from `options.model_dir` and runs.
pub async fn run(options: RunOptions) -> Result<RunReport> {
    options.index.validate()?;
    let embedder = load_model(&options).await?;
    run_with_embedder(options, embedder).await
}

/// What [`run`] would do with these options; nothing is fetched, embedded or written.
pub async fn plan(options: RunOptions) -> Result<RunPlan> {
    options.index.validate()?;
    let embedder = load_model(&options).await?;
    plan_run(&options, embedder).await
}

/// The run's model, loaded on a blocking thread.
async fn load_model(options: &RunOptions) -> Result<Arc<dyn Embedder>> {
    let model_dir = options.model_dir.clone();
    let embed_options = options.embed;
    tokio::task::spawn_blocking(move || -> Result<Arc<dyn Embedder>> {
        load_embedder(&ModelDir::open(&model_dir)?, embed_options)
    })
    .await
    .map_err(|e| IndexerError::Embed(format!("model loader panicked: {e}")))?
}

/// Runs with an already loaded embedder (tests and benchmarks load it once): prepares what the
/// run builds on ([`base::prepare_base`]), runs the stages ([`run_stages::run_stages`]) and
/// publishes ([`publish_run::publish_run`]).
pub async fn run_with_embedder(options: RunOptions, embedder: Arc<dyn Embedder>) -> Result<RunReport> {
    options.index.validate()?;
    let started = Instant::now();
    let ingested_at = chrono::Utc::now();
    crate::index::init_vector_kernels(&options.embed.device);
    let source: Arc<dyn Source> = open_source(&options.source, &options.source_options)?;
    let writer = SnapshotWriter::open(&options.out, &options.out_store)?;
    let settings = options.chunk_settings(embedder.as_ref(), ingested_at)?;
    let chunker = settings.chunker.clone();
    let parse_sig = settings.signature();
    let mut base = prepare_base(
        &options,
        source.as_ref(),
        embedder.as_ref(),
        &chunker.signature(),
        &parse_sig,
    )
    .await?;
    let stages = run_stages(&options, source.clone(), embedder.clone(), &writer, settings, &mut base).await?;
    let parts = RunParts {
        options: &options,
        source_uri: source.uri(),
        writer: &writer,
        embedder: &embedder,
        chunker: &chunker,
        parse_sig,
        started,
    };
    publish_run(parts, base, stages).await
}
