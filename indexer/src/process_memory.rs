//! The process's resident memory, as Linux reports it in /proc/self/status: what a run
//! report records of its peak, so that a nightly job can be sized for its corpus.

/// Peak resident set size of this process so far (VmHWM), MiB; `None` where the kernel does
/// not report it (not Linux).
pub fn peak_rss_mib() -> Option<f64> {
    status_mib("VmHWM:")
}

/// Resident set size of this process now (VmRSS), MiB; `None` where not reported.
pub fn rss_mib() -> Option<f64> {
    status_mib("VmRSS:")
}

/// A `/proc/self/status` memory field (given there in kB), e.g. `RssAnon:`, in MiB.
pub fn status_mib(field: &str) -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with(field))?;
    let kib: u64 = line[field.len()..].split_whitespace().next()?.parse().ok()?;
    Some(kib as f64 / 1024.0)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn the_peak_follows_memory_the_process_touches() {
        let before = peak_rss_mib().expect("Linux reports VmHWM");
        // 256 MiB written page by page: resident, so the peak must pass it.
        let touched = vec![1u8; 256 << 20];
        let now = rss_mib().expect("Linux reports VmRSS");
        let after = peak_rss_mib().unwrap();
        assert!(after >= now && now >= 256.0, "peak {after} MiB, now {now} MiB");
        assert!(
            after >= before + 200.0 || before >= 256.0,
            "peak {before} -> {after} MiB"
        );
        assert_eq!(touched.iter().map(|&b| b as usize).sum::<usize>(), 256 << 20);
    }
}
