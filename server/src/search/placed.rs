//! The parts of a search's scope, placed: each searched snapshot with where its rows start
//! among all parts' rows and the rows the request's filters allow in it.

use quarry_indexer::index::RowSet;

use crate::search::searcher::Searcher;

/// One searched snapshot; `name`, when given, goes into each of its results' metadata as
/// `collection`.
pub struct SearchPart<'a> {
    pub name: Option<&'a str>,
    pub searcher: &'a Searcher,
}

/// A part with where its rows start among all parts' rows and the rows a search may return
/// (None: every live row).
pub struct PlacedPart<'a> {
    pub part: &'a SearchPart<'a>,
    pub offset: usize,
    pub allowed: Option<RowSet>,
}

/// The part holding a row numbered among all parts' rows, and the row's number in it.
pub fn locate<'p, 'a>(placed: &'p [PlacedPart<'a>], row: usize) -> (&'p PlacedPart<'a>, usize) {
    let at = &placed[placed.partition_point(|p| p.offset <= row) - 1];
    (at, row - at.offset)
}
