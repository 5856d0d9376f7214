//! What a run makes that must not outlive it: a path crate's copy, the
//! credentials file the container backend mounts. Each is a [`Scratch`],
//! registered here before it is created and removed when dropped (a
//! normal end, an error); on SIGINT, SIGTERM or SIGHUP the command line
//! calls [`remove_all`] before the process dies (`xtask/src/interrupt.rs`).
//! What a SIGKILL leaves is pruned by the next run (each owner's `prune`).

use std::path::{Path, PathBuf};
use std::sync::{Mutex, RwLock};

/// The paths of every live [`Scratch`].
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Held while something must finish before the process may die (the
/// renames of a baseline update): [`remove_all`] waits for it.
static HOLD: RwLock<()> = RwLock::new(());

/// A file or directory removed when dropped, and by [`remove_all`].
#[derive(Debug)]
pub struct Scratch(PathBuf);

impl Scratch {
    /// Registers `path`, which the caller then creates: registered first,
    /// so that no moment exists when it is there and unknown here.
    pub fn new(path: PathBuf) -> Scratch {
        lock(&LIVE).push(path.clone());
        Scratch(path)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        remove(&self.0);
        let mut live = lock(&LIVE);
        if let Some(i) = live.iter().position(|p| *p == self.0) {
            live.swap_remove(i);
        }
    }
}

/// Until the guard is dropped, [`remove_all`] (and so a signal's end of
/// the process) waits.
pub fn hold() -> std::sync::RwLockReadGuard<'static, ()> {
    HOLD.read().unwrap_or_else(|e| e.into_inner())
}

/// Removes every live scratch path, once nothing is held: what the
/// process does before it dies of a signal. Returns what was removed.
pub fn remove_all() -> Vec<PathBuf> {
    let _wait = HOLD.write().unwrap_or_else(|e| e.into_inner());
    let live: Vec<PathBuf> = std::mem::take(&mut *lock(&LIVE));
    for p in &live {
        remove(p);
    }
    live
}

fn remove(p: &Path) {
    match std::fs::symlink_metadata(p) {
        Ok(m) if m.is_dir() => {
            // A writer may still be adding to it: a second pass takes what
            // the first raced with.
            for _ in 0..2 {
                let _ = std::fs::remove_dir_all(p);
            }
        }
        Ok(_) => {
            let _ = std::fs::remove_file(p);
        }
        Err(_) => {}
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scratch_path_goes_when_dropped_or_all_at_once() {
        let d = std::env::temp_dir().join(format!("lm-scratch-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let a = Scratch::new(d.join("a"));
        std::fs::create_dir_all(a.path().join("deep")).unwrap();
        std::fs::write(a.path().join("deep/.env"), "TOKEN=1").unwrap();
        let b = Scratch::new(d.join("b"));
        std::fs::write(b.path(), "secret").unwrap();
        drop(a);
        assert!(!d.join("a").exists());
        assert!(d.join("b").exists());
        let removed = remove_all();
        assert!(removed.contains(&d.join("b")), "{removed:?}");
        assert!(!d.join("b").exists());
        drop(b);
        std::fs::remove_dir_all(&d).unwrap();
    }
}
