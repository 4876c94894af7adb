//! `quarry index SOURCE --out SNAPSHOT`: the batch run.

use std::process::ExitCode;

use quarry_indexer::chunk::ChunkerConfig;
use quarry_indexer::error::IndexerError;
use quarry_indexer::index::{IndexKind, IndexOptions};
use quarry_indexer::pipeline::{
    publish_shards, run as run_pipeline, ProgressMode, PublishMode, RunOptions, RunPlan, RunReport,
};
use quarry_indexer::source::SourceOptions;
use quarry_indexer::summary::Summaries;
use quarry_server::llm_summaries::summarizer_for;

use super::{at_least_one, runtime, LlmArgs, ModelArgs, StoreArgs};

#[derive(clap::Args, Debug)]
pub struct IndexArgs {
    /// A settings file (TOML): each key a flag's long name, at the top level or under
    /// [serve] / [index]; flags and their environment variables win over it (deploy/quarry.example.toml).
    #[arg(long, env = "QUARRY_CONFIG")]
    pub config: Option<std::path::PathBuf>,
    /// Folder, file:// URI, s3://bucket/prefix or memory://name.
    #[arg(env = "QUARRY_SOURCE")]
    pub source: String,
    /// Snapshot root to publish into (folder or s3://bucket/prefix).
    #[arg(long, env = "QUARRY_OUT")]
    pub out: String,
    /// Only files whose path (relative to SOURCE) matches one of these globs.
    #[arg(long, env = "QUARRY_INCLUDE", value_delimiter = ',')]
    pub include: Vec<String>,
    /// Skip files whose relative path matches one of these globs.
    #[arg(long, env = "QUARRY_EXCLUDE", value_delimiter = ',')]
    pub exclude: Vec<String>,
    /// Tags added to every document.
    #[arg(long = "tag", env = "QUARRY_TAGS", value_delimiter = ',')]
    pub tags: Vec<String>,
    /// auto | flat | hnsw | ivf-flat | ivf-pq (auto: flat below 20k chunks, hnsw below 2M, else ivf-flat).
    #[arg(long = "index", env = "QUARRY_INDEX", default_value = "auto")]
    pub index_kind: IndexKind,
    #[arg(long, env = "QUARRY_HNSW_M")]
    pub hnsw_m: Option<usize>,
    #[arg(long, env = "QUARRY_EF_CONSTRUCTION")]
    pub ef_construction: Option<usize>,
    #[arg(long, env = "QUARRY_EF_SEARCH")]
    pub ef_search: Option<usize>,
    #[arg(long, env = "QUARRY_NLIST")]
    pub nlist: Option<usize>,
    #[arg(long, env = "QUARRY_NPROBE")]
    pub nprobe: Option<usize>,
    /// Sub-quantizers for ivf-pq (must divide the dimension).
    #[arg(long, env = "QUARRY_PQ_M")]
    pub pq_m: Option<usize>,
    /// Vectors sampled to train IVF.
    #[arg(long, env = "QUARRY_TRAIN_SAMPLE")]
    pub train_sample: Option<usize>,
    /// Who trains ivf-flat centroids and assigns the rows to lists: faiss, kernels (quarry's
    /// k-means; on the GPU in a cuda build), or auto: kernels when they run on a GPU, else faiss.
    #[arg(long, env = "QUARRY_IVF_TRAINER", default_value = "auto")]
    pub ivf_trainer: quarry_indexer::index::IvfTrainer,
    /// Who builds hnsw links: faiss (row by row on the CPU), graph (kNN lists from quarry's
    /// kernels, on the GPU in a cuda build, pruned as CAGRA does, written as FAISS's HNSW
    /// file), or auto: graph when the kernels run on a GPU, else faiss.
    #[arg(long, env = "QUARRY_HNSW_BUILDER", default_value = "auto")]
    pub hnsw_builder: quarry_indexer::index::HnswBuilder,
    /// Chunk window in model tokens, special tokens included.
    #[arg(long, env = "QUARRY_CHUNK_TOKENS", default_value_t = 256)]
    pub chunk_tokens: usize,
    /// Tokens shared by consecutive chunks.
    #[arg(long, env = "QUARRY_CHUNK_OVERLAP", default_value_t = 32)]
    pub chunk_overlap: usize,
    /// Fetches in flight.
    #[arg(long, env = "QUARRY_CONCURRENCY", default_value_t = 16, value_parser = at_least_one::<usize>)]
    pub concurrency: usize,
    #[command(flatten)]
    pub parse: super::parse_worker::ParseArgs,
    /// Follow symlinks in a local source folder that lead out of it (by default they are
    /// skipped, and the report says so: whoever can write into the folder could otherwise
    /// index any file this process can read).
    #[arg(long, env = "QUARRY_FOLLOW_SYMLINKS")]
    pub follow_symlinks: bool,
    /// Files larger than this many MiB fail with "file too large", but for JSONL files,
    /// MediaWiki dumps, Stack Exchange tables, mailboxes and CSV/TSV tables, which are read as
    /// a stream past it (a batch of records at a time).
    #[arg(long, env = "QUARRY_MAX_FILE_MB", default_value_t = 256, value_parser = at_least_one::<u64>)]
    pub max_file_mb: u64,
    /// Documents with more tokens fail with "Document too large".
    #[arg(long, env = "QUARRY_MAX_DOCUMENT_TOKENS", default_value_t = 500_000, value_parser = at_least_one::<usize>)]
    pub max_document_tokens: usize,
    /// How each document's layers (seed 003's L0 abstract and L1 overview, stored with its
    /// record) are made: extractive (its most central sentences; no model) | llm (written by
    /// --llm-url, two calls a document; the extractive ones where it fails, made again by
    /// the next run) | off
    #[arg(long, env = "QUARRY_SUMMARIES", default_value = "extractive")]
    pub summaries: Summaries,
    #[command(flatten)]
    pub llm: LlmArgs,
    /// auto | bars | log | json (a JSON object a line on stderr every 5 s, and a last one with
    /// "done": true) | quiet
    #[arg(long, env = "QUARRY_PROGRESS", default_value = "auto", value_parser = parse_progress)]
    pub progress: ProgressMode,
    /// Also write the run report (JSON) to this file.
    #[arg(long, env = "QUARRY_REPORT")]
    pub report: Option<std::path::PathBuf>,
    /// Refuse to publish when the ANN recall@10 against exact search is below this (0..1).
    #[arg(long, env = "QUARRY_MIN_RECALL")]
    pub min_recall: Option<f64>,
    /// Queries for the recall check: JSONL with a "text" field (BEIR queries.jsonl) or plain
    /// lines; default: a seeded sample of the indexed chunks.
    #[arg(long, env = "QUARRY_RECALL_QUERIES")]
    pub recall_queries: Option<std::path::PathBuf>,
    /// on: reuse the previous version's embeddings of documents whose content, chunker and
    /// model are unchanged (an incremental run); off: embed every document again.
    #[arg(long, env = "QUARRY_REUSE", default_value = "on", value_parser = parse_switch, action = clap::ArgAction::Set)]
    pub reuse: bool,
    /// delta: build on the previous version (new segments for the changed documents,
    /// tombstones for replaced and deleted ones, unchanged files not fetched; segments are
    /// merged once they pile up); full: write every document into new segments (stored
    /// embeddings still reused unless --reuse off).
    #[arg(long, env = "QUARRY_PUBLISH", default_value = "delta")]
    pub publish: PublishMode,
    /// A run writes a segment each time its embedded documents (a delta's: those that changed
    /// or arrived) reach this many chunks, while embedding the next, which bounds its memory;
    /// fewer give one segment. A compaction after a delta merges into segments of this size.
    #[arg(long, env = "QUARRY_SEGMENT_CHUNKS", default_value_t = quarry_indexer::pipeline::DEFAULT_SEGMENT_CHUNKS, value_parser = at_least_one::<usize>)]
    pub segment_chunks: usize,
    /// Write a segment's row files (chunks.parquet, documents.parquet) and build its keyword
    /// index only once the segment is cut, not while the run embeds (by default the rows of
    /// documents whose place in it is settled, nothing sorting before them still to come, are
    /// written and keyword-indexed in parts as they come). The files are the same.
    #[arg(long, env = "QUARRY_ROW_FILES_AT_CUT")]
    pub row_files_at_cut: bool,
    /// Print the run report as JSON on stdout instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Say what the run would do (files new, changed, unchanged and gone; delta or full) from
    /// the listing and the previous version's outlines; fetch, embed and publish nothing.
    #[arg(long)]
    pub plan: bool,
    #[command(flatten)]
    pub sharding: super::shard_args::ShardArgs,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub store: StoreArgs,
}

fn parse_progress(value: &str) -> Result<ProgressMode, String> {
    Ok(match value {
        "auto" => ProgressMode::Auto,
        "bars" => ProgressMode::Bars,
        "log" => ProgressMode::Log,
        "json" => ProgressMode::Json,
        "quiet" => ProgressMode::Quiet,
        other => {
            return Err(format!(
                "unknown progress mode `{other}` (auto, bars, log, json, quiet)"
            ))
        }
    })
}

fn parse_switch(value: &str) -> Result<bool, String> {
    match value {
        "on" | "true" | "1" | "yes" => Ok(true),
        "off" | "false" | "0" | "no" => Ok(false),
        other => Err(format!("expected on or off, got `{other}`")),
    }
}

/// Query texts from JSONL ({"text": ...}) or plain lines.
fn read_queries(path: &std::path::Path) -> anyhow::Result<Vec<String>> {
    use anyhow::Context;
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let queries: Vec<String> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| match serde_json::from_str::<serde_json::Value>(line) {
            Ok(value) => value["text"]
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| line.to_string()),
            Err(_) => line.to_string(),
        })
        .collect();
    anyhow::ensure!(!queries.is_empty(), "{} holds no queries", path.display());
    Ok(queries)
}

/// The run `args` ask for.
/// The run's options; `runtime` is where an LLM summarizer's calls run.
pub fn run_options(args: IndexArgs, runtime: &tokio::runtime::Handle) -> anyhow::Result<RunOptions> {
    let mut options = RunOptions::new(&args.source, &args.out, args.model.model_dir()?);
    options.source_options = SourceOptions {
        include: args.include,
        exclude: args.exclude,
        concurrency: args.concurrency,
        max_file_bytes: args.max_file_mb * 1024 * 1024,
        store: args.store.options(),
        follow_symlinks: args.follow_symlinks,
    };
    options.out_store = args.store.options();
    options.embed = args.model.embed_options();
    options.chunker = ChunkerConfig {
        max_tokens: args.chunk_tokens,
        overlap_tokens: args.chunk_overlap,
    };
    options.index = IndexOptions {
        kind: args.index_kind,
        hnsw_m: args.hnsw_m,
        ef_construction: args.ef_construction,
        ef_search: args.ef_search,
        nlist: args.nlist,
        nprobe: args.nprobe,
        pq_m: args.pq_m,
        train_sample: args.train_sample,
        ivf_trainer: args.ivf_trainer,
        hnsw_builder: args.hnsw_builder,
    };
    options.tags = args.tags;
    options.max_document_tokens = args.max_document_tokens;
    options.summarizer = summarizer_for(args.summaries, args.llm.settings().as_ref(), runtime.clone())?;
    options.progress = args.progress;
    options.report_path = args.report;
    options.reuse = args.reuse;
    options.publish = args.publish;
    options.segment_chunks = args.segment_chunks;
    options.rows_while_embedding = !args.row_files_at_cut;
    if let Some(min) = args.min_recall {
        anyhow::ensure!(
            (0.0..=1.0).contains(&min),
            "--min-recall must be between 0 and 1, got {min}"
        );
    }
    options.min_recall = args.min_recall;
    if let Some(path) = &args.recall_queries {
        options.recall_queries = read_queries(path)?;
    }
    options.after_embedding = Some(crate::allocator::hand_back_freed_memory);
    options.parser = args.parse.parser()?;
    options.shard = args.sharding.shard_run(&|name| std::env::var(name).ok())?;
    Ok(options)
}

/// The run report on stdout: JSON, or the table.
pub fn print_report(report: &RunReport, json: bool) -> anyhow::Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(report)?);
    } else {
        print!("{}", report.render_table());
    }
    Ok(())
}

pub fn run(args: IndexArgs) -> anyhow::Result<ExitCode> {
    let json = args.json;
    let runtime = runtime()?;
    if args.plan {
        let plan = runtime.block_on(quarry_indexer::pipeline::plan(run_options(args, runtime.handle())?))?;
        print_plan(&plan, json)?;
        return Ok(ExitCode::SUCCESS);
    }
    let publish_when_complete = args.sharding.publish_when_complete;
    let options = run_options(args, runtime.handle())?;
    let (out, store) = (options.out.clone(), options.out_store.clone());
    let report = runtime.block_on(run_pipeline(options))?;
    print_report(&report, json)?;
    if let (Some(shard), true) = (&report.shard, publish_when_complete) {
        let published = runtime.block_on(publish_shards(&out, &store, &shard.run_id, shard.shards));
        match published {
            Ok(published) => super::publish::print_publish(&published, json)?,
            Err(IndexerError::ShardsMissing { missing, .. }) => eprintln!(
                "shard {} of run {} recorded; the run is published by the last of its shards (waiting for shard {missing})",
                shard.shard, shard.run_id
            ),
            Err(e) => return Err(e.into()),
        }
    }
    Ok(exit_code(&report))
}

/// Exit status after a run that published: 0, or [`PUBLISHED_BUT`] when something failed
/// after LATEST moved (a run that publishes nothing exits 1 with its error).
fn exit_code(report: &RunReport) -> ExitCode {
    match &report.failed_after_publishing {
        None => ExitCode::SUCCESS,
        Some(failed) => {
            eprintln!(
                "error: published {}, but {failed}",
                report.version.as_deref().unwrap_or("a version")
            );
            ExitCode::from(PUBLISHED_BUT)
        }
    }
}

/// `quarry index`'s exit status when the version was published (LATEST moved) but a later
/// step failed, such as storing the run report.
pub const PUBLISHED_BUT: u8 = 3;

fn print_plan(plan: &RunPlan, json: bool) -> anyhow::Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(plan)?);
        return Ok(());
    }
    let publish = match plan.publish {
        "first" => "a first version".to_string(),
        kind => format!(
            "a {kind} version on {}",
            plan.previous_version.as_deref().unwrap_or("?")
        ),
    };
    println!(
        "plan       {} -> {}: would publish {publish} (nothing fetched, embedded or written now)",
        plan.source, plan.out
    );
    println!(
        "listed     {} files ({} skipped)",
        plan.files_listed, plan.files_skipped
    );
    println!("unchanged  {} files (not fetched)", plan.files_unchanged);
    for (label, files) in [
        ("new", &plan.files_new),
        ("changed", &plan.files_changed),
        ("gone", &plan.files_gone),
    ] {
        let more = if files.count > files.examples.len() {
            format!(", and {} more", files.count - files.examples.len())
        } else {
            String::new()
        };
        let extra = if label == "gone" {
            format!(" ({} documents leave the new version)", plan.documents_gone)
        } else {
            String::new()
        };
        println!(
            "{label:<10} {} files{extra}{}{more}",
            files.count,
            if files.examples.is_empty() {
                String::new()
            } else {
                format!(": {}", files.examples.join(", "))
            }
        );
    }
    for note in &plan.notes {
        println!("note       {note}");
    }
    Ok(())
}
