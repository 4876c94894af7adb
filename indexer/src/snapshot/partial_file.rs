//! A file written beside its final place as `<name>.partial` and renamed into place once it
//! is complete, so a reader never sees half a file; dropped before that, it is removed.

use std::path::{Path, PathBuf};

pub(super) struct PartialFile {
    partial: PathBuf,
    target: PathBuf,
    finished: bool,
}

impl PartialFile {
    /// A partial file for `target` (its folder must exist).
    pub(super) fn beside(target: PathBuf) -> Self {
        let mut partial = target.clone().into_os_string();
        partial.push(".partial");
        Self { partial: partial.into(), target, finished: false }
    }

    /// Where to write the file.
    pub(super) fn path(&self) -> &Path {
        &self.partial
    }

    /// Renames the written file into its place.
    pub(super) fn finish(mut self) -> std::io::Result<()> {
        std::fs::rename(&self.partial, &self.target)?;
        self.finished = true;
        Ok(())
    }
}

impl Drop for PartialFile {
    /// A file never finished (its run failed, or its future was dropped) does not stay behind.
    fn drop(&mut self) {
        if !self.finished {
            let _ = std::fs::remove_file(&self.partial);
        }
    }
}
