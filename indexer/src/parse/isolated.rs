//! Parsing in worker processes, so that no file can take the indexer or the server down.
//!
//! The third-party parsers ([`super::Format::needs_isolation`]: PDF, DOCX, PPTX, XLSX and HWPX (zip and XML),
//! HTML's tree builder; the other formats are parsed in process) recurse on nesting
//! a file controls, inflate what it compresses and can loop for as long as it likes; a Rust
//! stack overflow or a failed allocation aborts the whole process, and a thread cannot be
//! stopped. So each file is parsed by a long-lived worker process (the `quarry` binary's
//! hidden `parse-worker` command), watched while it parses: a worker whose resident memory
//! passes the limit, or that overruns the deadline, is killed; one that aborts ends. It is
//! replaced, and only its file fails, with the reason told from how the worker ended. (The
//! memory is watched from outside because an rlimit inside fails allocations in ways each
//! allocator handles differently: mimalloc, the binary's, slowed to a crawl.) Workers are
//! kept between files (one per parsing thread at most), so a file costs two pipe writes,
//! not a process start.

use std::collections::VecDeque;
use std::io::{BufReader, BufWriter, Read};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::worker_protocol::{read_reply, read_request, write_reply, write_request, Reply};
use super::{detect_format, read_here, AutoParser, Format, ParseError, Parsed, Parser};
use crate::source::RawDocument;

/// The worker's stderr kept to tell why it ended (its last bytes).
const STDERR_TAIL_BYTES: usize = 8 << 10;

/// How often a parsing worker's memory is looked at (memory grows at a few GB/s at most, so
/// a worker overshoots the limit by a few hundred MB at worst before it is stopped).
pub const WATCH_INTERVAL: Duration = Duration::from_millis(25);

/// How much one file may cost to parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParseLimits {
    /// Resident memory a worker may hold, in MiB (checked every [`WATCH_INTERVAL`]).
    pub memory_mib: u64,
    /// Time one file may take.
    pub timeout: Duration,
}

impl Default for ParseLimits {
    fn default() -> Self {
        Self {
            memory_mib: 2048,
            timeout: Duration::from_secs(120),
        }
    }
}

/// How to start a worker: a program and its arguments (the worker reads requests on stdin).
#[derive(Debug, Clone)]
pub struct WorkerCommand {
    pub program: PathBuf,
    pub args: Vec<String>,
}

/// A [`Parser`] that parses every file in a worker process (see the module docs).
pub struct IsolatedParser {
    command: WorkerCommand,
    limits: ParseLimits,
    idle: Mutex<Vec<Worker>>,
}

impl IsolatedParser {
    pub fn new(command: WorkerCommand, limits: ParseLimits) -> Self {
        Self {
            command,
            limits,
            idle: Mutex::new(Vec::new()),
        }
    }

    /// Starts a worker now, so a command that cannot start fails at once rather than file by file.
    pub fn check(&self) -> std::io::Result<()> {
        let worker = Worker::start(&self.command)?;
        self.idle.lock().expect("idle workers lock").push(worker);
        Ok(())
    }

    fn take_worker(&self) -> std::io::Result<Worker> {
        match self.idle.lock().expect("idle workers lock").pop() {
            Some(worker) => Ok(worker),
            None => Worker::start(&self.command),
        }
    }
}

impl std::fmt::Debug for IsolatedParser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IsolatedParser")
            .field("command", &self.command)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl Parser for IsolatedParser {
    fn parse(&self, raw: &RawDocument) -> Result<Parsed, ParseError> {
        if raw.bytes.is_empty() {
            return AutoParser.parse(raw);
        }
        self.parse_as(detect_format(&raw.relative_path, &raw.bytes)?, raw)
    }

    /// Formats quarry reads itself are read here; an archive or a mailbox is split here and
    /// each of its files or messages parsed as a file of its own (a worker's for those that
    /// need one, each under the deadline and memory limit); the others go to a worker.
    fn parse_as(&self, format: Format, raw: &RawDocument) -> Result<Parsed, ParseError> {
        if !format.needs_isolation() {
            return read_here(format, raw, self);
        }
        let mut worker = self
            .take_worker()
            .map_err(|e| ParseError::ParserUnavailable(format!("{}: {e}", self.command.program.display())))?;
        match worker.parse(raw, format, &self.limits) {
            Ok(reply) => {
                self.idle.lock().expect("idle workers lock").push(worker);
                reply.into_result()
            }
            // The worker is gone (or killed): its file fails, and a new one serves the next.
            Err(ended) => Err(ended),
        }
    }
}

struct Worker {
    child: Child,
    /// None once the worker is being let go (dropping it ends the worker's input).
    stdin: Option<BufWriter<ChildStdin>>,
    replies: crossbeam_channel::Receiver<std::io::Result<Reply>>,
    stderr_tail: Arc<Mutex<VecDeque<u8>>>,
    /// Closed (disconnected) when the stderr reader has read the worker's last bytes.
    stderr_read: crossbeam_channel::Receiver<()>,
}

/// How long an ended worker's last stderr bytes are waited for (the pipe closes when it
/// exits; a worker has no children to hold it open).
const STDERR_DRAIN: Duration = Duration::from_millis(500);

impl Worker {
    fn start(command: &WorkerCommand) -> std::io::Result<Self> {
        let mut child = Command::new(&command.program)
            .args(&command.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let stdin = BufWriter::new(child.stdin.take().expect("piped stdin"));
        let mut stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let mut stderr = child.stderr.take().expect("piped stderr");
        let (sender, replies) = crossbeam_channel::bounded(1);
        std::thread::Builder::new()
            .name("parse-worker-out".into())
            .spawn(move || loop {
                let reply = match read_reply(&mut stdout) {
                    Ok(Some(reply)) => Ok(reply),
                    Ok(None) => Err(std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        "the worker closed its output",
                    )),
                    Err(e) => Err(e),
                };
                let ended = reply.is_err();
                if sender.send(reply).is_err() || ended {
                    return;
                }
            })?;
        let stderr_tail = Arc::new(Mutex::new(VecDeque::new()));
        let tail = stderr_tail.clone();
        let (stderr_reading, stderr_read) = crossbeam_channel::bounded::<()>(0);
        std::thread::Builder::new()
            .name("parse-worker-err".into())
            .spawn(move || {
                // Dropped at the end of the worker's stderr: its receiver then sees it closed.
                let _reading = stderr_reading;
                let mut buffer = [0u8; 4096];
                while let Ok(n @ 1..) = stderr.read(&mut buffer) {
                    let mut tail = tail.lock().expect("stderr tail lock");
                    tail.extend(&buffer[..n]);
                    let excess = tail.len().saturating_sub(STDERR_TAIL_BYTES);
                    tail.drain(..excess);
                }
            })?;
        Ok(Self {
            child,
            stdin: Some(stdin),
            replies,
            stderr_tail,
            stderr_read,
        })
    }

    /// The worker's reply for `raw` read as `format`, or why the worker ended without one (it is then dead).
    fn parse(&mut self, raw: &RawDocument, format: Format, limits: &ParseLimits) -> Result<Reply, ParseError> {
        let sent = match self.stdin.as_mut() {
            Some(stdin) => write_request(stdin, raw, format),
            None => Err(std::io::ErrorKind::BrokenPipe.into()),
        };
        if sent.is_err() {
            // The worker died before it read the whole file; its end says why.
            return Err(self.ended(limits));
        }
        let deadline = std::time::Instant::now() + limits.timeout;
        loop {
            match self.replies.recv_timeout(WATCH_INTERVAL) {
                Ok(Ok(reply)) => return Ok(reply),
                Ok(Err(_)) | Err(crossbeam_channel::RecvTimeoutError::Disconnected) => return Err(self.ended(limits)),
                Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
            }
            let failure = if resident_bytes(self.child.id()).is_some_and(|bytes| bytes > limits.memory_mib << 20) {
                ParseError::TooMuchMemory(limits.memory_mib)
            } else if std::time::Instant::now() >= deadline {
                ParseError::TooSlow(limits.timeout.as_secs().max(1))
            } else {
                continue;
            };
            let _ = self.child.kill();
            let _ = self.child.wait();
            return Err(failure);
        }
    }

    /// Why the worker ended, once it has.
    fn ended(&mut self, limits: &ParseLimits) -> ParseError {
        // Its output is closed: it has ended or is ending; a worker that closed its output
        // and lives on is stopped.
        let status = match wait_briefly(&mut self.child) {
            Some(status) => status,
            None => {
                let _ = self.child.kill();
                self.child.wait().ok().unwrap_or_default()
            }
        };
        // Its stderr is read to the end (the reader lets go of its sender there).
        let _ = self.stderr_read.recv_timeout(STDERR_DRAIN);
        let tail = String::from_utf8_lossy(
            &self
                .stderr_tail
                .lock()
                .expect("stderr tail lock")
                .iter()
                .copied()
                .collect::<Vec<u8>>(),
        )
        .into_owned();
        why_ended(&status_words(status), &tail, limits)
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // An idle worker ends at the end of its input; one that does not is stopped.
        drop(self.stdin.take());
        if wait_briefly(&mut self.child).is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Resident memory of process `pid` (Linux: /proc/PID/statm), None where it cannot be read.
fn resident_bytes(pid: u32) -> Option<u64> {
    let statm = std::fs::read_to_string(format!("/proc/{pid}/statm")).ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf reads a constant of the system.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * u64::try_from(page).unwrap_or(4096))
}

fn wait_briefly(child: &mut Child) -> Option<std::process::ExitStatus> {
    for _ in 0..100 {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    None
}

fn status_words(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit status {code}"),
        (_, Some(signal)) => format!("signal {signal}"),
        _ => "an unknown status".to_string(),
    }
}

/// The file's failure, told from how its worker ended and the last words it wrote.
fn why_ended(status: &str, stderr_tail: &str, limits: &ParseLimits) -> ParseError {
    if stderr_tail.contains("overflowed its stack") {
        ParseError::TooDeep
    } else if stderr_tail.contains("memory allocation of")
        || stderr_tail.contains("capacity overflow")
        || status == "signal 9"
    {
        ParseError::TooMuchMemory(limits.memory_mib)
    } else {
        let last_line = stderr_tail
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .trim();
        let said: String = last_line.chars().take(200).collect();
        ParseError::ParserCrashed(if said.is_empty() {
            status.to_string()
        } else {
            format!("{status}: {said}")
        })
    }
}

/// The worker process's loop: parses each file it is sent as the format it is sent with and answers,
/// until its input ends. Nothing else may write to its stdout.
pub fn run_parse_worker() -> std::io::Result<()> {
    let mut input = BufReader::new(std::io::stdin().lock());
    let mut output = BufWriter::new(std::io::stdout().lock());
    while let Some((raw, format)) = read_request(&mut input)? {
        write_reply(&mut output, &Reply::of(AutoParser.parse_as(format, &raw)))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workers_end_names_the_cause() {
        let limits = ParseLimits {
            memory_mib: 512,
            timeout: Duration::from_secs(5),
        };
        let overflow = "\nthread 'main' has overflowed its stack\nfatal runtime error: stack overflow, aborting\n";
        assert_eq!(why_ended("signal 6", overflow, &limits), ParseError::TooDeep);
        assert_eq!(
            why_ended("signal 6", "memory allocation of 1073741824 bytes failed\n", &limits),
            ParseError::TooMuchMemory(512)
        );
        assert_eq!(why_ended("signal 9", "", &limits), ParseError::TooMuchMemory(512));
        assert_eq!(
            why_ended("signal 11", "", &limits),
            ParseError::ParserCrashed("signal 11".into())
        );
        assert_eq!(
            why_ended("exit status 3", "boom\n\n", &limits),
            ParseError::ParserCrashed("exit status 3: boom".into())
        );
    }

    /// A parser of `script` run by sh as the worker.
    fn shell_worker(script: &str, limits: ParseLimits) -> IsolatedParser {
        IsolatedParser::new(
            WorkerCommand {
                program: "sh".into(),
                args: vec!["-c".into(), script.into()],
            },
            limits,
        )
    }

    fn html() -> RawDocument {
        crate::parse::raw_for_test("page.html", "<html><body><p>hello</p></body></html>")
    }

    #[test]
    fn an_archives_files_and_a_mailboxs_messages_each_have_a_workers_deadline_to_themselves() {
        use std::io::Write;
        let limits = ParseLimits {
            memory_mib: 512,
            timeout: Duration::from_millis(300),
        };
        // A worker that never answers: each file sent to one fails at its own deadline.
        let hangs = shell_worker("cat > /dev/null", limits);
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        for (name, bytes) in [
            ("a.html", "<p>one</p>"),
            ("notes.txt", "Read where it is read."),
            ("b.html", "<p>two</p>"),
            ("c.html", "<p>three</p>"),
        ] {
            zip.start_file(name, zip::write::SimpleFileOptions::default()).unwrap();
            zip.write_all(bytes.as_bytes()).unwrap();
        }
        let archive = zip.finish().unwrap().into_inner();
        let parsed = hangs.parse(&crate::parse::raw_for_test("bundle.zip", archive)).unwrap();
        assert_eq!(parsed.documents.len(), 1);
        assert_eq!(parsed.documents[0].blocks[0].text, "Read where it is read.");
        let failed: Vec<&str> = parsed.failures.iter().map(|f| f.reason.as_str()).collect();
        assert_eq!(
            failed,
            [
                "a.html: parsing took longer than 1 s; the file is skipped",
                "b.html: parsing took longer than 1 s; the file is skipped",
                "c.html: parsing took longer than 1 s; the file is skipped",
            ]
        );
        let mailbox = "From a@example.com Tue Dec  1 10:00:00 2026\nFrom: a@example.com\n\nOne.\n\n\
                       From b@example.com Tue Dec  1 11:00:00 2026\nFrom: b@example.com\n\nTwo.\n";
        let parsed = hangs.parse(&crate::parse::raw_for_test("Inbox.mbox", mailbox)).unwrap();
        assert!(parsed.documents.is_empty());
        let failed: Vec<(&str, &str)> = parsed
            .failures
            .iter()
            .map(|f| (f.uri.as_str(), f.reason.as_str()))
            .collect();
        assert_eq!(
            failed,
            [
                (
                    "memory://test/Inbox.mbox#message=1",
                    "message 1: parsing took longer than 1 s; the file is skipped"
                ),
                (
                    "memory://test/Inbox.mbox#message=2",
                    "message 2: parsing took longer than 1 s; the file is skipped"
                ),
            ]
        );
    }

    #[test]
    fn a_worker_that_hangs_aborts_or_grows_fails_its_file_alone() {
        let limits = ParseLimits {
            memory_mib: 64,
            timeout: Duration::from_millis(400),
        };
        // Never answers: stopped at the deadline.
        let started = std::time::Instant::now();
        assert_eq!(
            shell_worker("cat > /dev/null", limits).parse(&html()).unwrap_err(),
            ParseError::TooSlow(1)
        );
        assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
        // Markdown goes to a worker too: its HTML blocks are read by html5ever, whose time
        // grows with the square of a page's depth.
        let readme = crate::parse::raw_for_test("README.md", "# Pier\n\n<div><div>deep</div></div>\n");
        assert_eq!(
            shell_worker("cat > /dev/null", limits).parse(&readme).unwrap_err(),
            ParseError::TooSlow(1)
        );
        // Ends with Rust's stack overflow words.
        let overflow = shell_worker(
            "echo \"thread 'main' has overflowed its stack\" >&2; kill -ABRT $$",
            limits,
        );
        assert_eq!(overflow.parse(&html()).unwrap_err(), ParseError::TooDeep);
        // Grows past the memory limit: stopped by the watch (python's bytearray touches its pages).
        let limits = ParseLimits {
            memory_mib: 64,
            timeout: Duration::from_secs(30),
        };
        let grows = shell_worker(
            "exec python3 -c 'import time; x = bytearray(400 << 20); time.sleep(30)'",
            limits,
        );
        let started = std::time::Instant::now();
        assert_eq!(grows.parse(&html()).unwrap_err(), ParseError::TooMuchMemory(64));
        assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
        // Formats quarry reads itself never reach a worker.
        let text = shell_worker("exit 3", limits)
            .parse(&crate::parse::raw_for_test("notes.txt", "plain words"))
            .unwrap();
        assert_eq!(text.documents.len(), 1);
        // A program that cannot start fails each file with its name.
        let missing = IsolatedParser::new(
            WorkerCommand {
                program: "/nonexistent/quarry".into(),
                args: Vec::new(),
            },
            limits,
        );
        assert!(missing.check().is_err());
        assert!(
            matches!(missing.parse(&html()).unwrap_err(), ParseError::ParserUnavailable(m) if m.contains("/nonexistent/quarry"))
        );
    }
}
