//! A tantivy collector of the `row` of every matching document, unscored: the rows that
//! hold at least one word of a keyword query (what a search's facet counts are taken over in
//! keyword mode), however many there are.

use tantivy::collector::{Collector, SegmentCollector};
use tantivy::columnar::Column;
use tantivy::{DocId, Score, SegmentOrdinal, SegmentReader};

/// Collects the `row` fast field of every matching document.
pub(super) struct RowsCollector;

pub(super) struct SegmentRows {
    column: Column<u64>,
    rows: Vec<u64>,
}

impl Collector for RowsCollector {
    type Fruit = Vec<u64>;
    type Child = SegmentRows;

    fn for_segment(&self, _segment: SegmentOrdinal, reader: &SegmentReader) -> tantivy::Result<SegmentRows> {
        Ok(SegmentRows {
            column: reader.fast_fields().u64("row")?,
            rows: Vec::new(),
        })
    }

    fn requires_scoring(&self) -> bool {
        false
    }

    fn merge_fruits(&self, fruits: Vec<Vec<u64>>) -> tantivy::Result<Vec<u64>> {
        Ok(fruits.concat())
    }
}

impl SegmentCollector for SegmentRows {
    type Fruit = Vec<u64>;

    fn collect(&mut self, doc: DocId, _score: Score) {
        if let Some(row) = self.column.first(doc) {
            self.rows.push(row);
        }
    }

    fn harvest(self) -> Vec<u64> {
        self.rows
    }
}
