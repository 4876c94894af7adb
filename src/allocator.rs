//! The process allocator: mimalloc, and how long it keeps freed memory.

/// mimalloc, not glibc's malloc: tokenization allocates small vectors per token, candle a
/// tensor per operation (glibc likely maps and unmaps the large ones). Parse + chunk 1.2x
/// and CPU embedding 1.4x faster with it; measured in bench/RESULTS.md.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in mimalloc v3's `mimalloc.h` (the `mi_option_e` enum; the
/// Rust bindings' constants predate it).
const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;

/// mimalloc v3's default purge delay, in milliseconds.
const MI_DEFAULT_PURGE_DELAY_MS: std::ffi::c_long = 1000;

extern "C" {
    fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
    fn mi_collect(force: bool);
    #[cfg(test)]
    fn mi_option_get(option: std::ffi::c_int) -> std::ffi::c_long;
}

/// For a command that runs to its end (an index run, a benchmark): freed memory stays with
/// the process for reuse instead of going back to the OS. Each batch of CPU embedding frees
/// and allocates again the same few hundred MB of tensors; returned, every page came back
/// as a fresh one the kernel must clear (a sixth of the CPU time). The peak is the same, the
/// memory is just not handed back before the end. `MIMALLOC_PURGE_DELAY`, when set, wins.
/// The server keeps mimalloc's default: it returns what an ingestion burst used.
pub fn keep_freed_memory() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
        return;
    }
    // SAFETY: sets one of mimalloc's options; any value is valid, -1 means never purge.
    unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
}

/// From here on freed memory goes back to the OS again (after mimalloc's default delay), and
/// what is free now goes back at once: an index run calls it when the embed stage ends, so
/// that the memory its batches used and the parse stage's leftovers are not held through the
/// publishing stages, whose allocations are few and large (the segment's vectors laid out in
/// row order, the FAISS and keyword indexes). 300k chunks: peak 2,387 → about 1,750 MiB
/// (bench/RESULTS.md). `MIMALLOC_PURGE_DELAY`, when set, wins.
pub fn hand_back_freed_memory() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
        return;
    }
    // SAFETY: sets one of mimalloc's options, then asks it to return what it can; both may be
    // called from any thread at any time.
    unsafe {
        mi_option_set(MI_OPTION_PURGE_DELAY, MI_DEFAULT_PURGE_DELAY_MS);
        mi_collect(true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_shot_commands_never_purge() {
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
            return;
        }
        // SAFETY: reads one of mimalloc's options.
        let before = unsafe { mi_option_get(MI_OPTION_PURGE_DELAY) };
        // mimalloc v3's default purge delay: the constant names that option, not another.
        assert_eq!(before, MI_DEFAULT_PURGE_DELAY_MS);
        keep_freed_memory();
        // SAFETY: as above.
        assert_eq!(unsafe { mi_option_get(MI_OPTION_PURGE_DELAY) }, -1);
        // The publishing stages of a run hand freed memory back again.
        hand_back_freed_memory();
        // SAFETY: as above.
        assert_eq!(
            unsafe { mi_option_get(MI_OPTION_PURGE_DELAY) },
            MI_DEFAULT_PURGE_DELAY_MS
        );
    }
}
