//! Jupyter notebooks (`.ipynb`): the cells in order, read as the page the notebook shows.
//! Markdown cells are Markdown (headings as heading paths, the first `#` heading the title,
//! lists, tables); a code cell is a code block, and its text outputs (a stream, a result's or a
//! display's plain text, an error's name and value) blocks after it, each cut at
//! [`MAX_OUTPUT_CHARS`], terminal colour codes taken off; images, HTML and widgets' outputs,
//! which hold no text a reader sees as text, are left out. nbformat 4 and 3 (worksheets).

use serde_json::Value;

use super::markdown::read_markdown;
use super::text::decode_raw_text;
use super::{ParseError, Parsed};
use crate::source::RawDocument;

/// Characters of one output kept (a training loop's log can be megabytes).
pub(super) const MAX_OUTPUT_CHARS: usize = 2_000;

pub(super) fn parse(raw: &RawDocument) -> Result<Parsed, ParseError> {
    let text = decode_raw_text(raw)?;
    let notebook: Value = serde_json::from_str(&text).map_err(|e| {
        ParseError::Corrupt(format!(
            "notebook JSON at line {}, column {}: {e}",
            e.line(),
            e.column()
        ))
    })?;
    let cells = cells_of(&notebook).ok_or_else(|| {
        ParseError::Corrupt("not a Jupyter notebook: no `cells` list (nbformat 4) or `worksheets` (nbformat 3)".into())
    })?;
    let language = language_of(&notebook);
    let mut page = String::new();
    for cell in cells {
        let source = |key: &str| joined(cell.get(key));
        match cell.get("cell_type").and_then(Value::as_str).unwrap_or_default() {
            "markdown" => push_section(&mut page, &source("source")),
            "code" => {
                // nbformat 3 keeps a code cell's text in `input`.
                let code = match cell.get("source") {
                    Some(_) => source("source"),
                    None => source("input"),
                };
                push_section(&mut page, &fenced(&code, &language));
                let outputs = cell.get("outputs").and_then(Value::as_array).into_iter().flatten();
                for output in outputs.filter_map(output_text) {
                    push_section(&mut page, &fenced(&output, ""));
                }
            }
            // nbformat 3's heading cells.
            "heading" => {
                let level = cell.get("level").and_then(Value::as_u64).unwrap_or(1).clamp(1, 6) as usize;
                let title = source("source").replace('\n', " ");
                push_section(&mut page, &format!("{} {title}", "#".repeat(level)));
            }
            "raw" => push_section(&mut page, &fenced(&source("source"), "")),
            _ => {}
        }
    }
    Ok(Parsed::one(read_markdown(raw, &page)))
}

/// The cells of nbformat 4 (`cells`) or 3 (each worksheet's `cells`, in order).
fn cells_of(notebook: &Value) -> Option<Vec<&Value>> {
    if let Some(cells) = notebook.get("cells").and_then(Value::as_array) {
        return Some(cells.iter().collect());
    }
    let worksheets = notebook.get("worksheets")?.as_array()?;
    Some(
        worksheets
            .iter()
            .filter_map(|w| w.get("cells").and_then(Value::as_array))
            .flatten()
            .collect(),
    )
}

/// The notebook's language, for its code blocks (`python`).
fn language_of(notebook: &Value) -> String {
    let metadata = notebook.get("metadata");
    let at = |path: &[&str]| {
        path.iter()
            .try_fold(metadata?, |value, key| value.get(key))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    at(&["kernelspec", "language"])
        .or_else(|| at(&["language_info", "name"]))
        .unwrap_or_default()
        .chars()
        .filter(|c| c.is_alphanumeric() || "+-_#".contains(*c))
        .collect()
}

/// A cell's text, written as a string or as a list of lines.
fn joined(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(lines)) => lines.iter().filter_map(Value::as_str).collect(),
        _ => String::new(),
    }
}

/// An output's text, if it has some a reader sees as text: cut at [`MAX_OUTPUT_CHARS`],
/// terminal colour codes taken off.
fn output_text(output: &Value) -> Option<String> {
    let text = match output.get("output_type").and_then(Value::as_str)? {
        "stream" => joined(output.get("text")),
        "execute_result" | "display_data" | "pyout" => {
            // nbformat 3 keeps the plain text under `text` beside the other types.
            let data = output.get("data").unwrap_or(output);
            joined(data.get("text/plain").or_else(|| data.get("text")))
        }
        "error" | "pyerr" => {
            let name = output.get("ename").and_then(Value::as_str).unwrap_or_default();
            let value = output.get("evalue").and_then(Value::as_str).unwrap_or_default();
            format!("{name}: {value}")
        }
        _ => return None,
    };
    let text = without_terminal_codes(&text);
    let text = text.trim();
    if text.is_empty() || text == ":" {
        return None;
    }
    Some(match text.char_indices().nth(MAX_OUTPUT_CHARS) {
        Some((cut, _)) => format!("{} …", &text[..cut]),
        None => text.to_string(),
    })
}

/// `text` without ANSI escape sequences (`ESC [ ... letter`), which colour a terminal's text.
fn without_terminal_codes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.next_if_eq(&'[').is_some() {
                while chars.next_if(|c| !c.is_ascii_alphabetic()).is_some() {}
                chars.next();
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// `code` as a fenced code block whose fence is longer than any run of backticks in it.
fn fenced(code: &str, language: &str) -> String {
    if code.trim().is_empty() {
        return String::new();
    }
    let longest = code.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat((longest + 1).max(3));
    format!("{fence}{language}\n{}\n{fence}", code.trim_end_matches('\n'))
}

/// A cell's Markdown as a section of the page, apart from the one before.
fn push_section(page: &mut String, section: &str) {
    if section.trim().is_empty() {
        return;
    }
    if !page.is_empty() {
        page.push_str("\n\n");
    }
    page.push_str(section.trim_end());
}

#[cfg(test)]
mod tests {
    use crate::parse::document_of;
    use serde_json::json;

    use crate::parse::{raw_for_test, AutoParser, ContentType, Parser};

    #[test]
    fn cells_read_as_the_page_the_notebook_shows() {
        let notebook = json!({
            "nbformat": 4, "nbformat_minor": 5,
            "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
            "cells": [
                {"cell_type": "markdown", "source": ["# Harbour fees\n", "\n", "Fees are *paid* daily."]},
                {"cell_type": "code", "source": "fees = load()\nfees.head()", "outputs": [
                    {"output_type": "stream", "name": "stdout", "text": ["\u{1b}[32mloaded\u{1b}[0m 12 berths\n"]},
                    {"output_type": "execute_result", "data": {"text/plain": ["   berth  fee\n", "0  North   12"], "text/html": "<table>…</table>"}},
                    {"output_type": "display_data", "data": {"image/png": "iVBORw0KGgoAAAANSUhEUgAA"}},
                    {"output_type": "error", "ename": "KeyError", "evalue": "'South'", "traceback": ["\u{1b}[31m..."]}
                ]},
                {"cell_type": "markdown", "source": "## Mooring\n\n- Bow line first."},
                {"cell_type": "code", "source": "print('```')", "outputs": [
                    {"output_type": "stream", "text": "x".repeat(5_000)}
                ]}
            ]
        });
        let doc = document_of("fees.ipynb", notebook.to_string());
        assert_eq!(doc.title, "Harbour fees");
        let texts: Vec<&str> = doc.blocks.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(
            &texts[..7],
            [
                "Harbour fees",
                "Fees are paid daily.",
                "fees = load()\nfees.head()",
                "loaded 12 berths",
                "berth  fee\n0  North   12",
                "KeyError: 'South'",
                "Mooring",
            ]
        );
        assert_eq!(texts[7], "Bow line first.");
        assert_eq!(texts[8], "print('```')");
        assert_eq!(texts[9].chars().count(), super::MAX_OUTPUT_CHARS + 2);
        assert_eq!(doc.blocks[8].heading_path, ["Harbour fees", "Mooring"]);
        assert!(doc.blocks.iter().all(|b| b.kind == ContentType::Text));
        assert!(!texts.iter().any(|t| t.contains("iVBOR") || t.contains("<table>")));
    }

    #[test]
    fn nbformat_3_and_files_that_are_not_notebooks() {
        let notebook = json!({"nbformat": 3, "worksheets": [{"cells": [
            {"cell_type": "heading", "level": 1, "source": ["Tides"]},
            {"cell_type": "code", "input": ["tide(6)"], "outputs": [{"output_type": "pyout", "text": ["'high'"]}]}
        ]}]});
        let doc = document_of("tides.ipynb", notebook.to_string());
        let texts: Vec<&str> = doc.blocks.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(texts, ["Tides", "tide(6)", "'high'"]);
        let error = |bytes: &str| {
            AutoParser
                .parse(&raw_for_test("x.ipynb", bytes.to_string()))
                .unwrap_err()
                .detail()
        };
        assert!(error("{\"cells\": [")
            .unwrap()
            .starts_with("notebook JSON at line 1, column 11"));
        assert!(error("{\"data\": 1}").unwrap().contains("no `cells` list"));
    }
}
