//! The dashboard in a real browser: Debian's headless `chromium` driven through
//! `chromium-driver` (the W3C WebDriver protocol, spoken here over HTTP) against a live server.
//! A user creates a collection, uploads two files (one broken) with a tag and an owner, watches them to
//! ready and to failed with the seed's message, reads the collection's abstract, searches and
//! sees the query's words marked,
//! pages to more results, reads a misspelt query with its corrections and searches it as typed or corrected, deletes the broken file through the confirmation, uploads a PDF one
//! of whose pages cannot be read and sees it marked as read in part, asks for more like a
//! result and gets the other documents' chunks, and serves an earlier
//! version again. A failing step saves a screenshot under
//! `target/dashboard-screenshots/`. scripts/browser-tools.sh installs the browser; where it
//! cannot be installed the test says so and does nothing else.

use crate::http_common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use http_common::{options, TestServer};
use serde_json::{json, Value};

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
/// The key WebDriver names an element by.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// A chromedriver process and the browser it started.
struct Browser {
    http: reqwest::Client,
    /// The browser's base URL on chromedriver (the W3C WebDriver path of the browser it started).
    browser: String,
    driver: Child,
    shots: PathBuf,
}

impl Browser {
    async fn start() -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let driver = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let base = format!("http://127.0.0.1:{port}");
        let http = reqwest::Client::new();
        let started = Instant::now();
        while http.get(format!("{base}/status")).send().await.is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "chromedriver did not answer"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let capabilities = json!({ "capabilities": { "alwaysMatch": {
            "browserName": "chrome",
            "unhandledPromptBehavior": "ignore",
            "goog:chromeOptions": {
                "binary": CHROMIUM,
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,1600"]
            }
        } } });
        // W3C WebDriver's "New Session" command (POST /session): the protocol names the path;
        // the browser's commands then go to /session/{its id}.
        let answer: Value = http
            .post(format!("{base}/session"))
            .json(&capabilities)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let id = answer["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("chromedriver started no browser: {answer}"))
            .to_string();
        let shots = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/dashboard-screenshots");
        Self {
            http,
            browser: format!("{base}/session/{id}"),
            driver,
            shots,
        }
    }

    async fn call(&self, method: reqwest::Method, path: &str, body: Value) -> Value {
        let request = self.http.request(method.clone(), format!("{}{path}", self.browser));
        let request = match method {
            reqwest::Method::GET | reqwest::Method::DELETE => request,
            _ => request.json(&body),
        };
        let answer: Value = request.send().await.unwrap().json().await.unwrap();
        answer["value"].clone()
    }

    async fn goto(&self, url: &str) {
        self.call(reqwest::Method::POST, "/url", json!({ "url": url })).await;
    }

    /// The first element matching `css`, if any.
    async fn find(&self, css: &str) -> Option<String> {
        let found = self
            .call(
                reqwest::Method::POST,
                "/element",
                json!({ "using": "css selector", "value": css }),
            )
            .await;
        found[ELEMENT].as_str().map(str::to_string)
    }

    /// A command on an element that must succeed: a click on an element the page has since
    /// replaced answers "stale element reference", which would otherwise pass unseen.
    async fn act(&self, element: &str, what: &str, body: Value) {
        let answer = self
            .call(reqwest::Method::POST, &format!("/element/{element}/{what}"), body)
            .await;
        if let Some(error) = answer.get("error") {
            panic!("{what} on an element failed: {error}: {}", answer["message"]);
        }
    }

    async fn click(&self, element: &str) {
        self.act(element, "click", json!({})).await;
    }

    async fn type_into(&self, element: &str, text: &str) {
        self.act(element, "clear", json!({})).await;
        self.act(element, "value", json!({ "text": text })).await;
    }

    /// Runs `script` in the page (its `return` value comes back).
    async fn run(&self, script: &str) -> Value {
        self.call(
            reqwest::Method::POST,
            "/execute/sync",
            json!({ "script": script, "args": [] }),
        )
        .await
    }

    /// Clicks the button `find` returns and accepts the confirmation dialog it opens. The page
    /// redraws its tables as it refreshes them, so a button found just before a redraw may be
    /// gone when clicked (no dialog): it is found and clicked again, for up to 20 s.
    async fn click_and_confirm(&self, step: &str, find: &str) {
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(20) {
            let button = self.wait_for(step, find).await;
            self.click(button[ELEMENT].as_str().unwrap()).await;
            for _ in 0..10 {
                if self
                    .call(reqwest::Method::GET, "/alert/text", json!({}))
                    .await
                    .is_string()
                {
                    let answer = self.call(reqwest::Method::POST, "/alert/accept", json!({})).await;
                    assert!(answer.is_null(), "the confirmation could not be accepted: {answer}");
                    return;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
        panic!("{step}: clicking it opened no confirmation in 20 s");
    }

    /// Waits for `script` to return something truthy; on timeout saves a screenshot named
    /// after `step` and fails with the page's state.
    async fn wait_for(&self, step: &str, script: &str) -> Value {
        let started = Instant::now();
        loop {
            let value = self.run(script).await;
            let truthy = match &value {
                Value::Null | Value::Bool(false) => false,
                Value::String(s) => !s.is_empty(),
                Value::Number(n) => n.as_f64() != Some(0.0),
                _ => true,
            };
            if truthy {
                return value;
            }
            if started.elapsed() > Duration::from_secs(60) || value.get("error").is_some() {
                let shot = self.screenshot(step).await;
                let page = self
                    .run("return document.body ? document.body.innerText : document.documentElement.outerHTML")
                    .await;
                panic!("step '{step}' did not happen in 60 s (screenshot {}; last answer {value}); the page shows:\n{page}", shot.display());
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    async fn screenshot(&self, step: &str) -> PathBuf {
        use base64::Engine;
        let png = self.call(reqwest::Method::GET, "/screenshot", Value::Null).await;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(png.as_str().unwrap_or_default())
            .unwrap_or_default();
        std::fs::create_dir_all(&self.shots).unwrap();
        let path = self.shots.join(format!("{}.png", step.replace(' ', "-")));
        std::fs::write(&path, bytes).unwrap();
        path
    }

    async fn quit(mut self) {
        self.call(reqwest::Method::DELETE, "", Value::Null).await;
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// Three sections that each speak of the moon, so a search finds several chunks.
fn tides_markdown() -> String {
    let section = |title: &str| {
        let sentences: String = (0..40)
            .map(|i| format!("Sentence {i} on {title}: the moon pulls the sea and the tide follows it. "))
            .collect();
        format!("## {title}\n\n{sentences}\n\n")
    };
    format!(
        "# Tides\n\n{}{}{}",
        section("Spring tides"),
        section("Neap tides"),
        section("Tidal bores")
    )
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path.display().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_user_works_the_dashboard_in_a_real_browser() {
    if !Path::new(CHROMIUM).exists() || !Path::new(CHROMEDRIVER).exists() {
        eprintln!(
            "SKIPPED: {CHROMIUM} or {CHROMEDRIVER} is missing and could not be installed (scripts/browser-tools.sh installs Debian's chromium and chromium-driver)"
        );
        return;
    }
    let data = tempfile::tempdir().unwrap();
    let files = tempfile::tempdir().unwrap();
    let server = TestServer::start(options(data.path())).await;
    let browser = Browser::start().await;
    browser.goto(&server.url("/dashboard")).await;
    browser
        .wait_for(
            "page loaded",
            "return document.getElementById('new-name') !== null && document.readyState === 'complete'",
        )
        .await;

    // A collection, created from the side bar.
    let name = browser.find("#new-name").await.expect("the new-collection field");
    browser.type_into(&name, "browser\u{E007}").await;
    browser
        .wait_for(
            "collection created",
            "const h = document.querySelector('[data-name]'); return h && h.textContent === 'browser'",
        )
        .await;

    // Two files with a tag; one is no PDF.
    let good = write(files.path(), "tides.md", tides_markdown().as_bytes());
    let broken = write(files.path(), "broken.pdf", b"%PDF-1.7 this is not really a PDF");
    let input = browser.find("[data-files]").await.expect("the file input");
    browser
        .call(
            reqwest::Method::POST,
            &format!("/element/{input}/value"),
            json!({ "text": format!("{good}\n{broken}") }),
        )
        .await;
    let tags = browser.find("[data-tags]").await.unwrap();
    browser.type_into(&tags, "ocean").await;
    let owner = browser.find("[data-user-id]").await.unwrap();
    browser.type_into(&owner, "marie").await;
    browser.click(&browser.find("[data-upload]").await.unwrap()).await;
    let jobs = browser
        .wait_for(
            "files ready and failed",
            "const t = document.querySelector('[data-jobs]').innerText; return /Ready/.test(t) && /File appears corrupted/.test(t) ? t : null",
        )
        .await;
    assert!(jobs.as_str().unwrap().contains("tides.md"), "{jobs}");
    browser
        .wait_for(
            "documents listed with their tag and owner",
            "const row = [...document.querySelectorAll('[data-documents] tr')].find(r => r.innerText.includes('tides.md')); const t = document.querySelector('[data-documents]').innerText; return row && /ocean/.test(row.innerText) && /marie/.test(row.innerText) && /broken\\.pdf/.test(t)",
        )
        .await;

    // The collection's own abstract, from its one document's, its overview on hover.
    let about = browser
        .wait_for(
            "the collection's abstract",
            "const a = document.querySelector('[data-about]'); return a && !a.hidden && /moon/.test(a.textContent) ? [a.textContent, a.title] : null",
        )
        .await;
    assert!(about[0].as_str().unwrap().starts_with("About: Sentence "), "{about}");
    assert!(about[1].as_str().unwrap().contains("tide"), "{about}");

    // A search with its words marked, one result a page, then the next page.
    let top_k = browser.find("[data-top-k]").await.unwrap();
    browser.type_into(&top_k, "1").await;
    let query = browser.find("[data-query]").await.unwrap();
    browser.type_into(&query, "moon tide\u{E007}").await;
    let marked = browser
        .wait_for(
            "results marked",
            "const m = [...document.querySelectorAll('[data-results] mark')].map(e => e.textContent.toLowerCase()); return m.length ? m : null",
        )
        .await;
    assert!(
        marked
            .as_array()
            .unwrap()
            .iter()
            .all(|m| ["moon", "tide", "tides"].contains(&m.as_str().unwrap())),
        "only the query's words (as the keyword lane stems them) are marked: {marked}"
    );
    browser
        .click(&browser.find("[data-more]").await.expect("a More results button"))
        .await;
    browser
        .wait_for(
            "second page",
            "return document.querySelectorAll('[data-results] .result').length >= 2",
        )
        .await;
    // A misspelt query, read with the words the document writes (typo tolerance): "Including
    // results for" them, the corrected words marked; "Search only for" the query as typed
    // finds no word, and offers "Did you mean"; a click on the suggestion searches it.
    let query = browser.find("[data-query]").await.unwrap();
    browser.type_into(&query, "mooon tdie\u{E007}").await;
    let offered = browser
        .wait_for(
            "results for the corrected words",
            "const s = document.querySelector('[data-suggestion]'); const marked = [...document.querySelectorAll('[data-results] mark')].map(m => m.textContent.toLowerCase()); return s && marked.length ? [s.textContent, marked] : null",
        )
        .await;
    assert!(
        offered[0]
            .as_str()
            .unwrap()
            .starts_with("Including results for moon tide"),
        "{offered}"
    );
    assert!(
        offered[1]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| ["moon", "tide", "tides"].contains(&m.as_str().unwrap())),
        "{offered}"
    );
    browser
        .click(&browser.find("[data-typed]").await.expect("the query as typed"))
        .await;
    let offered = browser
        .wait_for(
            "the query searched as typed",
            "const s = document.querySelector('[data-suggestion]'); return s && s.textContent.startsWith('Did you mean') && !document.querySelector('[data-results] mark') && !document.querySelector('[data-typed]') ? document.querySelector('[data-suggested]').textContent : null",
        )
        .await;
    assert_eq!(offered, "moon tide");
    browser
        .click(&browser.find("[data-suggested]").await.expect("the suggestion"))
        .await;
    browser
        .wait_for(
            "the suggestion searched",
            "const q = document.querySelector('[data-query]').value; const marked = document.querySelectorAll('[data-results] mark').length; return q === 'moon tide' && marked > 0 && !document.querySelector('[data-suggestion]')",
        )
        .await;

    // The broken file deleted through the confirmation.
    let delete_broken = "const row = [...document.querySelectorAll('[data-documents] tr')].find(r => r.innerText.includes('broken.pdf')); return row ? row.querySelector('button.danger') : null";
    browser.click_and_confirm("a delete button", delete_broken).await;
    browser
        .wait_for(
            "broken file gone",
            "const t = document.querySelector('[data-documents]').innerText; return t.includes('tides.md') && !t.includes('broken.pdf')",
        )
        .await;

    // A second upload publishes a second version; the first is then served again, through
    // its confirmation.
    let waves = write(
        files.path(),
        "waves.md",
        b"# Waves\n\nWind raises waves on the open sea.\n",
    );
    // With it, a PDF of which one page cannot be read: ready, marked as read in part, what
    // was left out in its badge's tooltip.
    let partial = write(
        files.path(),
        "harbour.pdf",
        &crate::common::pdf_files::pdf_with_a_page_it_cannot_read("Harbour dues"),
    );
    let input = browser.find("[data-files]").await.expect("the file input");
    browser
        .call(
            reqwest::Method::POST,
            &format!("/element/{input}/value"),
            json!({ "text": format!("{waves}\n{partial}") }),
        )
        .await;
    browser.click(&browser.find("[data-upload]").await.unwrap()).await;
    browser
        .wait_for(
            "two versions",
            "return document.querySelectorAll('[data-versions] tr').length >= 2",
        )
        .await;
    let marked = browser
        .wait_for(
            "a file read in part marked",
            "const row = [...document.querySelectorAll('[data-documents] tr')].find(r => r.innerText.includes('harbour.pdf')); const b = row && row.querySelector('.badge.warned'); return b ? [b.textContent, b.title] : null",
        )
        .await;
    assert_eq!(marked[0], "ready, read in part", "{marked}");
    assert!(
        marked[1]
            .as_str()
            .unwrap()
            .starts_with("page 2 of 2: text could not be extracted"),
        "{marked}"
    );
    // More like a result: the chunks nearest its embedding, none of its own document's.
    let top_k = browser.find("[data-top-k]").await.unwrap();
    browser.type_into(&top_k, "5").await;
    let query = browser.find("[data-query]").await.unwrap();
    browser.type_into(&query, "moon tide\u{E007}").await;
    // The earlier search showed two results; a tides result is taken from the five-result page.
    let like_tides = "const shown = [...document.querySelectorAll('[data-results] .result')]; const r = shown.length > 2 && shown.find(r => r.innerText.includes('tides.md') && !document.querySelector('[data-like-of]')); return r ? r.querySelector('[data-like]') : null";
    let button = browser.wait_for("a tides result to be like", like_tides).await;
    browser.click(button[ELEMENT].as_str().unwrap()).await;
    let like = browser
        .wait_for(
            "results like the tides chunk",
            "const note = document.querySelector('[data-like-of]'); const r = [...document.querySelectorAll('[data-results] .result')].map(e => e.innerText); return note && r.length ? [note.textContent, r] : null",
        )
        .await;
    assert!(like[0].as_str().unwrap().starts_with("More like tides.md"), "{like}");
    let shown = like[1].as_array().unwrap();
    assert!(
        shown.iter().all(|r| !r.as_str().unwrap().contains("tides.md")),
        "{like}"
    );
    assert!(shown.iter().any(|r| r.as_str().unwrap().contains("waves.md")), "{like}");
    // Less like the waves result: both examples named, both documents left out.
    let unlike_waves = "const shown = [...document.querySelectorAll('[data-results] .result')]; const r = !document.querySelector('[data-like-of]').textContent.includes('less like') && shown.find(r => r.innerText.includes('waves.md')); return r ? r.querySelector('[data-unlike]') : null";
    let button = browser.wait_for("a waves result to be less like", unlike_waves).await;
    browser.click(button[ELEMENT].as_str().unwrap()).await;
    let unlike = browser
        .wait_for(
            "results like tides and unlike waves",
            "const note = document.querySelector('[data-like-of]'); const r = [...document.querySelectorAll('[data-results] .result')].map(e => e.innerText); return note && note.textContent.includes('less like') && r.length ? [note.textContent, r] : null",
        )
        .await;
    let note = unlike[0].as_str().unwrap();
    assert!(
        note.starts_with("More like tides.md")
            && note.contains("; less like waves.md")
            && note.ends_with("(their documents left out)"),
        "{unlike}"
    );
    assert!(
        unlike[1]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| !r.as_str().unwrap().contains("tides.md") && !r.as_str().unwrap().contains("waves.md")),
        "{unlike}"
    );

    let serve_earlier = "return [...document.querySelectorAll('[data-versions] button')].find(b => b.textContent === 'Serve this version') || null";
    browser
        .click_and_confirm("an earlier version offered", serve_earlier)
        .await;
    browser
        .wait_for(
            "a version rolled back",
            "return document.querySelector('[data-versions]').innerText.includes('rolled back')",
        )
        .await;
    let (_, versions) = server.get("/v1/collections/browser/versions").await;
    assert!(
        versions["versions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v["state"] == "rolled_back"),
        "{versions}"
    );
    browser.quit().await;
    server.stop().await;
}
