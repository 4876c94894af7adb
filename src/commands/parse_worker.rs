//! Where files are parsed: the options `quarry index` and `quarry serve` share, and the
//! hidden `quarry parse-worker` command their worker processes run (see
//! [`quarry_indexer::parse::IsolatedParser`]).

use std::sync::Arc;
use std::time::Duration;

use quarry_indexer::parse::{run_parse_worker, AutoParser, IsolatedParser, ParseLimits, Parser, WorkerCommand};

use super::at_least_one;

/// How files are parsed.
#[derive(clap::Args, Debug, Clone)]
pub struct ParseArgs {
    /// Memory one file may take to parse, in MiB: each parse worker process is held to it,
    /// and a file that needs more (a compression bomb) fails alone (each file of a ZIP
    /// archive and each message of a mailbox is a file of its own).
    #[arg(long, env = "QUARRY_PARSE_MEMORY_MB", default_value_t = 2048, value_parser = at_least_one::<u64>)]
    pub parse_memory_mb: u64,
    /// Seconds one file may take to parse before it fails alone (each file of a ZIP archive
    /// and each message of a mailbox is a file of its own).
    #[arg(long, env = "QUARRY_PARSE_TIMEOUT_SECS", default_value_t = 120, value_parser = at_least_one::<u64>)]
    pub parse_timeout_secs: u64,
    /// Parse in this process, not in worker processes: no process start, but then a hostile
    /// file (a parser's stack overflow, a compression bomb) can take the whole process down.
    #[arg(long, env = "QUARRY_PARSE_IN_PROCESS")]
    pub parse_in_process: bool,
}

impl ParseArgs {
    /// The parser these options ask for; a worker is started at once, so a worker that
    /// cannot start is told now rather than file by file.
    pub fn parser(&self) -> anyhow::Result<Arc<dyn Parser>> {
        if self.parse_in_process {
            return Ok(Arc::new(AutoParser));
        }
        let program = std::env::current_exe()
            .map_err(|e| anyhow::anyhow!("the parse workers' program (this executable): {e}"))?;
        let limits = ParseLimits {
            memory_mib: self.parse_memory_mb,
            timeout: Duration::from_secs(self.parse_timeout_secs),
        };
        let parser = IsolatedParser::new(
            WorkerCommand {
                program,
                args: vec!["parse-worker".into()],
            },
            limits,
        );
        parser.check().map_err(|e| {
            anyhow::anyhow!("could not start a parse worker: {e} (--parse-in-process parses without one)")
        })?;
        Ok(Arc::new(parser))
    }
}

/// `quarry parse-worker`: parses the files sent on stdin, answering on stdout, until stdin ends.
pub fn run() -> anyhow::Result<std::process::ExitCode> {
    run_parse_worker()?;
    Ok(std::process::ExitCode::SUCCESS)
}
