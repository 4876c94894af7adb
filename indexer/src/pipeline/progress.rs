//! Progress of a run: indicatif bars per stage on a terminal, plain log lines otherwise, or
//! JSON lines for a scheduler to read.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProgressMode {
    /// Bars on a terminal, log lines otherwise.
    #[default]
    Auto,
    Bars,
    Log,
    /// One JSON object a line on stderr every [`JSON_INTERVAL`] and a last one (`"done":
    /// true`) when the run's stages end: `{"event": "progress", "elapsed_secs", "files",
    /// "fetched", "parsed", "chunks", "embedded", "failed", "warned", "done"}`.
    Json,
    Quiet,
}

/// How often [`ProgressMode::Json`] writes a line.
pub const JSON_INTERVAL: Duration = Duration::from_secs(5);

/// Counters the stages bump; a ticker thread renders them.
#[derive(Default)]
pub struct Counters {
    pub fetched: AtomicU64,
    pub parsed: AtomicU64,
    pub chunks: AtomicU64,
    pub embedded: AtomicU64,
    pub failed: AtomicU64,
    /// Documents indexed though read in part.
    pub warned: AtomicU64,
}

pub struct Progress {
    pub counters: Arc<Counters>,
    done: Arc<AtomicBool>,
    ticker: Option<std::thread::JoinHandle<()>>,
}

impl Progress {
    pub fn start(mode: ProgressMode, files: u64) -> Self {
        let counters = Arc::new(Counters::default());
        let done = Arc::new(AtomicBool::new(false));
        let mode = match mode {
            ProgressMode::Auto if std::io::stderr().is_terminal() => ProgressMode::Bars,
            ProgressMode::Auto => ProgressMode::Log,
            other => other,
        };
        let ticker = (mode != ProgressMode::Quiet).then(|| {
            let (counters, done) = (counters.clone(), done.clone());
            std::thread::spawn(move || match mode {
                ProgressMode::Bars => render_bars(&counters, &done, files),
                ProgressMode::Json => render_json(&counters, &done, files),
                _ => render_log(&counters, &done, files),
            })
        });
        Self { counters, done, ticker }
    }

    pub fn finish(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        self.done.store(true, Ordering::SeqCst);
        if let Some(ticker) = self.ticker.take() {
            let _ = ticker.join();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop();
    }
}

fn load(counter: &AtomicU64) -> u64 {
    counter.load(Ordering::Relaxed)
}

fn render_bars(counters: &Counters, done: &AtomicBool, files: u64) {
    let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
    let style = ProgressStyle::with_template("{prefix:>12} [{bar:30}] {pos}/{len} {per_sec}")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
    let counter_style = ProgressStyle::with_template("{prefix:>12} {pos} {msg} {per_sec}")
        .unwrap_or_else(|_| ProgressStyle::default_spinner());
    let fetch = multi.add(ProgressBar::new(files).with_style(style.clone()).with_prefix("fetch"));
    let parse = multi.add(ProgressBar::new(files).with_style(style).with_prefix("parse+chunk"));
    let embed = multi.add(ProgressBar::new(0).with_style(counter_style).with_prefix("embed"));
    while !done.load(Ordering::SeqCst) {
        fetch.set_position(load(&counters.fetched));
        parse.set_position(load(&counters.parsed));
        embed.set_length(load(&counters.chunks));
        embed.set_position(load(&counters.embedded));
        embed.set_message(format!("of {} chunks", load(&counters.chunks)));
        std::thread::sleep(Duration::from_millis(150));
    }
    for bar in [&fetch, &parse, &embed] {
        bar.finish();
    }
}

fn render_log(counters: &Counters, done: &AtomicBool, files: u64) {
    let mut last = std::time::Instant::now();
    while !done.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(100));
        if last.elapsed() >= Duration::from_secs(5) {
            last = std::time::Instant::now();
            tracing::info!(
                "progress: fetched {}/{files}, parsed {}/{files}, chunks {}, embedded {}, failed {}, read in part {}",
                load(&counters.fetched),
                load(&counters.parsed),
                load(&counters.chunks),
                load(&counters.embedded),
                load(&counters.failed),
                load(&counters.warned)
            );
        }
    }
}

fn render_json(counters: &Counters, done: &AtomicBool, files: u64) {
    let started = std::time::Instant::now();
    let line = |finished: bool| {
        let line = serde_json::json!({
            "event": "progress",
            "elapsed_secs": (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
            "files": files,
            "fetched": load(&counters.fetched),
            "parsed": load(&counters.parsed),
            "chunks": load(&counters.chunks),
            "embedded": load(&counters.embedded),
            "failed": load(&counters.failed),
            "warned": load(&counters.warned),
            "done": finished,
        });
        eprintln!("{line}");
    };
    let mut last = std::time::Instant::now();
    while !done.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(100));
        if last.elapsed() >= JSON_INTERVAL {
            last = std::time::Instant::now();
            line(false);
        }
    }
    line(true);
}
