//! Facts about the machine a run happened on, recorded with every result.

use serde::{Deserialize, Serialize};
use std::path::Path;
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Host {
    pub cpu_model: String,
    pub cpus: usize,
    pub kernel: String,
    pub os: String,
    pub lockmatrix_commit: String,
    pub lockmatrix_dirty: bool,
    /// Which machine this is ([`machine`]): two VMs of one CPU model are
    /// two testbeds. `None` in runs from before it was recorded.
    #[serde(default)]
    pub machine: Option<String>,
}

/// A machine's identity from its `/etc/machine-id` (`text`): a hash of it,
/// as systemd asks of anything that shows the id outside the machine. A
/// fresh CI VM has a new one, a self-hosted runner keeps its own.
pub fn machine(text: &str) -> Option<String> {
    let id = text.trim();
    (!id.is_empty()).then(|| {
        crate::file::sha256(format!("lockmatrix machine {id}").as_bytes())[..16].to_string()
    })
}

fn first_line_with(path: &str, key: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()?
        .lines()
        .find(|l| l.starts_with(key))
        .map(|l| {
            l.split_once(['=', ':'])
                .map_or(l, |(_, v)| v)
                .trim()
                .trim_matches('"')
                .to_string()
        })
}

/// Whether the checkout at `root` has uncommitted changes to tracked files.
pub fn dirty(root: &Path) -> bool {
    collect(root).lockmatrix_dirty
}

pub fn collect(root: &Path) -> Host {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(root)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    Host {
        cpu_model: first_line_with("/proc/cpuinfo", "model name")
            .unwrap_or_else(|| "unknown".into()),
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map_or("unknown".into(), |s| s.trim().to_string()),
        os: first_line_with("/etc/os-release", "PRETTY_NAME").unwrap_or_else(|| "unknown".into()),
        lockmatrix_commit: git(&["rev-parse", "HEAD"]).unwrap_or_else(|| "unknown".into()),
        lockmatrix_dirty: git(&["status", "--porcelain", "--untracked-files=no"])
            .is_some_and(|s| !s.is_empty()),
        machine: std::fs::read_to_string("/etc/machine-id")
            .ok()
            .and_then(|t| machine(&t)),
    }
}

/// Seconds since the epoch as UTC `YYYY-MM-DDTHH:MM:SSZ`.
pub fn utc(secs: u64) -> String {
    // Civil-from-days (H. Hinnant's algorithm): days since 1970-01-01 to y-m-d.
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

pub fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_machine_is_named_by_a_hash_of_its_id_never_the_id() {
        let id = "4f1c2a0b8e9d47c6a5b3d2e1f0a9b8c7\n";
        let m = machine(id).unwrap();
        assert_eq!(m.len(), 16);
        assert!(!id.contains(&m));
        assert_eq!(machine(id), Some(m.clone()));
        assert_ne!(machine("5f1c2a0b8e9d47c6a5b3d2e1f0a9b8c7"), Some(m));
        assert_eq!(machine(" \n"), None);
    }

    #[test]
    fn formats_utc_dates() {
        assert_eq!(utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc(1_796_000_000), "2026-11-30T00:53:20Z");
    }

    #[test]
    fn reads_this_machine() {
        let h = collect(Path::new(env!("CARGO_MANIFEST_DIR")));
        assert!(h.cpus >= 1);
        assert_ne!(h.kernel, "unknown");
    }
}
