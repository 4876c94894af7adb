//! A result's neighbours in its document (`context_chunks`): the live chunks just before and
//! after it, in chunk order, so a RAG prompt can hold the text around a hit without a second
//! request.

use crate::search::loaded::LoadedSnapshot;
use crate::search::result::ChunkResult;

/// The most neighbours a request may ask for on each side.
pub const MAX_CONTEXT_CHUNKS: usize = 10;

/// The rows of the up to `n` live chunks before and after `row` in its document, nearest last
/// before and nearest first after (both in chunk order).
pub fn neighbours(snapshot: &LoadedSnapshot, row: usize, n: usize) -> (Vec<usize>, Vec<usize>) {
    let segment = snapshot.segment_of(row);
    let data = &segment.data;
    let local = row - segment.offset;
    let document = data.doc_of_row[local];
    let mut rows: Vec<usize> = data
        .field_index
        .rows_of(document, &data.doc_of_row, data.documents.len())
        .iter()
        .map(|&r| r as usize)
        .filter(|&r| r == local || !snapshot.tombstoned.contains(segment.offset + r))
        .collect();
    rows.sort_by_key(|&r| data.chunks[r].index);
    let Some(at) = rows.iter().position(|&r| r == local) else {
        return (Vec::new(), Vec::new());
    };
    let global = |rows: &[usize]| rows.iter().map(|r| segment.offset + r).collect();
    (
        global(&rows[at.saturating_sub(n)..at]),
        global(&rows[at + 1..(at + 1 + n).min(rows.len())]),
    )
}

/// Adds `metadata.context_before` and `metadata.context_after` to the result of `row`: its
/// neighbours' `{chunk_id, chunk_index, content}`, in chunk order.
pub fn add_context(result: &mut ChunkResult, snapshot: &LoadedSnapshot, row: usize, n: usize) {
    let (before, after) = neighbours(snapshot, row, n);
    let records = |rows: Vec<usize>| -> serde_json::Value {
        rows.into_iter()
            .map(|r| {
                let chunk = snapshot.chunk(r);
                serde_json::json!({ "chunk_id": chunk.chunk_id, "chunk_index": chunk.index, "content": chunk.text })
            })
            .collect::<Vec<_>>()
            .into()
    };
    result.metadata.insert("context_before".into(), records(before));
    result.metadata.insert("context_after".into(), records(after));
}
