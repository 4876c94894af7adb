//! FAISS indexes to and from bytes in memory (its C API reads and writes `FILE` streams:
//! `fopencookie` gives it ones over memory and over any writer).

use std::io::Write;

use faiss::index::{FromInnerPtr, IndexImpl};

use super::faiss_index::last_faiss_error;
use crate::error::{IndexerError, Result};

fn failed(stage: &'static str) -> impl Fn(String) -> IndexerError {
    move |reason| IndexerError::VectorIndex { stage, reason }
}

/// glibc's `cookie_io_functions_t` (stdio.h): the calls behind a `fopencookie` stream.
#[repr(C)]
struct CookieIoFunctions {
    read: Option<unsafe extern "C" fn(*mut libc::c_void, *mut libc::c_char, libc::size_t) -> libc::ssize_t>,
    write: Option<unsafe extern "C" fn(*mut libc::c_void, *const libc::c_char, libc::size_t) -> libc::ssize_t>,
    seek: Option<unsafe extern "C" fn(*mut libc::c_void, *mut libc::off64_t, libc::c_int) -> libc::c_int>,
    close: Option<unsafe extern "C" fn(*mut libc::c_void) -> libc::c_int>,
}

unsafe extern "C" {
    fn fopencookie(
        cookie: *mut libc::c_void,
        mode: *const libc::c_char,
        functions: CookieIoFunctions,
    ) -> *mut libc::FILE;
}

/// Where a stream over pieces of bytes has read to.
struct Pieces<'a> {
    pieces: &'a [&'a [u8]],
    piece: usize,
    at: usize,
}

/// The stream's read: the next bytes of the pieces, in order; 0 at the end.
unsafe extern "C" fn read_pieces(
    cookie: *mut libc::c_void,
    buffer: *mut libc::c_char,
    size: libc::size_t,
) -> libc::ssize_t {
    // SAFETY: `cookie` is the `Pieces` given to fopencookie, alive until the stream is closed;
    // stdio hands a buffer of `size` writable bytes.
    let (reader, out) = unsafe {
        (
            &mut *cookie.cast::<Pieces>(),
            std::slice::from_raw_parts_mut(buffer.cast::<u8>(), size),
        )
    };
    let mut filled = 0;
    while filled < size && reader.piece < reader.pieces.len() {
        let piece = &reader.pieces[reader.piece][reader.at..];
        let take = piece.len().min(size - filled);
        out[filled..filled + take].copy_from_slice(&piece[..take]);
        filled += take;
        reader.at += take;
        if take == piece.len() {
            reader.piece += 1;
            reader.at = 0;
        }
    }
    filled as libc::ssize_t
}

/// FAISS's `read_index` over an index file given as pieces of bytes in order, read straight
/// from them (a `fopencookie` stream), never joined in memory.
pub fn read_index_from_pieces(pieces: &[&[u8]]) -> Result<IndexImpl> {
    let mut reader = Pieces {
        pieces,
        piece: 0,
        at: 0,
    };
    let functions = CookieIoFunctions {
        read: Some(read_pieces),
        write: None,
        seek: None,
        close: None,
    };
    // SAFETY: `reader` outlives the stream, closed below before this function returns.
    let stream = unsafe { fopencookie((&mut reader as *mut Pieces).cast(), c"rb".as_ptr(), functions) };
    if stream.is_null() {
        return Err(failed("read")(format!(
            "fopencookie: {}",
            std::io::Error::last_os_error()
        )));
    }
    let mut index = std::ptr::null_mut();
    // SAFETY: `stream` is an open stream over the pieces; FAISS reads it and stores a new
    // index in `index` on success.
    let code = unsafe { faiss_sys::faiss_read_index(stream.cast(), 0, &mut index) };
    // SAFETY: opened above, closed once.
    unsafe { libc::fclose(stream) };
    if code != 0 || index.is_null() {
        return Err(failed("read")(last_faiss_error()));
    }
    // SAFETY: `index` is the index FAISS just created; IndexImpl takes its ownership.
    Ok(unsafe { IndexImpl::from_inner_ptr(index) })
}

/// Where a write stream sends its bytes, and the first error it met there.
struct Sink<'a> {
    out: &'a mut dyn Write,
    error: Option<std::io::Error>,
}

/// The stream's write: every byte to the sink's writer; 0 (an error to stdio) once one
/// write failed or panicked, the error kept for the caller.
unsafe extern "C" fn write_sink(
    cookie: *mut libc::c_void,
    buffer: *const libc::c_char,
    size: libc::size_t,
) -> libc::ssize_t {
    // SAFETY: `cookie` is the `Sink` given to fopencookie, alive until the stream is closed;
    // stdio hands `size` readable bytes.
    let (sink, bytes) = unsafe {
        (
            &mut *cookie.cast::<Sink>(),
            std::slice::from_raw_parts(buffer.cast::<u8>(), size),
        )
    };
    if sink.error.is_some() {
        return 0;
    }
    // A panic must not unwind into C: it becomes the stream's error.
    let written = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sink.out.write_all(bytes)))
        .unwrap_or_else(|_| Err(std::io::Error::other("the writer panicked")));
    match written {
        Ok(()) => size as libc::ssize_t,
        Err(error) => {
            sink.error = Some(error);
            0
        }
    }
}

/// FAISS's `write_index` of `index` into `out` (a `fopencookie` stream over it): the bytes
/// its index file would hold, handed on as FAISS writes them.
pub fn write_index_to(index: &IndexImpl, out: &mut dyn Write) -> Result<()> {
    let mut sink = Sink { out, error: None };
    let functions = CookieIoFunctions {
        read: None,
        write: Some(write_sink),
        seek: None,
        close: None,
    };
    // SAFETY: `sink` outlives the stream, closed below before this function returns.
    let stream = unsafe { fopencookie((&mut sink as *mut Sink).cast(), c"wb".as_ptr(), functions) };
    if stream.is_null() {
        return Err(failed("write")(format!(
            "fopencookie: {}",
            std::io::Error::last_os_error()
        )));
    }
    // SAFETY: a live index, only read; an open stream.
    let code = unsafe { faiss_sys::faiss_write_index(index.inner_ptr(), stream.cast()) };
    // SAFETY: opened above, closed once; closing writes what stdio still holds to the sink.
    let closed = unsafe { libc::fclose(stream) };
    if let Some(error) = sink.error {
        return Err(failed("write")(error.to_string()));
    }
    if code != 0 {
        return Err(failed("write")(last_faiss_error()));
    }
    if closed != 0 {
        return Err(failed("write")(format!("fclose: {}", std::io::Error::last_os_error())));
    }
    Ok(())
}

/// FAISS's `write_index` of `index` into memory: the bytes its index file would hold.
pub fn write_index_to_bytes(index: &IndexImpl) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    write_index_to(index, &mut bytes)?;
    Ok(bytes)
}
