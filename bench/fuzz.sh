#!/usr/bin/env bash
# Fuzzes quarry's parsers, its filter parser, its keyword analyzer and its query reading (fuzz/fuzz_targets) for a fixed time each, on
# the stable toolchain: libFuzzer through the libfuzzer-sys crate, the code instrumented with
# LLVM's coverage passes (what `cargo fuzz` sets up, without its nightly-only sanitizers).
# Not part of the tests; a benchmark of robustness. Each target runs in libFuzzer's fork mode
# and goes on after a finding: crashes, timeouts and inputs past the memory limit are kept in
# target/fuzz/artifacts/TARGET/ and counted at the end.
#
#   bench/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     (default 60 s, every target)
#
# FUZZ_TIMEOUT (seconds an input may take, default 20) and FUZZ_MAX_LEN (bytes, default 65536):
# a short timeout over longer inputs finds work that grows faster than the input.
#
# A file that crashes a parser here fails alone in a run: PDF, DOCX and HTML are parsed in
# worker processes (indexer/src/parse/isolated.rs), so a finding here is a parser bug a run
# survives, and one to fix or report upstream.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
seconds="${1:-60}"
shift || true
targets=("$@")
known=(parse_pdf parse_docx parse_html parse_structured parse_text parse_markup parse_streams filters keyword_analysis query_reading)
[ ${#targets[@]} -gt 0 ] || targets=("${known[@]}")
for target in "${targets[@]}"; do
  [[ " ${known[*]} " == *" $target "* ]] || { echo "no fuzz target $target (targets: ${known[*]})" >&2; exit 2; }
done
out="$root/target/fuzz"
triple="$(rustc -vV | awk '/^host:/ { print $2 }')"
# An explicit --target keeps these flags off build scripts and proc macros.
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 -Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table -Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Coverflow-checks"
(cd "$root/fuzz" && cargo build --release --target "$triple" --target-dir "$out" --bins)
unset RUSTFLAGS
seed() { # seed TARGET: a few small valid inputs to start from
  local corpus="$out/corpus/$1"
  mkdir -p "$corpus"
  case "$1" in
    parse_pdf) (cd "$corpus" && python3 - <<'PY'
import zlib
def pdf(objects, info=None):
    # Objects numbered from 1 in order, the catalog first; a cross-reference table with each one's offset.
    out = bytearray(b"%PDF-1.5\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R" % (len(objects) + 1) + (b" /Info %d 0 R" % info if info else b"")
    out += b" >>\nstartxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)
def stream(data, compress=False):
    if compress:
        data = zlib.compress(data)
        return b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(data) + data + b"\nendstream"
    return b"<< /Length %d >>\nstream\n" % len(data) + data + b"\nendstream"
font = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
pages = lambda kids: b"<< /Type /Pages /Kids [%s] /Count %d /Resources << /Font << /F1 %d 0 R >> >> /MediaBox [0 0 595 842] >>"
# Lines at one size, words hyphenated at a line's end (indexer/src/parse/pdf_hyphens.rs).
lines = (b"BT /F1 11 Tf 72 712 Td (The Danube steamship company, the Donau-) Tj 0 -14 Td "
         b"(dampfschifffahrtsgesellschaft, kept a well-) Tj 0 -14 Td (known fleet; its well-known ships sailed.) Tj ET")
# A larger line (a heading by font size) over body text.
heading = b"BT /F1 18 Tf 72 760 Td (Field Guide) Tj ET BT /F1 11 Tf 72 730 Td (Birds of the coast, and where to see them.) Tj ET"
open("seed.pdf", "wb").write(pdf([
    b"<< /Type /Catalog /Pages 2 0 R >>",
    b"<< /Type /Pages /Kids [3 0 R] /Count 1 /Resources << /Font << /F1 4 0 R >> >> /MediaBox [0 0 595 842] >>",
    b"<< /Type /Page /Parent 2 0 R /Contents 5 0 R >>",
    font,
    stream(lines),
]))
# Two pages of compressed streams, an outline entry and the document's title.
open("seed-pages.pdf", "wb").write(pdf([
    b"<< /Type /Catalog /Pages 2 0 R /Outlines 8 0 R >>",
    b"<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 /Resources << /Font << /F1 5 0 R >> >> /MediaBox [0 0 595 842] >>",
    b"<< /Type /Page /Parent 2 0 R /Contents 6 0 R >>",
    b"<< /Type /Page /Parent 2 0 R /Contents 7 0 R >>",
    font,
    stream(heading, True),
    stream(lines, True),
    b"<< /Type /Outlines /First 9 0 R /Last 9 0 R /Count 1 >>",
    b"<< /Title (Field Guide) /Parent 8 0 R /Dest [3 0 R /XYZ 0 800 0] >>",
    b"<< /Title (A field guide) /Author (quarry) >>",
], info=10))
PY
      ) ;;
    parse_docx) (cd "$corpus" && python3 - <<'PY'
import io, zipfile
# The first byte picks the format: 0 .docx, 1 .pptx, 2 .xlsx, 3 .odt, 4 .epub, 5 .ods, 6 .odp
# (7 .doc, 8 .xls and 9 .ppt: LibreOffice's files, 10 .msg: Outlook's, below; 11 .zip, 12 .tar,
# 13 .tgz, 14 .txz, 15 .tbz2; 16 .7z: 7-Zip's, below; 17 .hwpx; 18 .tar.lz4).
def lz4_legacy(data):
    # A legacy LZ4 frame of one block of literals only (no LZ4 module in Python's library).
    n, extra = len(data), b""
    if n >= 15:
        rest = n - 15
        extra = b"\xff" * (rest // 255) + bytes([rest % 255])
    block = bytes([min(n, 15) << 4]) + extra + data
    return b"\x02\x21\x4c\x18" + len(block).to_bytes(4, "little") + block
def package(pick, name, parts):
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as z:
        z.writestr("[Content_Types].xml", '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>')
        for part, xml in parts.items():
            z.writestr(part, xml)
    open(name, "wb").write(bytes([pick]) + data.getvalue())
rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
rels = lambda target, kind: f'<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="{rel}/{kind}" Target="{target}"/></Relationships>'
package(0, "seed-docx", {"word/document.xml": '<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Rivers</w:t></w:r></w:p><w:p><w:r><w:t>They run dry.</w:t></w:r></w:p></w:body></w:document>'})
ns = f'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" xmlns:r="{rel}"'
package(1, "seed-pptx", {
    "ppt/presentation.xml": f'<?xml version="1.0"?><p:presentation {ns}><p:sldIdLst><p:sldId id="256" r:id="rId1"/></p:sldIdLst></p:presentation>',
    "ppt/_rels/presentation.xml.rels": rels("slides/slide1.xml", "slide"),
    "ppt/slides/slide1.xml": f'<?xml version="1.0"?><p:sld {ns}><p:cSld><p:spTree><p:sp><p:nvSpPr><p:nvPr><p:ph type="title"/></p:nvPr></p:nvSpPr><p:txBody><a:p><a:r><a:t>Rivers</a:t></a:r></a:p></p:txBody></p:sp></p:spTree></p:cSld></p:sld>',
})
main = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
package(2, "seed-xlsx", {
    "xl/workbook.xml": f'<?xml version="1.0"?><workbook {main} xmlns:r="{rel}"><sheets><sheet name="Rivers" sheetId="1" r:id="rId1"/></sheets></workbook>',
    "xl/_rels/workbook.xml.rels": rels("worksheets/sheet1.xml", "worksheet"),
    "xl/sharedStrings.xml": f'<?xml version="1.0"?><sst {main}><si><t>river</t></si></sst>',
    "xl/worksheets/sheet1.xml": f'<?xml version="1.0"?><worksheet {main}><sheetData><row r="1"><c r="A1" t="s"><v>0</v></c></row><row r="2"><c r="A2" t="inlineStr"><is><t>dry</t></is></c><c r="B2"><v>3</v></c></row></sheetData></worksheet>',
})
odf = 'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0"'
package(3, "seed-odt", {
    "mimetype": "application/vnd.oasis.opendocument.text",
    "content.xml": f'<?xml version="1.0"?><office:document-content {odf}><office:body><office:text><text:h text:outline-level="1">Rivers</text:h><text:p>They run dry.</text:p></office:text></office:body></office:document-content>',
})
package(4, "seed-epub", {
    "mimetype": "application/epub+zip",
    "META-INF/container.xml": '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/book.opf"/></rootfiles></container>',
    "OEBPS/book.opf": '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Rivers</dc:title></metadata><manifest><item id="c" href="c.xhtml"/></manifest><spine><itemref idref="c"/></spine></package>',
    "OEBPS/c.xhtml": '<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><body><h1>Rivers</h1><p>They run dry.</p></body></html>',
})
package(5, "seed-ods", {
    "mimetype": "application/vnd.oasis.opendocument.spreadsheet",
    "content.xml": f'<?xml version="1.0"?><office:document-content {odf}><office:body><office:spreadsheet><table:table table:name="Rivers"><table:table-row><table:table-cell><text:p>river</text:p></table:table-cell></table:table-row><table:table-row table:number-rows-repeated="2"><table:table-cell table:number-columns-repeated="2" office:value="3"/></table:table-row></table:table></office:spreadsheet></office:body></office:document-content>',
})
hp = 'xmlns:hp="http://www.hancom.co.kr/hwpml/2011/paragraph" xmlns:hs="http://www.hancom.co.kr/hwpml/2011/section"'
package(17, "seed-hwpx", {
    "mimetype": "application/hwp+zip",
    "Contents/content.hpf": '<?xml version="1.0"?><opf:package xmlns:opf="http://www.idpf.org/2007/opf/"><opf:metadata><opf:title>Rivers</opf:title></opf:metadata></opf:package>',
    "Contents/section0.xml": f'<?xml version="1.0"?><hs:sec {hp}><hp:p><hp:run><hp:t>They run<hp:tab/>dry.</hp:t></hp:run></hp:p><hp:p><hp:run><hp:tbl><hp:tr><hp:tc><hp:subList><hp:p><hp:run><hp:t>low</hp:t></hp:run></hp:p></hp:subList></hp:tc></hp:tr></hp:tbl></hp:run></hp:p></hs:sec>',
})
package(11, "seed-zip", {
    "notes/rivers.txt": "Rivers run dry.",
    "notes/rivers.md": "# Rivers\n\nThey run dry.",
})
def tar(pick, name, files, compression):
    import bz2, gzip, lzma, tarfile
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w", format=tarfile.GNU_FORMAT) as t:
        for path, text in files.items():
            info = tarfile.TarInfo(path)
            info.size = len(text.encode())
            t.addfile(info, io.BytesIO(text.encode()))
    compress = {"": bytes, "gz": gzip.compress, "xz": lzma.compress, "bz2": bz2.compress, "lz4": lz4_legacy}[compression]
    body = compress(data.getvalue())
    open(name, "wb").write(bytes([pick]) + body)
tar(12, "seed-tar", {"notes/rivers.txt": "Rivers run dry.", "notes/" + "long" * 40 + ".md": "# Rivers"}, "")
tar(13, "seed-tgz", {"notes/rivers.txt": "Rivers run dry."}, "gz")
tar(14, "seed-txz", {"notes/rivers.txt": "Rivers run dry."}, "xz")
tar(15, "seed-tbz2", {"notes/rivers.md": "# Rivers\n\nThey run dry."}, "bz2")
tar(18, "seed-tlz4", {"notes/rivers.txt": "Rivers run dry."}, "lz4")
package(6, "seed-odp", {
    "mimetype": "application/vnd.oasis.opendocument.presentation",
    "content.xml": f'<?xml version="1.0"?><office:document-content {odf}><office:body><office:presentation><draw:page><draw:frame presentation:class="title"><draw:text-box><text:p>Rivers</text:p></draw:text-box></draw:frame><presentation:notes><draw:frame><draw:text-box><text:p>They run dry.</text:p></draw:text-box></draw:frame></presentation:notes></draw:page></office:presentation></office:body></office:document-content>',
})
PY
    )
    { printf '\x07'; cat "$root/indexer/tests/fixtures/report.doc"; } > "$corpus/seed-doc"
    { printf '\x08'; cat "$root/indexer/tests/fixtures/parts.xls"; } > "$corpus/seed-xls"
    { printf '\x09'; cat "$root/indexer/tests/fixtures/deck.ppt"; } > "$corpus/seed-ppt"
    { printf '\x0a'; cat "$root/indexer/tests/fixtures/outer.msg"; } > "$corpus/seed-msg"
    { printf '\x10'; cat "$root/indexer/tests/fixtures/handover.7z"; } > "$corpus/seed-7z" ;;
    parse_html) printf '<!doctype html><html><head><title>Rivers</title></head><body><h1>Rivers</h1><table><tr><td>dry</td></tr></table><p>They <b>run</b> dry.</p></body></html>' > "$corpus/seed.html" ;;
    parse_structured) printf '\x00{"title": "Rivers", "text": "They run dry.", "tags": ["a"]}' > "$corpus/seed-json"
                      printf '\x00{"root": "placesRoot", "children": [{"root": "toolbarFolder", "title": "toolbar", "children": [{"title": "Rivers", "uri": "https://example.org/rivers", "tags": "a,b"}]}]}' > "$corpus/seed-bookmarks"
                      # Mozilla's LZ4 file of bookmarks: its magic, its size, one block of literals.
                      (cd "$corpus" && python3 - <<'PY'
import struct
json = b'{"root": "placesRoot", "children": [{"title": "Rivers", "uri": "https://example.org/rivers"}]}'
extra = len(json) - 15
block = bytes([0xF0]) + b"\xff" * (extra // 255) + bytes([extra % 255]) + json
open("seed-jsonlz4", "wb").write(b"\x04mozLz40\0" + struct.pack("<I", len(json)) + block)
PY
)
                      printf '\x01{"_id": "1", "text": "a"}\n{"_id": "2", "text": "b"}\n' > "$corpus/seed-jsonl"
                      printf '\x02title,text\nRivers,"They run, dry"\n' > "$corpus/seed-csv"
                      printf '\x03start\tend\ttext\n0\t2400\tLow water.\n2400\t4980\tRivers run dry.\n' > "$corpus/seed-whisper-tsv"
                      printf '\x00{"text": " Low water.", "segments": [{"start": 0.0, "end": 2.4, "text": " Low water.", "speaker": "SPEAKER_00"}], "language": "en"}' > "$corpus/seed-whisper"
                      printf '\x00{"results": {"transcripts": [{"transcript": "Low water."}], "speaker_labels": {"segments": [{"items": [{"start_time": "0.1", "speaker_label": "spk_0"}]}]}, "items": [{"start_time": "0.1", "end_time": "0.5", "type": "pronunciation", "alternatives": [{"content": "Low"}]}, {"type": "punctuation", "alternatives": [{"content": "."}]}]}}' > "$corpus/seed-transcribe"
                      printf '\x00{"results": {"channels": [{"alternatives": [{"words": [{"word": "low", "start": 0.1, "end": 0.4, "speaker": 0}]}]}, {"alternatives": [{"paragraphs": {"paragraphs": [{"speaker": 1, "sentences": [{"text": "Dry.", "start": 1, "end": 2}]}]}}]}]}}' > "$corpus/seed-deepgram"
                      printf '\x00{"audio_url": "a", "words": [{"text": "Low", "start": 0, "end": 300, "speaker": "A"}], "utterances": []}' > "$corpus/seed-assemblyai"
                      printf '\x00{"recognizedPhrases": [{"recognitionStatus": "Success", "channel": 0, "speaker": 1, "offsetInTicks": 700000.0, "durationInTicks": 15900000.0, "locale": "en-GB", "nBest": [{"lexical": "low", "display": "Low."}]}, {"recognitionStatus": "NoMatch", "offsetMilliseconds": 9}]}' > "$corpus/seed-azure"
                      printf '\x00{"results": [{"alternatives": [{"transcript": "low", "words": [{"startTime": "0.1s", "endTime": "0.4s", "word": "low", "speakerTag": 1}]}], "resultEndTime": "1s", "languageCode": "en-us"}, {"alternatives": [{"transcript": "dry"}], "resultEndOffset": {"seconds": "2", "nanos": 5}}]}' > "$corpus/seed-google"
                      printf '\x00{"results": [{"alternatives": [{"transcript": "low ", "timestamps": [["low", 0.1, 0.4], ["%%HESITATION", 0.5, 0.6]]}], "final": true}], "speaker_labels": [{"from": 0.1, "to": 0.4, "speaker": 0}]}' > "$corpus/seed-watson"
                      printf '\x00{"monologues": [{"speaker": 0, "elements": [{"type": "text", "value": "Low", "ts": 0.1, "end_ts": 0.4}, {"type": "punct", "value": "."}]}]}' > "$corpus/seed-rev"
                      printf '\x00{"format": "2.9", "metadata": {"transcription_config": {"language": "de"}}, "results": [{"type": "word", "start_time": 0.1, "end_time": 0.5, "alternatives": [{"content": "Ja", "speaker": "S1"}]}, {"type": "punctuation", "start_time": 0.5, "end_time": 0.5, "alternatives": [{"content": "."}]}]}' > "$corpus/seed-speechmatics" ;;
    parse_text) printf '\x00Rivers run dry in a drought.\n' > "$corpus/seed-txt"
                printf '\x01# Rivers\n\n## Drought\n\nThey run dry.\n' > "$corpus/seed-md"
                printf '\x00\xff\xfeR\x00i\x00v\x00e\x00r\x00' > "$corpus/seed-utf16"
                printf '\x02{\\rtf1\\ansi\\ansicpg1252{\\fonttbl{\\f0 Arial;}}{\\info{\\title Rivers}}Caf\\'"'"'e9 \\u8364? {\\*\\generator x}dry\\par}' > "$corpus/seed-rtf"
                printf '\x02{\\rtf1 Rivers\\par\\trowd\\pard\\intbl River\\cell Flow\\cell\\row\\pard\\intbl Rhine\\cell 2\\par low\\cell\\row{\\pict\\bin4 {}}\\}}\\pard dry\\par}' > "$corpus/seed-rtf-table"
                { printf '\x03'; cat "$root/indexer/tests/fixtures/inspection.eml"; } > "$corpus/seed-eml"
                { printf '\x04From a@example.com Mon Nov  2 08:15:00 2026\n'; cat "$root/indexer/tests/fixtures/inspection.eml"; printf '\nFrom - Tue Nov  3 09:00:00 2026\nSubject: b\n\n>From here.\n'; } > "$corpus/seed-mbox" ;;
    parse_markup) # 0 .rst, 1 .adoc, 2 .org, 3 .tex, 4 .ipynb, 5 .wiki, 6 .xml (a MediaWiki dump, a PubMed set, a feed, a Stack Exchange table, TTML captions, a FictionBook, an Evernote export, other XML), 7 .1 (a man page), 8 .bib, 9 .ris, 10 .nbib, 11 .vtt, 12 .srt, 13 .ass, 14 .hwp, 15 .smi, 16 .sub
                  printf '\x00Rivers\n======\n\nThey run *dry*.\n\n.. note:: Low water.\n\n====  ====\nA     B\n====  ====\n\nExample::\n\n    x = 1\n' > "$corpus/seed-rst"
                  printf '\x01= Rivers\n:v: 2\n\n== Drought\n\n. one {v}\n* _dry_ link:a[b]\n\n|===\n|A |B\n|===\n\n----\ncode\n----\n' > "$corpus/seed-adoc"
                  printf '\x02#+TITLE: Rivers\n* TODO Drought :tag:\n- term :: dry\n| a | b |\n#+begin_src sh\nls\n#+end_src\n[[x][link]]\n' > "$corpus/seed-org"
                  printf '\x03\\documentclass{article}\\title{Rivers}\\begin{document}\\section{Drought}Caf\\'"'"'e \\emph{dry}\\footnote{low}.\n\\begin{tabular}{ll}a & b\\\\\\end{tabular}\\begin{verbatim}x\\end{verbatim}\\end{document}\n' > "$corpus/seed-tex"
                  printf '\x04{"nbformat": 4, "cells": [{"cell_type": "markdown", "source": ["# Rivers\\n", "dry"]}, {"cell_type": "code", "source": "print(1)", "outputs": [{"output_type": "stream", "text": "1"}]}]}' > "$corpus/seed-ipynb"
                  printf "\x05{{Infobox river|name=Rhine|length=1,230 km<ref>x</ref>}}\n== Course ==\n'''Rhine''' [[Basel|city]] {{lang|de|Rhein}}\n* one\n# two\n; t : d\n{|\n|+ cap\n! A !! B\n|-\n| a || b\n|}\n <pre>x</pre>\n[[Category:Rivers]]\n" > "$corpus/seed-wiki"
                  printf '\x06<mediawiki><siteinfo><base>https://w.example/wiki/Main</base><namespaces><namespace key="14">Category</namespace></namespaces></siteinfo><page><title>Rhine</title><ns>0</ns><id>1</id><revision><timestamp>2026-01-01T00:00:00Z</timestamp><model>wikitext</model><text>== Course ==\nIt runs [[Basel|north]].</text></revision></page></mediawiki>' > "$corpus/seed-xml"
                  printf '\x06<?xml version="1.0"?><PubmedArticleSet><PubmedArticle><MedlineCitation><PMID Version="2">1</PMID><Article><Journal><Title>J</Title><JournalIssue><PubDate><MedlineDate>1975 Jan</MedlineDate></PubDate></JournalIssue></Journal><ArticleTitle>Dry <i>rivers</i></ArticleTitle><Abstract><AbstractText Label="AIM">Low.</AbstractText></Abstract><AuthorList><Author><LastName>L</LastName><ForeName>A</ForeName></Author></AuthorList></Article><MeshHeadingList><MeshHeading><DescriptorName>R</DescriptorName></MeshHeading></MeshHeadingList></MedlineCitation></PubmedArticle></PubmedArticleSet>' > "$corpus/seed-pubmed"
                  printf '\x06<rss><channel><title>N</title><item><title>Dry</title><guid>a</guid><pubDate>Fri, 01 May 2026 09:30:00 +0200</pubDate><description>&lt;p&gt;low &lt;b&gt;water&lt;/b&gt;&lt;/p&gt;&lt;script&gt;x&lt;/script&gt;</description></item></channel></rss>' > "$corpus/seed-rss"
                  printf '\x06<?xml version="1.0"?><posts><row Id="1" PostTypeId="1" Title="Dry" Tags="&lt;a&gt;&lt;b&gt;" Body="&lt;h2&gt;Low&lt;/h2&gt;&lt;p&gt;water &lt;code&gt;x&lt;/code&gt;&lt;/p&gt;" Score="3" CreationDate="2015-01-27T20:09:32.720"/><row Id="2" PostTypeId="2" ParentId="1" Body="&lt;blockquote&gt;yes"/></posts>' > "$corpus/seed-posts"
                  printf '\x06<?xml version="1.0"?><article><front><article-title>Rivers</article-title></front><body><sec><title>Dry</title><p>Low <b>water</b>.</p><table><tr><td>a</td><td>1</td></tr></table><version>1.2</version></sec></body></article>' > "$corpus/seed-nxml"
                  printf '\x07.TH LS 1\n.SH NAME\nls \\- list\n.SH OPTIONS\n.TP\n.BR \\-a " all"\nShow \\fBall\\fR.\n.nf\ncode\n.fi\n.TS\ntab(:);\nl l.\na:T{\nb\nT}\n.TE\n' > "$corpus/seed-man"
                  printf '\x08@string{sm = "Memoirs"}\n@article{a1, author = {Lovelace, Ada and others}, title = {Notes on the {E}ngine}, journal = sm # " 3", year = 1843, month = oct, crossref = {b}}\n@book{b, title = "B", keywords = {x; y}}\n' > "$corpus/seed-bib"
                  printf '\x09TY  - JOUR\nID  - a1\nAU  - Lovelace, Ada\nTI  - Notes\n  on the engine\nPY  - 1843/10/01/\nSP  - 1\nEP  - 9\nKW  - x\nER  - \n\nTY  - CHAP\nT2  - Book\nER  - \n' > "$corpus/seed-ris"
                  printf '\x0aPMID- 1\nTI  - Dry\n      rivers\nFAU - Lovelace, Ada\nDP  - 1975 Jan\nAB  - Low.\nMH  - *Rivers/analysis\nLID - 10.1/x [doi]\n\nPMID- 1\n' > "$corpus/seed-nbib"
                  printf '\x0bWEBVTT\n\nNOTE n\n\n1\n00:00:01.000 --> 00:00:04.000 align:start\n<v Ada>Low <i>water</i> &amp; dry</v>\n\n00:00:04.500 --> 00:00:06.000\n<c.y>Rivers</c><00:00:05.000> run<ruby>dry<rt>d</rt></ruby>\n' > "$corpus/seed-vtt"
                  printf '\x0c1\n00:00:01,000 --> 00:00:04,000\n<i>Low</i> water\n\n2\n00:00:07,000 --> 00:00:09,000\n{\\an8}Rivers\nrun dry\n\n' > "$corpus/seed-srt"
                  printf '\x0d[Script Info]\nScriptType: v4.00+\n\n[Events]\nFormat: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\nDialogue: 0,0:00:01.00,0:00:04.00,Default,Ada,0,0,0,,{\\i1}Low, water\\Ndry\nComment: 0,0:00:02.00,0:00:03.00,Default,,0,0,0,,x\nDialogue: 0,0:00:05.00,0:00:06.00,Default,,0,0,0,,{\\p1}m 0 0 l 1 1\n' > "$corpus/seed-ass"
                  printf '\x06<tt xmlns="http://www.w3.org/ns/ttml" xmlns:ttp="http://www.w3.org/ns/ttml#parameter" ttp:tickRate="10000000"><head><styling/></head><body><div begin="1s"><p begin="10000000t" end="00:00:03:12">Low<br/><span>water</span></p><p dur="2s">dry</p></div></body></tt>' > "$corpus/seed-ttml"
                  { printf '\x0e'; cat "$root/indexer/tests/fixtures/notice.hwp"; } > "$corpus/seed-hwp"
                  printf '\x06<?xml version="1.0" encoding="utf-8"?><FictionBook><description><title-info><author><first-name>A</first-name><last-name>L</last-name></author><book-title>Rivers</book-title><lang>ru</lang><sequence name="S" number="1"/></title-info></description><body><title><p>Rivers</p></title><section><title><p>Dry</p><p>Low</p></title><p>Low <emphasis>water</emphasis><a type="note">[1]</a>.</p><poem><stanza><v>dry</v></stanza></poem><table><tr><td>a</td></tr></table></section></body><body name="notes"><section><p>n</p></section></body><binary id="c">/9j/4AAQSkZJRgABAQEASABIAAD</binary></FictionBook>' > "$corpus/seed-fb2"
                  printf '\x06<?xml version="1.0"?><en-export><note><title>Rivers</title><created>20130730T205204Z</created><tag>t</tag><note-attributes><author>A</author></note-attributes><content><![CDATA[<en-note><div>Low <b>water</b></div><en-crypt>U2Fs</en-crypt></en-note>]]></content><task><title>x</title></task><resource><data encoding="base64">TG93IHdhdGVyLg==</data><mime>text/plain</mime><resource-attributes><file-name>a.txt</file-name></resource-attributes></resource></note></en-export>' > "$corpus/seed-enex"
                  printf '\x0f<SAMI><HEAD><STYLE><!-- .KRCC {lang:ko-KR;} --></STYLE></HEAD><BODY><SYNC Start=1000><P Class=KRCC>Low<br>water &amp; dry<SYNC Start="3500"><P Class=KRCC>&nbsp;<sync start=4000><p class=encc><font color=red>Rivers</font></BODY></SAMI>' > "$corpus/seed-smi"
                  printf '\x10{1}{1}25\n{25}{75}{y:i}Low|/water\n{}{80}{90} dry\n{100}{}<Rivers>\n' > "$corpus/seed-sub" ;;
    parse_streams) # 0 JSONL, 1 a MediaWiki dump, 2 a Stack Exchange table, 3 a mailbox, 4 an Evernote export, 5 CSV, 6 TSV
                   printf '\x00{"_id": "1", "text": "Low water."}\n{"_id": "2", "title": "Rivers", "text": "dry"}\n' > "$corpus/seed-jsonl"
                   printf '\x01<mediawiki><siteinfo><base>https://w.example/wiki/Main</base></siteinfo><page><title>Rhine</title><ns>0</ns><id>1</id><revision><text>== Course ==\nIt runs [[Basel|north]].<!-- x --></text></revision></page></mediawiki>' > "$corpus/seed-dump"
                   printf '\x02<?xml version="1.0"?><posts><row Id="1" PostTypeId="1" Title="Dry" Body="&lt;p&gt;water&lt;/p&gt;"/><row Id="2" PostTypeId="2" ParentId="1" Body="yes"/></posts>' > "$corpus/seed-posts"
                   { printf '\x03From a@example.com Mon Nov  2 08:15:00 2026\n'; cat "$root/indexer/tests/fixtures/inspection.eml"; } > "$corpus/seed-mbox"
                   printf '\x04<?xml version="1.0"?><en-export><note><title>Rivers</title><created>20130730T205204Z</created><content><![CDATA[<en-note><div>Low <b>water</b></div></en-note>]]></content><resource><data encoding="base64">TG93IHdhdGVyLg==</data><mime>text/plain</mime></resource></note><note><title>Dry</title></note></en-export>' > "$corpus/seed-enex"
                   printf '\x05title,text\nRivers,"They run, dry"\n' > "$corpus/seed-csv"
                   printf '\x06title\ttext\nRivers\tdry\n' > "$corpus/seed-tsv" ;;
    filters) printf '{"source": "wiki", "tags": ["x"], "metadata": {"year": {"$gte": 2020}}, "exclude": {"doc_id": "d2"}}' > "$corpus/seed.json" ;;
    keyword_analysis) printf 'Perekonomian bukunya; miastach městech ciutats linnades miestuose Mueller Häuser geologist' > "$corpus/seed-latin"
                      printf 'किताबें पुस्तकालय । градовима gradovima Книги Քաղաքը կամուրջներով ביים ברעג פֿון טײַך المدينة ٢٠٢٤ άνθρωπος' > "$corpus/seed-scripts"
                      printf '"東京タワー" ﾀﾜｰ เมืองนี้ İstanbul kalabalık straße ǅemal ﬁsh ℌ' > "$corpus/seed-mixed" ;;
    query_reading) printf '"state of the art" harbour -boats hydro* diabetis~ 寺 "寺" -寺 Häuser~1 m² ｶﾞｽ' > "$corpus/seed-query"
                   printf 'کتاب المدينة~ किताब* "東京タワー" Donau\xc2\xaddampf ~ * - "' > "$corpus/seed-scripts" ;;
  esac
}
summary=()
for target in "${targets[@]}"; do
  seed "$target"
  artifacts="$out/artifacts/$target"
  mkdir -p "$artifacts"
  echo "== $target: ${seconds} s"
  started="$out/artifacts/.started-$target"
  touch "$started"
  "$out/$triple/release/$target" "$out/corpus/$target" -max_total_time="$seconds" -fork=1 -ignore_crashes=1 \
    -ignore_timeouts=1 -ignore_ooms=1 -rss_limit_mb=2048 -timeout="${FUZZ_TIMEOUT:-20}" -max_len="${FUZZ_MAX_LEN:-65536}" -artifact_prefix="$artifacts/" \
    -print_final_stats=1 2>&1 | grep -E '^#[0-9]+.*(DONE|INITED)|stat::|crash|timeout|oom|==[0-9]+==' | tail -12 || true
  # This run's findings (an earlier run's artifacts stay in the folder, not counted).
  count() { find "$artifacts" -name "$1-*" -newer "$started" 2>/dev/null | wc -l; }
  summary+=("$target: $(ls "$out/corpus/$target" | wc -l) inputs in the corpus; this run's crashes $(count crash), timeouts $(count timeout), out of memory $(count oom)")
done
printf '%s\n' "== summary ($seconds s per target; artifacts in $out/artifacts)" "${summary[@]}"
