//! A real quarry server on an ephemeral loopback port, for the HTTP tests.
#![allow(dead_code)]

use std::path::Path;
use std::time::Duration;

use quarry_server::app::{serve, start, AppState, ServeOptions};

pub(crate) use crate::common;

pub struct TestServer {
    /// Requests to it (`server.post(..)` and the others reach it through `Deref`).
    pub api: ApiClient,
    pub state: AppState,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    handle: Option<tokio::task::JoinHandle<()>>,
}

/// An HTTP client of a server at `base`; one can be made on any runtime (a hook of a batch run
/// that uploads while the run works).
pub struct ApiClient {
    pub base: String,
    pub client: reqwest::Client,
}

impl std::ops::Deref for TestServer {
    type Target = ApiClient;
    fn deref(&self) -> &ApiClient {
        &self.api
    }
}

/// Options for a test server over `data_dir`.
pub fn options(data_dir: &Path) -> ServeOptions {
    let mut options = ServeOptions::new("127.0.0.1:0".parse().unwrap(), data_dir.to_path_buf());
    options.poll_interval = None;
    options
}

impl TestServer {
    pub async fn start(options: ServeOptions) -> Self {
        let state = start(options, common::embedder()).await.expect("server starts");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let serving = state.clone();
        let handle = tokio::spawn(async move {
            serve(
                serving,
                listener,
                async move {
                    let _ = stopped.await;
                },
                Duration::from_secs(30),
            )
            .await
            .unwrap();
        });
        Self {
            api: ApiClient::new(base),
            state,
            stop: Some(stop),
            handle: Some(handle),
        }
    }

    /// A server on `data` with the collection `collection` holding `files` (one upload).
    pub async fn start_with_texts(data: &Path, collection: &str, files: &[(&str, &str)]) -> Self {
        let server = Self::start(options(data)).await;
        server.create_collections(&[collection]).await;
        server.upload_texts_completed(collection, files).await;
        server
    }

    /// Graceful shutdown: stops accepting, lets running jobs finish.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(handle) = self.handle.take() {
            handle.await.unwrap();
        }
    }
}

impl ApiClient {
    pub fn new(base: String) -> Self {
        Self {
            base,
            client: reqwest::Client::new(),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub async fn get(&self, path: &str) -> (u16, serde_json::Value) {
        let response = self.client.get(self.url(path)).send().await.unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(serde_json::Value::Null))
    }

    pub async fn post(&self, path: &str, body: serde_json::Value) -> (u16, serde_json::Value) {
        let response = self.client.post(self.url(path)).json(&body).send().await.unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(serde_json::Value::Null))
    }

    pub async fn delete(&self, path: &str, body: Option<serde_json::Value>) -> (u16, serde_json::Value) {
        let mut request = self.client.delete(self.url(path));
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(serde_json::Value::Null))
    }

    /// Posts a multipart form to `path`.
    pub async fn post_form(&self, path: &str, form: reqwest::multipart::Form) -> (u16, serde_json::Value) {
        let response = self.client.post(self.url(path)).multipart(form).send().await.unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(serde_json::Value::Null))
    }

    /// Uploads files (name, bytes) to a collection.
    pub async fn upload(&self, collection: &str, files: &[(&str, Vec<u8>)]) -> (u16, serde_json::Value) {
        self.upload_with_key(collection, files, None).await
    }

    /// [`Self::upload`] with an `Idempotency-Key`.
    pub async fn upload_with_key(
        &self,
        collection: &str,
        files: &[(&str, Vec<u8>)],
        key: Option<&str>,
    ) -> (u16, serde_json::Value) {
        let mut form = reqwest::multipart::Form::new();
        for (name, bytes) in files {
            form = form.part(
                "files",
                reqwest::multipart::Part::bytes(bytes.clone()).file_name(name.to_string()),
            );
        }
        self.upload_form(collection, form, key).await
    }

    /// Uploads one file whose part declares `content_type` (`text/plain; charset=...`).
    pub async fn upload_typed(
        &self,
        collection: &str,
        name: &str,
        bytes: Vec<u8>,
        content_type: &str,
    ) -> (u16, serde_json::Value) {
        let part = reqwest::multipart::Part::bytes(bytes)
            .file_name(name.to_string())
            .mime_str(content_type)
            .unwrap();
        self.upload_form(collection, reqwest::multipart::Form::new().part("files", part), None)
            .await
    }

    async fn upload_form(
        &self,
        collection: &str,
        form: reqwest::multipart::Form,
        key: Option<&str>,
    ) -> (u16, serde_json::Value) {
        let mut request = self
            .client
            .post(self.url(&format!("/v1/collections/{collection}/documents")))
            .multipart(form);
        if let Some(key) = key {
            request = request.header("Idempotency-Key", key);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(serde_json::Value::Null))
    }

    /// Uploads one file to a collection and waits for its job, which must complete.
    pub async fn upload_completed(&self, collection: &str, name: &str, bytes: Vec<u8>) -> serde_json::Value {
        self.upload_all_completed(collection, &[(name, bytes)]).await
    }

    /// The result of a search of `collection` with `body`, which must answer 200.
    pub async fn search_ok(&self, collection: &str, body: serde_json::Value) -> serde_json::Value {
        let (status, result) = self.post(&format!("/v1/collections/{collection}/search"), body).await;
        assert_eq!(status, 200, "{result}");
        result
    }

    /// Creates each of the collections `names`.
    pub async fn create_collections(&self, names: &[&str]) {
        for name in names {
            let (status, created) = self.post("/v1/collections", serde_json::json!({ "name": name })).await;
            assert_eq!(status, 201, "{name}: {created}");
        }
    }

    /// Uploads text files as one job (one segment) and waits until it has completed.
    pub async fn upload_texts_completed(&self, collection: &str, files: &[(&str, &str)]) -> serde_json::Value {
        let files: Vec<(&str, Vec<u8>)> = files
            .iter()
            .map(|(name, text)| (*name, text.as_bytes().to_vec()))
            .collect();
        self.upload_all_completed(collection, &files).await
    }

    /// Uploads files as one job and waits until it has completed.
    pub async fn upload_all_completed(&self, collection: &str, files: &[(&str, Vec<u8>)]) -> serde_json::Value {
        let (status, submitted) = self.upload(collection, files).await;
        assert_eq!(status, 202, "{submitted}");
        let job = self.wait_job(submitted["job_id"].as_str().unwrap()).await;
        assert_eq!(job["status"], "completed", "{job}");
        job
    }

    /// Polls a job until it is terminal.
    pub async fn wait_job(&self, job_id: &str) -> serde_json::Value {
        for _ in 0..600 {
            let (status, job) = self.get(&format!("/v1/documents/{job_id}/status")).await;
            assert_eq!(status, 200, "{job}");
            if job["is_terminal"] == true {
                return job;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("job {job_id} never finished");
    }

    /// The value of one /metrics sample: the line that starts with `sample` (a metric's name
    /// and its labels, as Prometheus writes them); 0 when there is none yet.
    pub async fn metric(&self, sample: &str) -> u64 {
        let metrics = self
            .client
            .get(self.url("/metrics"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        metrics
            .lines()
            .find(|l| l.starts_with(sample))
            .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
            .unwrap_or(0)
    }

    /// `quarry_ingested_chunks_total` from /metrics: (chunks embedded, chunks that reused a stored vector).
    pub async fn ingested_chunks(&self) -> (u64, u64) {
        (
            self.metric("quarry_ingested_chunks_total{vector=\"embedded\"}").await,
            self.metric("quarry_ingested_chunks_total{vector=\"reused\"}").await,
        )
    }

    /// The chunks of `collection` that a keyword search for `query` lists (up to 50, within
    /// `filters` when not null), each of which a vector search for its own text must find
    /// first, at cosine ~1.
    pub async fn assert_each_chunk_finds_itself(
        &self,
        collection: &str,
        query: &str,
        filters: serde_json::Value,
    ) -> Vec<String> {
        let search = |query: &str, top_k: usize, mode: &str| {
            let mut body = serde_json::json!({ "query": query, "top_k": top_k, "mode": mode });
            if !filters.is_null() {
                body["filters"] = filters.clone();
            }
            body
        };
        let path = format!("/v1/collections/{collection}/search");
        let (_, listing) = self.post(&path, search(query, 50, "keyword")).await;
        let chunks: Vec<String> = listing["chunks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["content"].as_str().unwrap().to_string())
            .collect();
        for chunk in &chunks {
            let (_, found) = self.post(&path, search(chunk, 1, "vector")).await;
            let top = &found["chunks"][0];
            assert_eq!(top["content"].as_str().unwrap(), chunk);
            assert!(top["score"].as_f64().unwrap() > 0.999, "{top}");
        }
        chunks
    }
}

/// Serves `app` (a stand-in for another service, such as an LLM endpoint) on a free loopback
/// port; its base URL with `/v1` (`http://127.0.0.1:PORT/v1`).
pub async fn serve_stand_in(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    url
}

/// The file names of a result's chunks, best first.
pub fn ranked_files(result: &serde_json::Value) -> Vec<&str> {
    result["chunks"]
        .as_array()
        .unwrap_or_else(|| panic!("no chunks: {result}"))
        .iter()
        .map(|c| c["file_name"].as_str().unwrap())
        .collect()
}

/// The file names of a search result's chunks, sorted, each once.
pub fn result_files(result: &serde_json::Value) -> Vec<String> {
    let mut names: Vec<String> = ranked_files(result).into_iter().map(str::to_string).collect();
    names.sort();
    names.dedup();
    names
}

/// A paragraph of six sentences on `topic` that no other topic's paragraph shares.
pub fn paragraph(topic: &str) -> String {
    (0..6)
        .map(|i| format!("Sentence {i} of the paragraph on {topic} holds facts no other paragraph has. "))
        .collect()
}

/// Indexes a folder into a snapshot root with the batch pipeline.
pub async fn batch_index(src: &Path, out: &Path) -> String {
    batch_index_calling(src, out, None).await.version.unwrap()
}

/// [`batch_index`], calling `after_embedding` between embedding and publishing; its report.
pub async fn batch_index_calling(
    src: &Path,
    out: &Path,
    after_embedding: Option<fn()>,
) -> quarry_indexer::pipeline::RunReport {
    let mut run =
        quarry_indexer::pipeline::RunOptions::new(src.to_str().unwrap(), out.to_str().unwrap(), common::model_dir());
    run.progress = quarry_indexer::pipeline::ProgressMode::Quiet;
    run.after_embedding = after_embedding;
    quarry_indexer::pipeline::run_with_embedder(run, common::embedder())
        .await
        .unwrap()
}

/// The words `metadata.highlights` marks in every result (their text), sorted.
pub fn marked_words(results: &serde_json::Value) -> Vec<String> {
    let mut words = Vec::new();
    for chunk in results["chunks"].as_array().unwrap() {
        let content: Vec<char> = chunk["content"].as_str().unwrap().chars().collect();
        for range in chunk["metadata"]["highlights"].as_array().unwrap() {
            let (from, to) = (range[0].as_u64().unwrap() as usize, range[1].as_u64().unwrap() as usize);
            words.push(content[from..to].iter().collect());
        }
    }
    words.sort();
    words
}
