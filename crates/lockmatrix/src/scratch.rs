//! What a run makes that must not outlive it: a path crate's copy, the
//! credentials file the container backend mounts. Each is a [`Scratch`],
//! registered here before it is created and removed when dropped (a
//! normal end, an error); on SIGINT, SIGTERM or SIGHUP the command line
//! calls [`remove_all`] before the process dies (`xtask/src/interrupt.rs`).
//! What a SIGKILL leaves is pruned by the next run (each owner's `prune`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// The paths of every live [`Scratch`].
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Held while something must finish before the process may die (the
/// renames of a baseline update, a file written into a scratch path):
/// [`remove_all`] waits for it, and keeps it until the process is gone.
static HOLD: RwLock<()> = RwLock::new(());

/// Set by [`remove_all`]: nothing more is written into a scratch path.
static STOPPING: AtomicBool = AtomicBool::new(false);

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
pub fn hold() -> RwLockReadGuard<'static, ()> {
    HOLD.read().unwrap_or_else(|e| e.into_inner())
}

/// To write one file into a scratch path: a [`hold`], or `None` once
/// [`remove_all`] has begun (the writer stops: what it would write would
/// outlive the removal).
pub fn writing() -> Option<RwLockReadGuard<'static, ()>> {
    let held = hold();
    (!STOPPING.load(Ordering::SeqCst)).then_some(held)
}

/// Every live scratch path removed, and nothing written or held since:
/// keep it until the process is gone.
pub struct Removed {
    pub paths: Vec<PathBuf>,
    _held: RwLockWriteGuard<'static, ()>,
}

/// Removes every live scratch path, once nothing is held, and keeps
/// writers out from then on: what the process does before it dies of a
/// signal.
pub fn remove_all() -> Removed {
    let held = HOLD.write().unwrap_or_else(|e| e.into_inner());
    STOPPING.store(true, Ordering::SeqCst);
    let live: Vec<PathBuf> = std::mem::take(&mut *lock(&LIVE));
    for p in &live {
        remove(p);
    }
    Removed {
        paths: live,
        _held: held,
    }
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

    // remove_all is process-wide: it is tested end to end, by signals
    // (xtask's e2e hostile_round5), not beside other unit tests.
    #[test]
    fn a_scratch_path_goes_when_dropped() {
        let d = std::env::temp_dir().join(format!("lm-scratch-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let a = Scratch::new(d.join("a"));
        std::fs::create_dir_all(a.path().join("deep")).unwrap();
        std::fs::write(a.path().join("deep/.env"), "TOKEN=1").unwrap();
        let b = Scratch::new(d.join("b"));
        std::fs::write(b.path(), "secret").unwrap();
        assert!(lock(&LIVE).contains(&d.join("a")));
        drop(a);
        assert!(!d.join("a").exists());
        assert!(!lock(&LIVE).contains(&d.join("a")));
        assert!(d.join("b").exists());
        drop(b);
        assert!(!d.join("b").exists());
        assert!(writing().is_some());
        std::fs::remove_dir_all(&d).unwrap();
    }
}
