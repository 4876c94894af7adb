//! FAISS indexes to and from bytes in memory (its C API reads and writes `FILE` streams:
//! `fmemopen` and `open_memstream` give it ones over memory).

use faiss::index::{FromInnerPtr, IndexImpl};

use super::faiss_index::last_faiss_error;
use crate::error::{IndexerError, Result};

fn failed(stage: &'static str) -> impl Fn(String) -> IndexerError {
    move |reason| IndexerError::VectorIndex { stage, reason }
}

/// FAISS's `read_index` over an index file held in memory.
pub fn read_index_from_bytes(bytes: &[u8]) -> Result<IndexImpl> {
    // SAFETY: the stream only reads `bytes` ("rb"), which outlive it: it is closed below
    // before this function returns.
    let stream = unsafe { libc::fmemopen(bytes.as_ptr() as *mut libc::c_void, bytes.len(), c"rb".as_ptr()) };
    if stream.is_null() {
        return Err(failed("read")(format!("fmemopen: {}", std::io::Error::last_os_error())));
    }
    let mut index = std::ptr::null_mut();
    // SAFETY: `stream` is an open stream over the bytes; FAISS reads it and stores a new
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

/// FAISS's `write_index` of `index` into memory: the bytes its index file would hold.
pub fn write_index_to_bytes(index: &IndexImpl) -> Result<Vec<u8>> {
    let mut buffer: *mut libc::c_char = std::ptr::null_mut();
    let mut size: libc::size_t = 0;
    // SAFETY: open_memstream stores its growing buffer and size in the two locals, which
    // outlive the stream (closed below).
    let stream = unsafe { libc::open_memstream(&mut buffer, &mut size) };
    if stream.is_null() {
        return Err(failed("write")(format!(
            "open_memstream: {}",
            std::io::Error::last_os_error()
        )));
    }
    // SAFETY: a live index, only read; an open stream.
    let code = unsafe { faiss_sys::faiss_write_index(index.inner_ptr(), stream.cast()) };
    // SAFETY: opened above, closed once; closing sets `buffer` and `size` to the bytes.
    let closed = unsafe { libc::fclose(stream) };
    let bytes = if buffer.is_null() {
        Vec::new()
    } else {
        // SAFETY: after fclose, `buffer` holds `size` bytes allocated by the C library,
        // copied here and then freed once.
        let copy = unsafe { std::slice::from_raw_parts(buffer.cast::<u8>(), size) }.to_vec();
        unsafe { libc::free(buffer.cast()) };
        copy
    };
    if code != 0 {
        return Err(failed("write")(last_faiss_error()));
    }
    if closed != 0 {
        return Err(failed("write")(format!(
            "open_memstream: {}",
            std::io::Error::last_os_error()
        )));
    }
    Ok(bytes)
}
