//! A real quarry server on an ephemeral loopback port, for the HTTP tests.
#![allow(dead_code)]

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use quarry_server::app::{serve, start, AppState, ServeOptions};

#[path = "../../indexer/tests/common/mod.rs"]
pub mod common;

pub struct TestServer {
    pub base: String,
    pub state: Arc<AppState>,
    pub client: reqwest::Client,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    handle: Option<tokio::task::JoinHandle<()>>,
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
            serve(serving, listener, async move { let _ = stopped.await; }, Duration::from_secs(30)).await.unwrap();
        });
        Self { base, state, client: reqwest::Client::new(), stop: Some(stop), handle: Some(handle) }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
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

    /// Uploads files (name, bytes) to a collection.
    pub async fn upload(&self, collection: &str, files: &[(&str, Vec<u8>)]) -> (u16, serde_json::Value) {
        let mut form = reqwest::multipart::Form::new();
        for (name, bytes) in files {
            form = form.part("files", reqwest::multipart::Part::bytes(bytes.clone()).file_name(name.to_string()));
        }
        let response = self.client.post(self.url(&format!("/v1/collections/{collection}/documents"))).multipart(form).send().await.unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(serde_json::Value::Null))
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
}

/// Indexes a folder into a snapshot root with the batch pipeline.
pub async fn batch_index(src: &Path, out: &Path) -> String {
    let mut run = quarry_indexer::pipeline::RunOptions::new(src.to_str().unwrap(), out.to_str().unwrap(), common::model_dir());
    run.progress = quarry_indexer::pipeline::ProgressMode::Quiet;
    quarry_indexer::pipeline::run_with_embedder(run, common::embedder()).await.unwrap().version.unwrap()
}
