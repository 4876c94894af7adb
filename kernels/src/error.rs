//! Errors of the kernels crate.

/// What can go wrong running a kernel.
#[derive(Debug, thiserror::Error)]
pub enum KernelError {
    /// The inputs do not fit together (lengths, dimensions).
    #[error("invalid kernel input: {0}")]
    Input(String),
    /// A CUDA driver, cuBLAS or module-loading call failed.
    #[error("CUDA: {0}")]
    Cuda(String),
}

pub type Result<T> = std::result::Result<T, KernelError>;

/// Checks that `data` holds whole rows of `dim` columns; returns the row count.
pub(crate) fn rows_of(data: &[f32], dim: usize, what: &str) -> Result<usize> {
    if dim == 0 || !data.len().is_multiple_of(dim) {
        return Err(KernelError::Input(format!(
            "{what}: {} values are not whole rows of {dim} columns",
            data.len()
        )));
    }
    Ok(data.len() / dim)
}
