//! Helpers shared by the integration tests: the real model, ../shared test data, and a
//! real S3 endpoint (moto_server) on a loopback port.
#![allow(dead_code)]

pub mod pdf_files;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use quarry_indexer::embed::{BatchPolicy, BertEmbedder, EmbedOptions, Embedder, EncoderTuning, ModelDir, Precision};

/// The workspace's root: the crate's own folder for the `quarry` crate's tests, the folder
/// above it for the member crates' (indexer, server).
pub fn workspace_root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    if manifest.join("Cargo.lock").is_file() {
        manifest
    } else {
        manifest.parent().unwrap().to_path_buf()
    }
}

/// The `shared/` folder beside the project checkout ($QUARRY_SHARED_DIR where a copy
/// travels elsewhere, as to a GPU machine).
pub fn shared_dir() -> PathBuf {
    let dir = std::env::var_os("QUARRY_SHARED_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().parent().unwrap().join("shared"));
    assert!(dir.is_dir(), "test data folder {} is missing", dir.display());
    dir
}

pub fn model_dir() -> PathBuf {
    let dir = std::env::var_os("QUARRY_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("models/all-MiniLM-L6-v2"));
    assert!(
        dir.join("model.safetensors").is_file(),
        "model missing at {}: run scripts/fetch-model.sh",
        dir.display()
    );
    dir
}

/// The CPU embedder at the default precision (auto).
pub fn load_embedder(batch: BatchPolicy) -> BertEmbedder {
    load_embedder_at(batch, Precision::Auto)
}

pub fn load_embedder_at(batch: BatchPolicy, precision: Precision) -> BertEmbedder {
    load_embedder_with(batch, precision, None)
}

/// The encoder tuning that `scripts/gpu-check.sh` asks for with the variables `quarry` reads
/// for `--fused-steps`, `--attention-kernel`, `--fused-pooling` and `--gpu-unpadded-rows`
/// (QUARRY_FUSED_STEPS 0 | 1, QUARRY_ATTENTION_KERNEL, QUARRY_FUSED_POOLING 0 | 1,
/// QUARRY_GPU_UNPADDED_ROWS 0 | 1), so its golden step runs a test
/// binary in each mode as it runs `quarry embed`.
pub fn tuning_from_env() -> EncoderTuning {
    let switch = |name: &str| match std::env::var(name).as_deref() {
        Ok("1") | Ok("on") => Some(true),
        Ok("0") | Ok("off") => Some(false),
        _ => None,
    };
    EncoderTuning {
        fused_steps: switch("QUARRY_FUSED_STEPS"),
        attention_kernel: std::env::var("QUARRY_ATTENTION_KERNEL")
            .ok()
            .map(|kernel| kernel.parse().expect("QUARRY_ATTENTION_KERNEL"))
            .unwrap_or(quarry_indexer::embed::encoder_ops::AttentionKernel::Auto),
        fused_pooling: switch("QUARRY_FUSED_POOLING").unwrap_or(true),
        gpu_gelu: std::env::var("QUARRY_GPU_GELU")
            .ok()
            .map(|gelu| gelu.parse().expect("QUARRY_GPU_GELU"))
            .unwrap_or(quarry_indexer::embed::GpuGelu::Epilogue),
        gpu_unpadded_rows: switch("QUARRY_GPU_UNPADDED_ROWS").unwrap_or(false),
    }
}

/// `cpu_lanes`: batches of one call run at once on the CPU (None: the default).
pub fn load_embedder_with(batch: BatchPolicy, precision: Precision, cpu_lanes: Option<usize>) -> BertEmbedder {
    BertEmbedder::load(
        &ModelDir::open(&model_dir()).unwrap(),
        EmbedOptions {
            batch: Some(batch),
            precision,
            cpu_lanes,
            ..Default::default()
        },
    )
    .unwrap()
}

/// One CPU embedder per test binary.
pub fn embedder() -> Arc<dyn Embedder> {
    static EMBEDDER: OnceLock<Arc<BertEmbedder>> = OnceLock::new();
    EMBEDDER
        .get_or_init(|| Arc::new(load_embedder(BatchPolicy::default())))
        .clone()
}

/// The first `n` lines of msmarco-5k's corpus.jsonl.
pub fn msmarco_slice(n: usize) -> String {
    let corpus = std::fs::read_to_string(shared_dir().join("datasets/msmarco-5k/corpus.jsonl")).unwrap();
    corpus.lines().take(n).map(|l| format!("{l}\n")).collect()
}

/// Publishes `text` as the document `uri` (`upload://…`, named `name`) plus `tombstones` as the
/// next version of `out`, on top of LATEST, as a server's upload does: one small segment.
pub async fn publish_online(
    out: &str,
    store: &quarry_indexer::store::StoreOptions,
    uri: &str,
    name: &str,
    text: &str,
    tombstones: Vec<String>,
) -> quarry_indexer::snapshot::Manifest {
    use quarry_indexer::chunk::{Chunker, ChunkerConfig, TokenChunker};
    use quarry_indexer::pipeline::{
        embed_documents, parse_and_chunk, publish_next_version, ChunkSettings, VersionChange,
    };
    use quarry_indexer::snapshot::{ChunkerManifest, SnapshotReader, SnapshotWriter};
    let embedder = embedder();
    let base = SnapshotReader::open(out, store)
        .await
        .ok()
        .map(|r| r.manifest().clone());
    let chunker = Arc::new(
        TokenChunker::new(
            ChunkerConfig::default(),
            embedder.tokenizer().clone(),
            &embedder.info().sha256,
        )
        .unwrap(),
    );
    let settings = ChunkSettings {
        parser: std::sync::Arc::new(quarry_indexer::parse::AutoParser),
        chunker: chunker.clone(),
        tags: Vec::new(),
        max_document_tokens: 500_000,
        summarizer: quarry_indexer::summary::default_summarizer(),
        ingested_at: chrono::Utc::now(),
    };
    let raw = quarry_indexer::source::RawDocument {
        uri: uri.into(),
        relative_path: name.into(),
        size: text.len() as u64,
        bytes: text.to_string().into_bytes().into(),
        etag: None,
        source: "upload".into(),
        content_type: None,
    };
    let (documents, failures) = parse_and_chunk(&raw, &settings);
    assert!(failures.is_empty(), "{failures:?}");
    let embedded_chunks = documents.iter().map(|d| d.chunks.len()).sum();
    let documents = embed_documents(documents, embedder.as_ref(), 256, &|_| {}).unwrap();
    let writer = SnapshotWriter::open(out, store).unwrap();
    let chunker_manifest = ChunkerManifest {
        config: chunker.config(),
        sig: chunker.signature(),
    };
    publish_next_version(
        &writer,
        base.as_ref(),
        VersionChange {
            documents,
            tombstones,
            embedded_chunks,
        },
        embedder.as_ref(),
        chunker_manifest,
        &Default::default(),
    )
    .await
    .unwrap()
}

/// xorshift64*: a tiny seeded generator, so generated test inputs are the same on every run.
pub struct Rng(pub u64);

impl Rng {
    #[allow(clippy::should_implement_trait)] // an endless generator, not an iterator
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number below `n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(x, y)| *x as f64 * *y as f64).sum();
    let na: f64 = a.iter().map(|x| (*x as f64).powi(2)).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|x| (*x as f64).powi(2)).sum::<f64>().sqrt();
    dot / (na * nb)
}

/// A moto_server on a free loopback port, stopped on drop, with one bucket created.
pub struct S3Server {
    child: Option<Child>,
    pub endpoint: String,
    pub bucket: String,
}

fn moto_binary() -> PathBuf {
    let venv = workspace_root().join(".venv/bin/moto_server");
    assert!(
        venv.is_file(),
        "moto_server missing at {}: run scripts/python-tools.sh (scripts/test.sh does)",
        venv.display()
    );
    venv
}

fn http(addr: &str, request: &str) -> std::io::Result<String> {
    let mut stream = TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    stream.write_all(request.as_bytes())?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    Ok(response)
}

impl S3Server {
    pub fn start(bucket: &str) -> Self {
        std::env::set_var("AWS_ACCESS_KEY_ID", "testing");
        std::env::set_var("AWS_SECRET_ACCESS_KEY", "testing");
        std::env::set_var("AWS_REGION", "us-east-1");
        // A port picked free can be taken by another test's server before ours binds it (ours
        // then exits, and requests would reach the other one until its test stops it): start
        // again on another port until the listening socket is our child's own.
        for _ in 0..5 {
            let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
            let mut child = Command::new(moto_binary())
                .args(["-H", "127.0.0.1", "-p", &port.to_string()])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("start moto_server");
            let addr = format!("127.0.0.1:{port}");
            let deadline = Instant::now() + Duration::from_secs(60);
            let mut ours = false;
            while child.try_wait().unwrap().is_none() && Instant::now() < deadline {
                if listens_on(child.id(), port) {
                    ours = true;
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            if !ours {
                let _ = child.kill();
                let _ = child.wait();
                continue;
            }
            while TcpStream::connect(&addr).is_err() {
                assert!(Instant::now() < deadline, "moto_server did not accept on {addr}");
                std::thread::sleep(Duration::from_millis(100));
            }
            let response = http(
                &addr,
                &format!("PUT /{bucket} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"),
            )
            .unwrap();
            assert!(response.starts_with("HTTP/1.1 200"), "create bucket: {response}");
            return Self {
                child: Some(child),
                endpoint: format!("http://{addr}"),
                bucket: bucket.to_string(),
            };
        }
        panic!("moto_server did not start on a port of its own in 5 tries");
    }
}

/// Whether process `pid` holds a socket listening on loopback `port` (Linux: its open file
/// descriptors' socket inodes, against /proc/net/tcp's listening sockets).
fn listens_on(pid: u32, port: u16) -> bool {
    let Ok(table) = std::fs::read_to_string("/proc/net/tcp") else {
        return false;
    };
    let local = format!("0100007F:{port:04X}");
    let inodes: Vec<String> = table
        .lines()
        .skip(1)
        .map(|line| line.split_whitespace().collect::<Vec<_>>())
        .filter(|fields| fields.len() > 9 && fields[1] == local && fields[3] == "0A")
        .map(|fields| fields[9].to_string())
        .collect();
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    fds.flatten()
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .any(|target| {
            let target = target.to_string_lossy();
            inodes.iter().any(|inode| target == format!("socket:[{inode}]"))
        })
}

impl Drop for S3Server {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
