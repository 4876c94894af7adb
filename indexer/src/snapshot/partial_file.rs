//! A file written beside its final place as `<name>.partial` and renamed into place once it
//! is complete, so a reader never sees half a file; dropped before that, it is removed.

use std::path::{Path, PathBuf};

pub(super) struct PartialFile {
    partial: PathBuf,
    target: PathBuf,
    finished: bool,
    /// Whether dropping it unfinished also removes its folder, if that is then empty.
    owns_folder: bool,
}

impl PartialFile {
    /// A partial file for `target` (its folder must exist).
    pub(super) fn beside(target: PathBuf) -> Self {
        let mut partial = target.clone().into_os_string();
        partial.push(".partial");
        Self {
            partial: partial.into(),
            target,
            finished: false,
            owns_folder: false,
        }
    }

    /// The same, for a file whose folder exists only for it and its siblings (a new
    /// segment's): dropped unfinished, it removes the folder too once nothing is left in it.
    pub(super) fn in_own_folder(target: PathBuf) -> Self {
        let mut file = Self::beside(target);
        file.owns_folder = true;
        file
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
            if let Some(folder) = self.owns_folder.then(|| self.partial.parent()).flatten() {
                // Fails, as it should, while anything is left in the folder.
                let _ = std::fs::remove_dir(folder);
            }
        }
    }
}
