//! The frames a parse worker process and its parent exchange over the worker's stdin and
//! stdout: a request is a file (its names as JSON, then its bytes), a reply is the parse
//! result as JSON. Lengths are little-endian and bounded, so a torn or hostile stream fails
//! a read instead of asking for any amount of memory.

use std::io::{self, Read, Write};

use bytes::Bytes;
use serde::{Deserialize, Serialize};

use super::{Document, Format, ItemFailure, ParseError, Parsed};
use crate::source::RawDocument;

/// Longest header of a request (a file's URI and names).
const MAX_HEADER_BYTES: u64 = 1 << 20;
/// Longest file a request carries, and longest reply (64 GiB: bounded by the file size
/// limit long before).
const MAX_BODY_BYTES: u64 = 1 << 36;

/// Everything of a [`RawDocument`] but its bytes.
#[derive(Serialize, Deserialize)]
struct RequestHeader {
    uri: String,
    relative_path: String,
    etag: Option<String>,
    size: u64,
    source: String,
    #[serde(default)]
    content_type: Option<String>,
    /// The format the parent chose (from the file's name and bytes, or a mailbox's message).
    format: Format,
}

/// What a worker answers for one file.
#[derive(Serialize, Deserialize)]
pub(super) enum Reply {
    Parsed {
        documents: Vec<Document>,
        failures: Vec<ItemFailure>,
    },
    Failed(ParseError),
}

impl Reply {
    pub fn of(result: Result<Parsed, ParseError>) -> Self {
        match result {
            Ok(parsed) => Self::Parsed {
                documents: parsed.documents,
                failures: parsed.failures,
            },
            Err(e) => Self::Failed(e),
        }
    }

    pub fn into_result(self) -> Result<Parsed, ParseError> {
        match self {
            Self::Parsed { documents, failures } => Ok(Parsed { documents, failures }),
            Self::Failed(e) => Err(e),
        }
    }
}

fn read_len(input: &mut impl Read, most: u64, what: &str) -> io::Result<Option<usize>> {
    let mut len = [0u8; 8];
    match input.read_exact(&mut len) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let len = u64::from_le_bytes(len);
    if len > most {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{what} of {len} bytes is over the limit of {most}"),
        ));
    }
    Ok(Some(len as usize))
}

fn read_body(input: &mut impl Read, len: usize) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    input.take(len as u64).read_to_end(&mut body)?;
    if body.len() < len {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("stream ended {} bytes into a frame of {len}", body.len()),
        ));
    }
    Ok(body)
}

fn json_error(e: serde_json::Error) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

pub(super) fn write_request(output: &mut impl Write, raw: &RawDocument, format: Format) -> io::Result<()> {
    let header = RequestHeader {
        uri: raw.uri.clone(),
        relative_path: raw.relative_path.clone(),
        etag: raw.etag.clone(),
        size: raw.size,
        source: raw.source.clone(),
        content_type: raw.content_type.clone(),
        format,
    };
    let header = serde_json::to_vec(&header).map_err(json_error)?;
    output.write_all(&(header.len() as u64).to_le_bytes())?;
    output.write_all(&header)?;
    output.write_all(&(raw.bytes.len() as u64).to_le_bytes())?;
    output.write_all(&raw.bytes)?;
    output.flush()
}

/// The next request, None at the end of the stream.
pub(super) fn read_request(input: &mut impl Read) -> io::Result<Option<(RawDocument, Format)>> {
    let Some(header_len) = read_len(input, MAX_HEADER_BYTES, "a request header")? else {
        return Ok(None);
    };
    let header: RequestHeader = serde_json::from_slice(&read_body(input, header_len)?).map_err(json_error)?;
    let body_len = read_len(input, MAX_BODY_BYTES, "a file")?
        .ok_or_else(|| io::Error::new(io::ErrorKind::UnexpectedEof, "request without its file"))?;
    let bytes = read_body(input, body_len)?;
    let raw = RawDocument {
        uri: header.uri,
        relative_path: header.relative_path,
        bytes: Bytes::from(bytes),
        etag: header.etag,
        size: header.size,
        source: header.source,
        content_type: header.content_type,
    };
    Ok(Some((raw, header.format)))
}

pub(super) fn write_reply(output: &mut impl Write, reply: &Reply) -> io::Result<()> {
    let body = serde_json::to_vec(reply).map_err(json_error)?;
    output.write_all(&(body.len() as u64).to_le_bytes())?;
    output.write_all(&body)?;
    output.flush()
}

/// The next reply, None at the end of the stream.
pub(super) fn read_reply(input: &mut impl Read) -> io::Result<Option<Reply>> {
    let Some(len) = read_len(input, MAX_BODY_BYTES, "a reply")? else {
        return Ok(None);
    };
    serde_json::from_slice(&read_body(input, len)?)
        .map(Some)
        .map_err(json_error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::raw_for_test;

    #[test]
    fn requests_and_replies_round_trip_and_torn_frames_fail() {
        let raw = raw_for_test("dir/café 100%.txt", "hello");
        let mut stream = Vec::new();
        write_request(&mut stream, &raw, Format::Email).unwrap();
        let (back, format) = read_request(&mut stream.as_slice()).unwrap().unwrap();
        assert_eq!(
            (back.uri, back.relative_path, back.bytes, format),
            (
                raw.uri.clone(),
                raw.relative_path.clone(),
                raw.bytes.clone(),
                Format::Email
            )
        );
        assert!(
            read_request(&mut &stream[..0]).unwrap().is_none(),
            "an empty stream is the end"
        );
        assert!(
            read_request(&mut &stream[..stream.len() - 1]).is_err(),
            "a torn request"
        );
        // A length over the limit is refused before anything is allocated for it.
        let huge = u64::MAX.to_le_bytes();
        assert!(read_request(&mut huge.as_slice()).is_err());

        let mut stream = Vec::new();
        write_reply(&mut stream, &Reply::Failed(ParseError::NoText)).unwrap();
        assert_eq!(
            read_reply(&mut stream.as_slice())
                .unwrap()
                .unwrap()
                .into_result()
                .unwrap_err(),
            ParseError::NoText
        );
    }
}
