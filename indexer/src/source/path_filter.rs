//! Which listed paths a source leaves out: hidden files and folders, `--exclude` globs, and
//! paths that match no `--include` glob. Shared by every source.

use globset::{Glob, GlobSet, GlobSetBuilder};

use crate::error::{IndexerError, Result};

pub(super) struct PathFilter {
    include: Option<GlobSet>,
    exclude: GlobSet,
}

fn glob_set(patterns: &[String]) -> Result<GlobSet> {
    let mut builder = GlobSetBuilder::new();
    for pattern in patterns {
        let glob = Glob::new(pattern).map_err(|e| IndexerError::Config(format!("glob `{pattern}`: {e}")))?;
        builder.add(glob);
    }
    builder.build().map_err(|e| IndexerError::Config(e.to_string()))
}

impl PathFilter {
    pub fn new(include: &[String], exclude: &[String]) -> Result<Self> {
        let include = if include.is_empty() {
            None
        } else {
            Some(glob_set(include)?)
        };
        Ok(Self {
            include,
            exclude: glob_set(exclude)?,
        })
    }

    /// Why the file at `relative` (a `/`-separated path below the source) is left out, if it is.
    pub fn skip_reason(&self, relative: &str) -> Option<String> {
        self.folder_skip_reason(relative)
            .or_else(|| self.not_included_reason(relative))
    }

    /// Why the file at `relative`, neither hidden nor excluded, is left out: it matches no
    /// `--include` glob.
    pub fn not_included_reason(&self, relative: &str) -> Option<String> {
        match &self.include {
            Some(include) if !include.is_match(relative) => Some("matches no --include pattern".into()),
            _ => None,
        }
    }

    /// Why the folder at `relative` is not walked, if it is not: hidden or excluded. The
    /// `--include` globs name files, so a folder is walked whatever they say
    /// (`--include '**/corpus.jsonl'` reaches `a/corpus.jsonl` through `a`).
    pub fn folder_skip_reason(&self, relative: &str) -> Option<String> {
        if relative.split('/').any(|part| part.starts_with('.')) {
            return Some("hidden file".into());
        }
        if self.exclude.is_match(relative) {
            return Some("matches an --exclude pattern".into());
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn include_globs_name_files_and_leave_folders_walked() {
        let filter = PathFilter::new(&["**/corpus.jsonl".into()], &["skip/**".into(), "skip".into()]).unwrap();
        assert_eq!(filter.folder_skip_reason("msmarco"), None);
        assert_eq!(filter.skip_reason("msmarco/corpus.jsonl"), None);
        assert!(filter
            .skip_reason("msmarco/queries.jsonl")
            .unwrap()
            .contains("--include"));
        assert!(
            filter.skip_reason("msmarco").is_some(),
            "a file named like the folder is not included"
        );
        assert!(filter.folder_skip_reason("skip").unwrap().contains("--exclude"));
        assert!(filter.folder_skip_reason("a/.git").unwrap().contains("hidden"));
    }
}
