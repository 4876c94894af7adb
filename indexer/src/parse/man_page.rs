//! Manual pages (roff with the man or mdoc macros: `ls.1`, `printf.3.gz`, `sshd_config.5`),
//! told by their first request (`.TH`, `.Dd`, `.Dt`; comments and macro definitions may come
//! first) whatever their name: `.TH LS 1` gives the title `LS(1)`; `.SH`/`.Sh` sections and
//! `.SS`/`.Ss` subsections as heading paths; paragraphs (`.PP`, `.TP`'s tag and text, `.IP`,
//! a blank line) as blocks; font macros (`.B`, `.BR`, ...) and escapes (`\fB`, `\-`, `\(em`)
//! read for their text; `.nf`/`.EX` blocks verbatim; tbl tables (`.TS`...`.TE`) as table
//! blocks; comments, macro definitions (`.de`...`..`), conditionals and other requests left out;
//! mdoc's callable macros (`.Op Fl a Ar file`) read as the words they show (`-a file`). One pass
//! over the lines, none recursive.

use super::markup_body::{literal_text, table_text, LineReader, MarkupBody};
use super::roff_text::roff_text;
use super::text::decode_raw_text;
use super::{ContentType, Document, ParseError, Parsed};
use crate::source::RawDocument;

/// Requests that begin a macro definition or an ignored block, which ends at `..`.
const DEFINITIONS: [&str; 6] = ["de", "de1", "am", "am1", "ig", "dei"];
/// How far into a file its first request is looked for.
const SNIFFED: usize = 16 << 10;

/// Whether `bytes` begin a manual page: a `.TH`, `.Dd` or `.Dt` request in the first 16 KiB,
/// the lines before it requests and comments (a tenth may be a conditional's continued lines,
/// as pod2man's preamble has; a rotated log `app.log.1` is text lines).
pub(super) fn looks_like_a_man_page(bytes: &[u8]) -> bool {
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(SNIFFED)]);
    let (mut requests, mut text, mut in_definition) = (0usize, 0usize, false);
    for line in head.lines().map(str::trim_end).filter(|l| !l.is_empty()) {
        let parsed = request(line);
        if in_definition {
            in_definition = !matches!(parsed, Some((".", _)));
            continue;
        }
        if [".TH ", ".Dd ", ".Dt "].iter().any(|r| line.starts_with(r)) {
            return text * 10 <= requests;
        }
        match parsed {
            Some((name, _)) => {
                requests += 1;
                in_definition = DEFINITIONS.contains(&name);
            }
            None if line.starts_with("\\\"") || line.starts_with("\\#") => requests += 1, // comments
            None => text += 1,
        }
    }
    false
}

pub(super) fn parse(raw: &RawDocument) -> Result<Parsed, ParseError> {
    let text = decode_raw_text(raw)?;
    let mut reader = Reader::default();
    reader.read(&text.lines().collect::<Vec<_>>());
    let title = reader.title.take().unwrap_or_else(|| Document::stem_of(raw));
    Ok(Parsed::one(Document::from_raw(raw, title, reader.body.blocks)))
}

#[derive(Default)]
struct Reader {
    body: MarkupBody,
    title: Option<String>,
    /// A section request without its title (`.SH` alone): the next text line is its title.
    heading_next: Option<usize>,
    /// The lines of a `.nf`/`.EX` block being read.
    literal: Option<Vec<String>>,
    /// Inside a macro definition or an ignored block, which ends at a `..` line.
    in_definition: bool,
    table: Option<Table>,
}

/// A tbl table being read: its options and formats first, then its rows.
#[derive(Default)]
struct Table {
    in_rows: bool,
    tab: Option<char>,
    rows: Vec<Vec<String>>,
    /// A cell's text block (`T{` ... `T}`) being read: the row's cells before it, its lines.
    text_block: Option<(Vec<String>, Vec<String>)>,
}

impl Table {
    fn line(&mut self, line: &str) {
        if !self.in_rows {
            if let Some(options) = line.trim_end().strip_suffix(';') {
                let tab = options.find("tab(").and_then(|p| options[p + 4..].chars().next());
                self.tab = tab;
                return;
            }
            self.in_rows = line.trim_end().ends_with('.'); // the last format line
            return;
        }
        let tab = self.tab.unwrap_or('\t');
        if let Some((mut cells, mut lines)) = self.text_block.take() {
            match line.strip_prefix("T}") {
                Some(after) => {
                    cells.push(lines.join(" "));
                    let more = after.trim_start_matches(tab);
                    cells.extend(more.split(tab).filter(|c| !c.is_empty()).map(roff_text));
                    self.rows.push(cells);
                }
                None => {
                    if !line.starts_with('.') {
                        lines.push(roff_text(line));
                    }
                    self.text_block = Some((cells, lines));
                }
            }
            return;
        }
        let trimmed = line.trim();
        if trimmed.is_empty() || ["_", "=", "T&"].contains(&trimmed) || line.starts_with('.') {
            return;
        }
        let cells: Vec<&str> = line.split(tab).collect();
        if let Some((last, before)) = cells.split_last() {
            if last.trim() == "T{" {
                self.text_block = Some((before.iter().map(|c| roff_text(c)).collect(), Vec::new()));
                return;
            }
        }
        self.rows.push(cells.into_iter().map(roff_text).collect());
    }
}

/// A request line's name and its arguments (double quotes group words; `""` is a quote).
fn request(line: &str) -> Option<(&str, Vec<String>)> {
    let rest = line.strip_prefix(['.', '\''])?.trim_start();
    let name_end = rest.find(char::is_whitespace).unwrap_or(rest.len());
    let (name, mut args_text) = (&rest[..name_end], &rest[name_end..]);
    if let Some(comment) = args_text.find("\\\"") {
        args_text = &args_text[..comment];
    }
    let mut args = Vec::new();
    let mut chars = args_text.trim().chars().peekable();
    while chars.peek().is_some() {
        let mut arg = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            while let Some(c) = chars.next() {
                match (c, chars.peek()) {
                    ('"', Some('"')) => {
                        arg.push('"');
                        chars.next();
                    }
                    ('"', _) => break,
                    (c, _) => arg.push(c),
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                arg.push(c);
            }
        }
        args.push(roff_text(&arg));
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
    }
    Some((name, args))
}

/// The text a font macro sets: a one-font macro's (`.B`, `.I`) words a space apart, an
/// alternating one's (`.BR dir (1),`) joined.
fn font_macro_text(name: &str, args: &[String]) -> Option<String> {
    match name {
        "B" | "I" => Some(args.join(" ")),
        "BR" | "BI" | "IB" | "IR" | "RB" | "RI" => Some(args.concat()),
        _ => None,
    }
}

/// mdoc's macros that may stand inside a line's arguments, shown by the words after them.
const MDOC_CALLABLE: [&str; 40] = [
    "Ad", "An", "Ar", "Cd", "Cm", "Dv", "Er", "Ev", "Fa", "Fn", "Ft", "Ic", "Li", "Nm", "Pa", "Va", "Vt", "Xr", "Em",
    "Sy", "Ql", "Ns", "Op", "Oo", "Oc", "Dq", "Do", "Dc", "Sq", "So", "Sc", "Pq", "Po", "Pc", "Bq", "Bo", "Bc", "Aq",
    "Ao", "Ac",
];

/// An mdoc line's words: callable macro names left out, a flag (`Fl a`) written `-a`.
fn mdoc_words(args: &[String]) -> String {
    let mut words = Vec::new();
    let mut flag = false;
    for arg in args {
        if arg == "Fl" {
            flag = true;
            continue;
        }
        if MDOC_CALLABLE.contains(&arg.as_str()) {
            continue;
        }
        words.push(if std::mem::take(&mut flag) {
            format!("-{arg}")
        } else {
            arg.clone()
        });
    }
    if flag {
        words.push("-".into());
    }
    words.join(" ")
}

impl Reader {
    fn request(&mut self, name: &str, args: Vec<String>) {
        let joined = || args.join(" ");
        match name {
            "TH" | "Dt" => {
                let section = args.get(1).map(|s| format!("({s})")).unwrap_or_default();
                self.title = args.first().map(|n| format!("{n}{section}"));
            }
            "SH" | "Sh" | "SS" | "Ss" => {
                self.end_paragraph();
                let level = if name.eq_ignore_ascii_case("SH") { 1 } else { 2 };
                match args.is_empty() {
                    true => self.heading_next = Some(level),
                    false => self.body.heading(level, joined()),
                }
            }
            "PP" | "LP" | "P" | "Pp" | "sp" | "TP" | "TQ" | "Bl" | "El" => self.end_paragraph(),
            // `.IP tag indent`: the tag starts the paragraph (the indent is no text).
            "IP" | "HP" => {
                self.end_paragraph();
                self.body.line(args.first().map_or("", String::as_str));
            }
            "It" => {
                self.end_paragraph();
                self.body.line(&mdoc_words(&args));
            }
            "nf" | "EX" | "Bd" => {
                self.end_paragraph();
                self.literal = Some(Vec::new());
            }
            "TS" => {
                self.end_paragraph();
                self.table = Some(Table::default());
            }
            name if DEFINITIONS.contains(&name) => self.in_definition = true,
            "B" | "I" | "BR" | "BI" | "IB" | "IR" | "RB" | "RI" => {
                self.body.line(&font_macro_text(name, &args).unwrap_or_default())
            }
            "SM" | "SB" => self.body.line(&joined()),
            "Nd" => self.body.line(&format!("— {}", joined())),
            name if MDOC_CALLABLE.contains(&name) || name == "Fl" => {
                let mut words = vec![name.to_string()];
                words.extend(args);
                self.body.line(&mdoc_words(&words));
            }
            _ => {} // comments, conditionals, spacing, includes, links' marks
        }
    }

    fn end_literal(&mut self) {
        if let Some(lines) = self.literal.take() {
            let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
            self.body.push(literal_text(&lines), ContentType::Text);
        }
    }

    fn end_table(&mut self) {
        if let Some(mut table) = self.table.take() {
            if let Some((mut cells, lines)) = table.text_block.take() {
                cells.push(lines.join(" "));
                table.rows.push(cells);
            }
            self.body.push(table_text(&table.rows), ContentType::Table);
        }
    }
}

impl LineReader for Reader {
    fn end_paragraph(&mut self) {
        self.body
            .end_paragraph(|text| text.split(' ').filter(|w| !w.is_empty()).collect::<Vec<_>>().join(" "));
        self.end_literal();
        self.end_table();
    }

    fn step(&mut self, lines: &[&str], i: usize) -> usize {
        let line = lines[i].trim_end();
        let parsed = request(line);
        if self.in_definition {
            // A definition ends at `..`, spaces allowed after the first dot (`.  .`).
            self.in_definition = !matches!(parsed, Some((".", _)));
            return i + 1;
        }
        if let Some(table) = self.table.as_mut() {
            match parsed {
                Some(("TE", _)) => self.end_table(),
                _ => table.line(line),
            }
            return i + 1;
        }
        if self.literal.is_some() {
            match parsed {
                Some(("fi" | "EE" | "Ed", _)) => self.end_literal(),
                Some((name, args)) => {
                    if let Some(text) = font_macro_text(name, &args) {
                        self.literal.as_mut().expect("a literal block").push(text);
                    }
                }
                None => self.literal.as_mut().expect("a literal block").push(roff_text(line)),
            }
            return i + 1;
        }
        match parsed {
            Some((name, args)) => self.request(name, args),
            None if line.trim().is_empty() => self.end_paragraph(),
            None => match self.heading_next.take() {
                Some(level) => self.body.heading(level, roff_text(line)),
                None => self.body.line(&roff_text(line)),
            },
        }
        i + 1
    }
}

#[cfg(test)]
mod tests {
    use crate::parse::{document_of, outline_of, ContentType};

    const LS: &str = r#".\" DO NOT MODIFY THIS FILE!  It was generated by help2man 1.48.5.
.de Vb \" Begin verbatim text
.ft CW
..
.if \n[.g] \{\
.  am URL
.    ad l
.  .
.\}
.TH LS "1" "September 2022" "GNU coreutils 9.1" "User Commands"
.SH NAME
ls \- list directory contents
.SH SYNOPSIS
.B ls
[\fI\,OPTION\/\fR]... [\fI\,FILE\/\fR]...
.SH DESCRIPTION
.\" Add any additional description here
.PP
List information about the FILEs.
Sort entries alphabetically if none of \fB\-cftuvSUX\fR is specified.
.TP
\fB\-a\fR, \fB\-\-all\fR
do not ignore entries starting with .
.SS "Exit status:"
.TP
0
if OK,
.IP \(bu 2
a bullet
.SH EXAMPLES
.nf
.B ls -la
  ls \-\-color=auto
.fi
.TS
tab(:);
l l.
Code:Meaning
_
0:OK
1:T{
minor problems
(cannot access)
T}
.TE
.SH "SEE ALSO"
.BR dir (1),
.IR vdir (1)
"#;

    #[test]
    fn a_man_page_reads_as_man_shows_it() {
        let document = document_of("ls.1", LS);
        assert_eq!(document.title, "LS(1)");
        let outline = outline_of(&document);
        let description = vec!["DESCRIPTION"];
        let status = vec!["DESCRIPTION", "Exit status:"];
        assert_eq!(
            outline,
            vec![
                ("NAME", vec!["NAME"], ContentType::Text),
                ("ls - list directory contents", vec!["NAME"], ContentType::Text),
                ("SYNOPSIS", vec!["SYNOPSIS"], ContentType::Text),
                ("ls\n[OPTION]... [FILE]...", vec!["SYNOPSIS"], ContentType::Text),
                ("DESCRIPTION", description.clone(), ContentType::Text),
                (
                    "List information about the FILEs.\nSort entries alphabetically if none of -cftuvSUX is specified.",
                    description.clone(),
                    ContentType::Text
                ),
                (
                    "-a, --all\ndo not ignore entries starting with .",
                    description.clone(),
                    ContentType::Text
                ),
                ("Exit status:", status.clone(), ContentType::Text),
                ("0\nif OK,", status.clone(), ContentType::Text),
                ("•\na bullet", status.clone(), ContentType::Text),
                ("EXAMPLES", vec!["EXAMPLES"], ContentType::Text),
                ("ls -la\n  ls --color=auto", vec!["EXAMPLES"], ContentType::Text),
                (
                    "Code | Meaning\n0 | OK\n1 | minor problems (cannot access)",
                    vec!["EXAMPLES"],
                    ContentType::Table
                ),
                ("SEE ALSO", vec!["SEE ALSO"], ContentType::Text),
                ("dir(1),\nvdir(1)", vec!["SEE ALSO"], ContentType::Text),
            ]
        );
    }

    #[test]
    fn an_mdoc_page_and_what_is_not_a_man_page() {
        let page = ".Dd March 1, 2026\n.Dt QUARRY 1\n.Os\n.Sh NAME\n.Nm quarry\n.Nd index documents\n\
                    .Sh SYNOPSIS\n.Nm\n.Op Fl v\n.Ar source\n.Sh DESCRIPTION\n.Bl -tag -width Ds\n.It Fl o Ar dir\n\
                    Write the snapshot to\n.Pa dir .\n.El\n";
        let document = document_of("quarry.1", page);
        assert_eq!(document.title, "QUARRY(1)");
        let texts: Vec<&str> = document.blocks.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "NAME",
                "quarry\n— index documents",
                "SYNOPSIS",
                "-v\nsource",
                "DESCRIPTION",
                "-o dir\nWrite the snapshot to\ndir ."
            ]
        );
        // A rotated log is text, not a page; a hostile page reads in linear time.
        let log = document_of("app.log.1", ".started\nserver up\n.TH not a page\n");
        assert_eq!(log.blocks[0].text.trim_end(), ".started\nserver up\n.TH not a page");
        let started = std::time::Instant::now();
        let hostile = ".TH X 1\n.SH A\n".to_string()
            + &"\\(\\[\\h'".repeat(50_000)
            + "\n.TS\n"
            + &"1\tT{\n".repeat(20_000)
            + ".TE\n.nf\n"
            + &".de x\n".repeat(20_000);
        assert_eq!(document_of("x.1", hostile).blocks[0].text, "A");
        assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());
    }
}
