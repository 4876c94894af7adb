//! Small JSON records on disk, written atomically (temp file, fsync, rename) so a crash
//! never leaves half a record. Each writer has a temporary file of its own, and the writers
//! of one record take turns ([`write_json_latest`]), so concurrent requests neither trip
//! over each other's temporary file nor put an older state over a newer one.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use serde::de::DeserializeOwned;
use serde::Serialize;

/// The lock the writers of the record at `path` take turns by.
fn turn_of(path: &Path) -> Arc<Mutex<()>> {
    static TURNS: OnceLock<Mutex<HashMap<PathBuf, Arc<Mutex<()>>>>> = OnceLock::new();
    TURNS
        .get_or_init(Default::default)
        .lock()
        .expect("record turns lock")
        .entry(path.to_path_buf())
        .or_default()
        .clone()
}

/// Writes the record `make` gives, taken while no other writer of `path` works: the last
/// writer to finish writes the latest state.
pub fn write_json_latest<T: Serialize>(path: &Path, make: impl FnOnce() -> T) -> std::io::Result<()> {
    let turn = turn_of(path);
    let _turn = turn.lock().expect("record turn lock");
    write_json(path, &make())
}

pub fn write_json<T: Serialize>(path: &Path, value: &T) -> std::io::Result<()> {
    static WRITES: AtomicU64 = AtomicU64::new(0);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    // A temporary name no other writer (thread or process) uses.
    let tmp = path.with_extension(format!(
        "json.{}-{}.tmp",
        std::process::id(),
        WRITES.fetch_add(1, Ordering::Relaxed)
    ));
    let bytes = serde_json::to_vec_pretty(value).map_err(std::io::Error::other)?;
    {
        use std::io::Write;
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(&bytes)?;
        file.sync_all()?;
    }
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// Reads a record; `Ok(None)` when the file does not exist.
pub fn read_json<T: DeserializeOwned>(path: &Path) -> std::io::Result<Option<T>> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| std::io::Error::other(format!("{}: {e}", path.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}
