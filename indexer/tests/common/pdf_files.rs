//! PDF files written byte by byte for the tests: objects numbered in order, a cross-reference
//! table, a trailer.

/// A PDF of these objects (object 1 the catalog), with its cross-reference table.
pub fn pdf_of(objects: &[Vec<u8>]) -> Vec<u8> {
    let mut out = b"%PDF-1.5\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        out.extend_from_slice(body);
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend_from_slice(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes());
    for offset in offsets {
        out.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}

/// A two-page PDF: page 1 shows `text`, page 2 sets its font by a number where a name
/// belongs, on which the PDF reader stops.
pub fn pdf_with_a_page_it_cannot_read(text: &str) -> Vec<u8> {
    let stream = |content: &str| {
        [
            format!("<< /Length {} >>\nstream\n", content.len()).into_bytes(),
            content.as_bytes().to_vec(),
            b"\nendstream".to_vec(),
        ]
        .concat()
    };
    let page = |contents: usize| {
        format!("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents {contents} 0 R /Resources << /Font << /F1 7 0 R >> >> >>")
            .into_bytes()
    };
    pdf_of(&[
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >>".to_vec(),
        page(5),
        page(6),
        stream(&format!("BT /F1 12 Tf 72 700 Td ({text}) Tj ET")),
        stream("BT 1 12 Tf 72 700 Td (lost) Tj ET"),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_vec(),
    ])
}
