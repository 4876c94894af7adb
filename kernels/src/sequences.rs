//! Sequences laid out back to back (each as its real rows, no padding): where each starts.

/// The first row of each sequence when sequences of `lengths` rows lie back to back.
pub(crate) fn sequence_starts(lengths: &[usize]) -> Vec<usize> {
    let mut start = 0;
    lengths
        .iter()
        .map(|&length| {
            start += length;
            start - length
        })
        .collect()
}
