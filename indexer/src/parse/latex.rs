//! LaTeX (`.tex`, `.latex`): the document body read as it is typeset. `\title` is the title;
//! `\part` to `\subparagraph` (starred or not) make the heading paths; paragraphs (split at
//! blank lines and `\par`), list items (`enumerate`'s numbered, `description`'s terms before
//! their text) and footnotes (after the paragraph citing them) are blocks; `tabular`s are
//! table blocks (a row per `\\`, cells split at `&`, rules left out); `verbatim`, `lstlisting`
//! and `minted` blocks and display math are blocks of their own, as written. Comments, the
//! preamble's commands, labels, references, citations, graphics and a command's name are left
//! out; its arguments' text is read; escaped characters, accents, dashes and quotes read as
//! typeset. Read by one loop over the text (braces and environments counted, not recursed
//! into), so in time linear in the file however deep it nests.

use super::latex_symbols::{accented, is_letter_accent, reads_as_its_name, text_command};
use super::markup_body::{table_text, MarkupBody};
use super::text::{collapse_whitespace, decode_raw_text};
use super::{ContentType, Document, ParseError, Parsed};
use crate::source::RawDocument;

/// Commands whose arguments are not text a reader sees: left out with them.
const DROPPED: &[&str] = &[
    "label",
    "ref",
    "eqref",
    "pageref",
    "autoref",
    "cref",
    "Cref",
    "cite",
    "citep",
    "citet",
    "citealp",
    "nocite",
    "includegraphics",
    "input",
    "include",
    "bibliography",
    "bibliographystyle",
    "usepackage",
    "documentclass",
    "newcommand",
    "renewcommand",
    "providecommand",
    "newenvironment",
    "renewenvironment",
    "DeclareMathOperator",
    "setlength",
    "addtolength",
    "setcounter",
    "vspace",
    "hspace",
    "thispagestyle",
    "pagestyle",
    "hypersetup",
    "graphicspath",
    "definecolor",
    "color",
    "newtheorem",
    "bibitem",
    "author",
    "date",
    "title",
    "thanks",
    "affiliation",
    "email",
    "keywords",
    "linewidth",
    "textwidth",
];

/// Environments whose text is kept as written, and those left out.
const VERBATIM: &[&str] = &["verbatim", "verbatim*", "lstlisting", "minted", "Verbatim", "alltt"];
const MATH: &[&str] = &[
    "equation",
    "equation*",
    "align",
    "align*",
    "gather",
    "gather*",
    "multline",
    "multline*",
    "eqnarray",
    "eqnarray*",
    "displaymath",
    "math",
];
const LEFT_OUT: &[&str] = &["comment", "tikzpicture", "thebibliography_keys"];
const TABULAR: &[&str] = &["tabular", "tabular*", "tabularx", "longtable", "tabulary"];

pub(super) fn parse(raw: &RawDocument) -> Result<Parsed, ParseError> {
    let text = decode_raw_text(raw)?;
    let text = without_comments(&text);
    let (preamble, body) = match text.split_once("\\begin{document}") {
        Some((preamble, body)) => (preamble, body.split("\\end{document}").next().unwrap_or(body)),
        None => ("", text.as_str()),
    };
    let title = argument_of(preamble, "title")
        .or_else(|| argument_of(body, "title"))
        .map(|t| inline(&t))
        .filter(|t| !t.is_empty());
    let mut reader = Reader::default();
    reader.read(body);
    let mut blocks = reader.body.blocks;
    if let Some(title) = &title {
        // The title is typeset above the text, as a Markdown file's first heading is.
        blocks.insert(0, super::Block::text(title.clone(), &[]));
    }
    let title = title
        .or(reader.body.first_heading)
        .unwrap_or_else(|| Document::stem_of(raw));
    Ok(Parsed::one(Document::from_raw(raw, title, blocks)))
}

/// The text with `%` comments taken off (`\%` is a percent sign), as TeX reads them: a comment
/// takes the end of its line with it, so the next line goes on the same line (its leading
/// spaces skipped), and a line that is only a comment does not end a paragraph.
fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut joined = false;
    for line in text.lines() {
        let line = match joined {
            true => line.trim_start(),
            false => line,
        };
        let mut escaped = false;
        let mut comment = None;
        for (i, c) in line.char_indices() {
            match c {
                '%' if !escaped => {
                    comment = Some(i);
                    break;
                }
                '\\' => escaped = !escaped,
                _ => escaped = false,
            }
        }
        match comment {
            Some(at) => out.push_str(&line[..at]),
            None => {
                out.push_str(line.trim_end());
                out.push('\n');
            }
        }
        joined = comment.is_some();
    }
    out
}

/// The first `\name{...}` argument in `text`.
fn argument_of(text: &str, name: &str) -> Option<String> {
    let command = format!("\\{name}");
    let mut from = 0;
    while let Some(p) = text[from..].find(&command) {
        let after = from + p + command.len();
        let rest = text[after..].trim_start();
        if rest.starts_with('{') || rest.starts_with('[') {
            let start = text.len() - rest.len();
            let (_, next) = skip_optional(text, start);
            let (group, _) = group_at(text, next)?;
            return Some(group.to_string());
        }
        from = after;
    }
    None
}

/// The brace group at `at` (after white space): its inside and the position after it; none
/// if no group is there. Braces are counted, not recursed into.
fn group_at(text: &str, at: usize) -> Option<(&str, usize)> {
    let start = at + (text[at..].len() - text[at..].trim_start().len());
    if !text[start..].starts_with('{') {
        return None;
    }
    let mut depth = 0usize;
    let mut escaped = false;
    for (i, c) in text[start..].char_indices() {
        match c {
            '\\' => {
                escaped = !escaped;
                continue;
            }
            '{' if !escaped => depth += 1,
            '}' if !escaped => {
                depth -= 1;
                if depth == 0 {
                    return Some((&text[start + 1..start + i], start + i + 1));
                }
            }
            _ => {}
        }
        escaped = false;
    }
    Some((&text[start + 1..], text.len()))
}

/// An optional `[...]` argument at `at`: its inside, and the position after it (`at` if none).
fn skip_optional(text: &str, at: usize) -> (Option<&str>, usize) {
    let rest = &text[at..];
    let trimmed = rest.trim_start();
    let start = at + rest.len() - trimmed.len();
    if !trimmed.starts_with('[') {
        return (None, at);
    }
    let mut depth = 0usize;
    // An optional argument is short; a `[` with no `]` near it is text.
    for (i, c) in trimmed.char_indices().take(1024) {
        match c {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    return (Some(&trimmed[1..i]), start + i + 1);
                }
            }
            _ => {}
        }
    }
    (None, at)
}

/// A list open: numbered (`enumerate`, its last number), a description, or bullets.
enum List {
    Numbered(u64),
    Description,
    Bullets,
}

#[derive(Default)]
struct Reader {
    body: MarkupBody,
    paragraph: String,
    lists: Vec<List>,
    /// Footnotes of the paragraph being read, given after it.
    notes: Vec<String>,
    /// How many fragments (a title, a note) this reader's text is inside.
    depth: usize,
}

impl Reader {
    fn end_paragraph(&mut self) {
        let text = std::mem::take(&mut self.paragraph);
        self.body.line(&text);
        self.body.end_paragraph(collapse_whitespace);
        for note in std::mem::take(&mut self.notes) {
            self.body.push(note, ContentType::Text);
        }
    }

    fn read(&mut self, text: &str) {
        let mut i = 0;
        while i < text.len() {
            i = self.step(text, i);
        }
        self.end_paragraph();
    }

    /// Reads what starts at `i`; returns the position after it.
    fn step(&mut self, text: &str, i: usize) -> usize {
        let rest = &text[i..];
        if rest.starts_with("\n\n") {
            self.end_paragraph();
            return i + 2;
        }
        if let Some(command) = rest.strip_prefix('\\') {
            return self.command(text, i, command);
        }
        // Dashes and quotes as they are typeset.
        for (written, typeset) in [("---", '—'), ("--", '–'), ("``", '“'), ("''", '”')] {
            if rest.starts_with(written) {
                self.paragraph.push(typeset);
                return i + written.len();
            }
        }
        let c = rest.chars().next().expect("within the text");
        match c {
            // A command's arguments one after another (`{Ada}{ada@example.org}`) are words apart;
            // braced letters one after another (`F{\"o}{\ss}meier`) are one word.
            '}' if rest[1..].starts_with('{') && !rest[2..].starts_with('\\') => self.paragraph.push(' '),
            '{' | '}' | '$' => {}
            '~' => self.paragraph.push(' '),
            c => self.paragraph.push(c),
        }
        i + c.len_utf8()
    }

    /// A command at `i` (`command` is the text after its backslash).
    fn command(&mut self, text: &str, i: usize, command: &str) -> usize {
        let name_len = command.bytes().take_while(u8::is_ascii_alphabetic).count();
        if name_len == 0 {
            // A control symbol: `\\` a line break, `\%` a percent sign, `\'e` an accent.
            let Some(symbol) = command.chars().next() else {
                return i + 1;
            };
            let after = i + 1 + symbol.len_utf8();
            return match symbol {
                '\\' => {
                    self.paragraph.push('\n');
                    after
                }
                ',' | ';' | ':' | '!' | ' ' => {
                    self.paragraph.push(' ');
                    after
                }
                // The italic correction and the space factor's mark typeset nothing.
                '/' | '@' => after,
                '\'' | '`' | '^' | '"' | '~' | '=' | '.' => self.accent(text, after, symbol),
                c => {
                    self.paragraph.push(c);
                    after
                }
            };
        }
        let name = &command[..name_len];
        let mut after = i + 1 + name_len;
        let starred = text[after..].starts_with('*');
        if starred {
            after += 1;
        }
        if let Some(level) = section_level(name) {
            let (_, next) = skip_optional(text, after);
            let Some((title, next)) = group_at(text, next) else {
                return after;
            };
            self.end_paragraph();
            self.body.heading(level, inline_at(title, self.depth + 1));
            return next;
        }
        if let Some((typeset, takes_spaces)) = text_command(name) {
            self.paragraph.push_str(typeset);
            let rest = &text[after..];
            return match takes_spaces {
                true => after + rest.len() - rest.trim_start_matches([' ', '\t']).len(),
                false => after,
            };
        }
        if is_letter_accent(name) {
            let rest = &text[after..];
            let letter_at = after + rest.len() - rest.trim_start_matches([' ', '\t']).len();
            return self.accent(text, letter_at, name.chars().next().expect("a letter"));
        }
        if reads_as_its_name(name) {
            self.paragraph.push_str(name);
            return after;
        }
        match name {
            "begin" => return self.begin(text, after),
            "end" => {
                let Some((environment, next)) = group_at(text, after) else {
                    return after;
                };
                self.end_paragraph();
                if matches!(environment, "itemize" | "enumerate" | "description") {
                    self.lists.pop();
                }
                return next;
            }
            "item" => {
                self.end_paragraph();
                let (term, next) = skip_optional(text, after);
                match self.lists.last_mut() {
                    Some(List::Numbered(n)) => {
                        *n = n.saturating_add(1);
                        self.paragraph.push_str(&format!("{n}. "));
                    }
                    Some(List::Description) => {
                        if let Some(term) = term {
                            self.paragraph
                                .push_str(&format!("{}: ", inline_at(term, self.depth + 1)));
                        }
                    }
                    _ => {}
                }
                return next;
            }
            "par" | "newline" | "linebreak" => {
                self.end_paragraph();
                return after;
            }
            "footnote" => {
                let (_, next) = skip_optional(text, after);
                let Some((note, next)) = group_at(text, next) else {
                    return after;
                };
                self.notes.push(inline_at(note, self.depth + 1));
                return next;
            }
            "href" => {
                // The link's text is read; its address is not.
                return group_at(text, after).map_or(after, |(_, next)| next);
            }
            "maketitle" | "tableofcontents" | "listoffigures" | "listoftables" | "noindent" | "centering" | "hline"
            | "toprule" | "midrule" | "bottomrule" | "newpage" | "clearpage" | "appendix" => {
                return after;
            }
            _ if DROPPED.contains(&name) => {
                let mut next = after;
                loop {
                    let (_, past_optional) = skip_optional(text, next);
                    match group_at(text, past_optional) {
                        Some((_, past)) => next = past,
                        None => return past_optional,
                    }
                }
            }
            _ => {}
        }
        // Any other command: its name left out, its arguments read as text.
        skip_optional(text, after).1
    }

    /// `\begin{environment}` at `after`.
    fn begin(&mut self, text: &str, after: usize) -> usize {
        let Some((environment, next)) = group_at(text, after) else {
            return after;
        };
        let end_marker = format!("\\end{{{environment}}}");
        let inside_end = |from: usize| text[from..].find(&end_marker).map_or(text.len(), |p| from + p);
        let is = |names: &[&str]| names.contains(&environment);
        if is(VERBATIM) || is(MATH) || is(LEFT_OUT) || is(TABULAR) {
            self.end_paragraph();
            let end = inside_end(next);
            let inside = &text[next..end];
            if is(VERBATIM) {
                // `minted`'s language and `lstlisting`'s options are not the code.
                let code = match environment {
                    "minted" => group_at(inside, 0).map_or(inside, |(_, p)| &inside[p..]),
                    "lstlisting" => &inside[skip_optional(inside, 0).1..],
                    _ => inside,
                };
                self.body.push(code.trim_matches('\n').to_string(), ContentType::Text);
            } else if is(MATH) {
                self.body.push(inside.trim().to_string(), ContentType::Text);
            } else if is(TABULAR) {
                self.body.push(tabular_text(inside, self.depth + 1), ContentType::Table);
            }
            return (end + end_marker.len()).min(text.len());
        }
        self.end_paragraph();
        match environment {
            "itemize" => self.lists.push(List::Bullets),
            "enumerate" => self.lists.push(List::Numbered(0)),
            "description" => self.lists.push(List::Description),
            _ => {}
        }
        next
    }

    /// An accent (`\'e`, `\"{o}`, `\'{\i}`) on the letter after it, written as the letter it
    /// makes.
    fn accent(&mut self, text: &str, at: usize, accent: char) -> usize {
        let rest = &text[at..];
        // A dotless i or j under an accent is the letter's base: `\'{\i}` reads `í`.
        let dotless = |s: &str| {
            ["\\i", "\\j"]
                .into_iter()
                .find(|d| s.starts_with(d) && !s[2..].starts_with(|c: char| c.is_ascii_alphabetic()))
                .map(|d| (d.chars().nth(1).expect("a letter"), 2))
        };
        let letter_at = |s: &str| dotless(s).or_else(|| s.chars().next().map(|c| (c, c.len_utf8())));
        let (letter, next) = match rest.strip_prefix('{') {
            Some(inner) => match letter_at(inner) {
                Some((c, len)) if inner[len..].starts_with('}') => (Some(c), at + 2 + len),
                _ => (None, at),
            },
            None => match letter_at(rest) {
                Some((c, len)) if c.is_ascii_alphabetic() => (Some(c), at + len),
                _ => (None, at),
            },
        };
        if let Some(letter) = letter {
            self.paragraph.push(accented(letter, accent));
        }
        next
    }
}

/// The level of a sectioning command.
fn section_level(name: &str) -> Option<usize> {
    let names = [
        "part",
        "chapter",
        "section",
        "subsection",
        "subsubsection",
        "paragraph",
        "subparagraph",
    ];
    names.iter().position(|n| *n == name).map(|p| p + 1)
}

/// A tabular's rows (split at `\\`) and cells (split at `&`), each cell's markup read, rules
/// and column specs left out.
fn tabular_text(inside: &str, depth: usize) -> String {
    // The column spec (`{l|r}`), and `tabular*`'s width before it.
    let mut body = inside;
    for _ in 0..2 {
        if let Some((_, next)) = group_at(body, 0) {
            body = &body[next..];
        }
    }
    let rows: Vec<Vec<String>> = body
        .split("\\\\")
        .map(|row| {
            let row = row
                .replace("\\hline", "")
                .replace("\\toprule", "")
                .replace("\\midrule", "")
                .replace("\\bottomrule", "");
            split_cells(&row).iter().map(|cell| inline_at(cell, depth)).collect()
        })
        .collect();
    table_text(&rows)
}

/// A row's cells: split at `&` not written `\&`.
fn split_cells(row: &str) -> Vec<String> {
    let mut cells = vec![String::new()];
    let mut escaped = false;
    for c in row.chars() {
        match c {
            '&' if !escaped => cells.push(String::new()),
            c => cells.last_mut().expect("one cell at least").push(c),
        }
        escaped = c == '\\' && !escaped;
    }
    cells
}

/// A fragment's text as typeset (a title, a cell, a note): read by the same loop as the body.
pub(super) fn inline(fragment: &str) -> String {
    inline_at(fragment, 0)
}

/// Fragments nested deeper than this (a note in a note's title ...) are read without their
/// markup, so reading them needs no more stack however deep a file nests them.
const MAX_FRAGMENT_DEPTH: usize = 8;

fn inline_at(fragment: &str, depth: usize) -> String {
    if depth > MAX_FRAGMENT_DEPTH {
        // Command names and braces left out, the rest as it is.
        let mut plain = String::with_capacity(fragment.len());
        let mut chars = fragment.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' => while chars.next_if(char::is_ascii_alphabetic).is_some() {},
                '{' | '}' => {}
                c => plain.push(c),
            }
        }
        return collapse_whitespace(&plain);
    }
    let mut reader = Reader {
        depth,
        ..Default::default()
    };
    reader.read(fragment);
    let mut parts: Vec<String> = reader.body.blocks.into_iter().map(|b| b.text).collect();
    parts.retain(|p| !p.is_empty());
    collapse_whitespace(&parts.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::document_of;

    const PAPER: &str = r#"\documentclass{article}
\usepackage{amsmath}
\title{Harbour Fees \\ and Tides}
\author{Ada Lovelace}
\begin{document}
\maketitle

\section{Berths}\label{sec:berths}
\moduleauthor{Ada}{ada@example.org}
The harbour keeps \emph{twelve} berths~\cite{port2026}; see Table~\ref{tab:fees}
and \href{https://example.org}{the port site}.
% A comment line, which does not end the paragraph.
Fees rose by 5\% in 2025 --- as the caf\'e's owner said, ``too much''.\footnote{Paid at the office.}

\subsection*{Fees}
\begin{tabular}{l|r}
\hline
Berth & Fee \\
North & 12 \\
\hline
\end{tabular}

\begin{enumerate}
  \item Come alongside.
  \item Make fast the lines.
\end{enumerate}
\begin{description}
  \item[Bow line] First.
\end{description}
\begin{equation}
  f = 12 \cdot \ell
\end{equation}
\begin{verbatim}
moor --berth 4
\end{verbatim}
\end{document}
"#;

    #[test]
    fn sections_paragraphs_lists_tables_and_notes() {
        let doc = document_of("paper.tex", PAPER);
        assert_eq!(doc.title, "Harbour Fees and Tides");
        let texts: Vec<&str> = doc.blocks.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "Harbour Fees and Tides",
                "Berths",
                "Ada ada@example.org The harbour keeps twelve berths ; see Table and the port site. Fees rose by 5% in 2025 — as the café's owner said, “too much”.",
                "Paid at the office.",
                "Fees",
                "Berth | Fee\nNorth | 12",
                "1. Come alongside.",
                "2. Make fast the lines.",
                "Bow line: First.",
                "f = 12 \\cdot \\ell",
                "moor --berth 4",
            ]
        );
        assert_eq!(doc.blocks[5].heading_path, ["Berths", "Fees"]);
        assert_eq!(doc.blocks[5].kind, ContentType::Table);
    }

    #[test]
    fn letters_accents_symbols_and_logos_as_typeset() {
        let read = inline(
            "Bj\\o rn Dvo\\v{r}\\'{a}k, F{\\\"o}{\\ss}meier, Ol{\\v{s}}{\\'a}k, Gaf\\/fey, {Ada}{ada@example.org}, Fran\\c{c}ois, Erd\\H{o}s, Gau\\ss, Mart\\'{\\i}n, \\k a, {\\VAX}/VMS, \\LaTeX\\ and \\MF, \\S 3, \\LARGE big",
        );
        assert_eq!(
            read,
            "Bjørn Dvořák, Fößmeier, Olšák, Gaffey, Ada ada@example.org, François, Erdős, Gauß, Martín, ą, VAX/VMS, LaTeX and METAFONT, § 3, big"
        );
    }

    #[test]
    fn braces_and_environments_nested_deep_are_counted_not_recursed() {
        let deep = format!("{}deep{}", "{\\emph{".repeat(100_000), "}}".repeat(100_000));
        assert_eq!(document_of("deep.tex", deep).blocks[0].text, "deep");
        let lists = format!("{}\\item deepest", "\\begin{itemize}".repeat(100_000));
        assert_eq!(document_of("lists.tex", lists).blocks[0].text, "deepest");
        let notes = format!("{}note{}", "\\footnote{".repeat(100_000), "}".repeat(100_000));
        let read = &document_of("notes.tex", notes).blocks[0].text;
        assert!(read == "note", "{}", &read[..read.len().min(80)]);
        // A comment takes its line's end with it.
        assert_eq!(without_comments("foot%\n   note 5\\% off\n"), "footnote 5\\% off\n");
    }
}
