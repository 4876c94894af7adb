//! The `quarry` command line: wires subcommands to the library crates, nothing more.

mod allocator;
mod commands;
mod config_file;
mod openmp_waiting;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "quarry",
    version,
    about = "GPU-accelerated batch indexer and search appliance"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Index a folder or an S3 prefix into a published snapshot.
    Index(commands::index::IndexArgs),
    /// Show a snapshot's manifest and verify its checksums.
    Inspect(commands::inspect::InspectArgs),
    /// Embed JSONL texts from stdin: one {"embedding": [...]} line per {"text": ...} line.
    Embed(commands::embed::EmbedArgs),
    /// Search a snapshot: vector, keyword or hybrid, with filters.
    Search(commands::search::SearchArgs),
    /// Retrieval quality of a snapshot of a BEIR corpus: nDCG@10, recall, MRR per mode, ANN recall.
    Eval(commands::eval::EvalArgs),
    /// Serve collections over HTTP: search, the knowledge-layer API, the RAG contract.
    Serve(commands::serve::ServeArgs),
    /// Run a benchmark workload: indexing, search load, ANN recall-QPS, quality, peers.
    Bench(commands::bench::BenchArgs),
    /// Embedding tokens/s at full 256-token windows on a device and precision, against a roof.
    BenchEmbed(commands::bench_embed::BenchEmbedArgs),
    /// Vector kernels at scale: flat top-k QPS against the bandwidth and FP32 roofs, IVF build times.
    BenchKernels(commands::bench_kernels::BenchKernelsArgs),
    /// HNSW built by quarry's graph build (kNN lists on the GPU) against FAISS's own build: time, recall@10, QPS.
    BenchHnswBuild(commands::bench_hnsw_build::BenchHnswBuildArgs),
    /// Parse + chunk and model tokenization throughput on the CPU (what feeds the embedding device).
    BenchCpuStages(commands::bench_cpu_stages::BenchCpuStagesArgs),
    /// `quarry index` with seeded vectors in place of the model: every other stage's time and the run's peak memory at scale.
    BenchPipeline(commands::index::IndexArgs),
    /// Publish a sharded run (`index --shards N`) as one version once every shard has recorded its part.
    Publish(commands::publish::PublishArgs),
    /// Merge a snapshot's segments into one (stored embeddings, tombstoned rows dropped).
    Compact(commands::compact::CompactArgs),
    /// Remove old versions of a snapshot and the segments only they name.
    Gc(commands::gc::GcArgs),
    /// List a snapshot's versions: LATEST, earlier, pending, rolled back; files all there or not.
    Versions(commands::versions::VersionsArgs),
    /// Make an earlier version of a snapshot LATEST again (checked first; servers pick it up at their next poll).
    Rollback(commands::rollback::RollbackArgs),
    /// Write a seeded synthetic corpus (JSONL files of documents) for scale runs.
    GenCorpus(commands::gen_corpus::GenCorpusArgs),
    /// Print a shell completion script: `quarry completions bash > /etc/bash_completion.d/quarry`.
    Completions(commands::completions::CompletionsArgs),
    /// Print the man page (roff), or write one page per command into a folder.
    Man(commands::completions::ManArgs),
    /// Print the settings `serve` or `index` would run with and where each came from: `quarry config --print serve --config quarry.toml`.
    Config(commands::config::ConfigArgs),
    /// Parse the files sent on stdin and answer on stdout (what `index` and `serve` run their parsing in).
    #[command(hide = true)]
    ParseWorker,
}

fn main() -> std::process::ExitCode {
    let restart_failed = openmp_waiting::restart_with_passive_waiting();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("QUARRY_LOG").unwrap_or_else(|_| "info,tantivy=warn".into()),
        )
        .init();
    if let Some(error) = restart_failed {
        tracing::warn!(
            "could not start again with {}=passive ({error}): FAISS's OpenMP threads spin between their loops (set the variable to choose)",
            openmp_waiting::WAIT_POLICY
        );
    }
    // `serve --config FILE` and `index --config FILE`: the file's settings go in as flags
    // where neither a flag nor the environment set them.
    let argv = match config_file::with_settings_file(&Cli::command(), std::env::args_os().collect()) {
        Ok((argv, _)) => argv,
        Err(error) => {
            eprintln!("error: {error}");
            return std::process::ExitCode::from(2);
        }
    };
    let cli = Cli::from_arg_matches(&Cli::command().get_matches_from(argv)).unwrap_or_else(|e| e.exit());
    // Commands that run to their end; the server (and `bench`, which runs one) does not.
    // Those that start parse workers keep SIGPIPE ignored: a worker that died must fail its
    // file (the write to it fails), not end the run.
    if !matches!(
        cli.command,
        Command::Serve(_) | Command::Bench(_) | Command::ParseWorker
    ) {
        if !matches!(cli.command, Command::Index(_) | Command::BenchPipeline(_)) {
            end_quietly_when_stdout_closes();
        }
        allocator::keep_freed_memory();
    }
    let result = match cli.command {
        Command::Index(args) => commands::index::run(args),
        Command::BenchEmbed(args) => commands::bench_embed::run(args),
        Command::BenchKernels(args) => commands::bench_kernels::run(args),
        Command::BenchHnswBuild(args) => commands::bench_hnsw_build::run(args),
        Command::BenchCpuStages(args) => commands::bench_cpu_stages::run(args),
        Command::BenchPipeline(args) => commands::bench_pipeline::run(args),
        Command::GenCorpus(args) => commands::gen_corpus::run(args),
        Command::Gc(args) => commands::gc::run(args),
        Command::Publish(args) => commands::publish::run(args),
        Command::Compact(args) => commands::compact::run(args),
        Command::Versions(args) => commands::versions::run(args),
        Command::Rollback(args) => commands::rollback::run(args),
        Command::Inspect(args) => commands::inspect::run(args),
        Command::Embed(args) => commands::embed::run(args),
        Command::Search(args) => commands::search::run(args),
        Command::Eval(args) => commands::eval::run(args),
        Command::Serve(args) => commands::serve::run(args),
        Command::Bench(args) => commands::bench::run(args),
        Command::Completions(args) => commands::completions::completions(args, Cli::command()),
        Command::Man(args) => commands::completions::man(args, Cli::command()),
        Command::Config(args) => commands::config::run(args, Cli::command()),
        Command::ParseWorker => commands::parse_worker::run(),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// A command piped into a reader that stops early (`quarry inspect DIR | head -1`) ends as
/// Unix tools do, on SIGPIPE, instead of panicking on the failed write to stdout. Servers
/// keep ignoring SIGPIPE (sockets write with MSG_NOSIGNAL either way).
fn end_quietly_when_stdout_closes() {
    #[cfg(unix)]
    // SAFETY: restores the default disposition of one signal, before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
