//! Why the container backend cannot start, each with the exact fix, and
//! the free space it needs: all found before anything is built.

use super::{Kind, ENGINE_VARIABLE, REGISTRY_BASE, RUST_VARIABLE};
use std::path::PathBuf;

/// Why the container backend cannot start, each with the exact fix. All
/// are found before anything is built.
#[derive(Debug)]
pub enum SetupError {
    /// Neither Podman nor Docker is on PATH (`only`: the one asked for).
    NoEngine {
        only: Option<&'static str>,
    },
    /// `LOCKMATRIX_ENGINE` names something else.
    UnknownEngine {
        name: String,
    },
    /// A Docker client whose daemon does not answer.
    NoDaemon {
        program: PathBuf,
        detail: String,
    },
    /// The engine refused this user.
    Permission {
        kind: Kind,
        detail: String,
    },
    /// Podman on macOS or Windows without a running `podman machine`.
    NoMachine {
        detail: String,
    },
    /// The engine cannot run a container, for a reason not known here.
    CannotRun {
        engine: &'static str,
        detail: String,
    },
    /// Too little free space where the image or the builds go.
    NoSpace {
        dir: PathBuf,
        free_gib: f64,
        need_gib: f64,
        what: &'static str,
    },
    /// No registry gives debian:12 and the base cannot be made here.
    NoBase {
        why: String,
        commands: Vec<String>,
    },
    /// The image build failed: the command and its log.
    Build {
        command: String,
        log: PathBuf,
        tail: String,
    },
    /// The image's compiler is not the one it was asked to pin.
    Pin {
        want: String,
        got: String,
    },
    /// A program the set-up needs is not installed: its package.
    Missing {
        program: &'static str,
        package: &'static str,
        why: String,
    },
    /// The repository's Containerfile or its helper cannot be read.
    Inputs {
        path: PathBuf,
        why: String,
    },
    Cache(crate::cache::CacheError),
}

impl std::fmt::Display for SetupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use SetupError::*;
        match self {
            NoEngine { only: Some(name) } => write!(
                f,
                "no container engine: {name} ({}) is not on PATH; install it, or unset {} to use whichever of podman and docker is installed",
                ENGINE_VARIABLE,
                ENGINE_VARIABLE
            ),
            NoEngine { only: None } => f.write_str(
                "no container engine: neither podman nor docker is on PATH; install Podman (Fedora: `sudo dnf install podman`; Debian/Ubuntu: `sudo apt-get install podman`; Arch: `sudo pacman -S podman`; macOS: `brew install podman && podman machine init && podman machine start`), or run on Debian/Ubuntu as root with --backend apt",
            ),
            UnknownEngine { name } => write!(
                f,
                "{}={name:?}: not an engine lockmatrix drives; set it to podman or docker",
                ENGINE_VARIABLE
            ),
            NoDaemon { program, detail } => write!(
                f,
                "{} is a client whose daemon does not answer ({detail}); start the daemon: `sudo systemctl start docker`, or install Podman, which needs none: `sudo apt-get install podman` / `sudo dnf install podman`",
                program.display()
            ),
            Permission {
                kind: Kind::Docker,
                detail,
            } => write!(
                f,
                "docker refused this user ({detail}); add yourself to its group and log in again: `sudo usermod -aG docker $USER`, or use rootless Podman: {}=podman",
                ENGINE_VARIABLE
            ),
            Permission {
                kind: Kind::Podman,
                detail,
            } => write!(
                f,
                "podman refused this user ({detail}); give it subordinate ids and migrate: `sudo usermod --add-subuids 100000-165535 --add-subgids 100000-165535 $USER && podman system migrate`"
            ),
            NoMachine { detail } => write!(
                f,
                "podman has no running machine ({detail}); start one: `podman machine init && podman machine start`"
            ),
            CannotRun { engine, detail } => write!(
                f,
                "{engine} cannot run a container here: {detail}; check with `{engine} run --rm {} true` (docs/containers.md lists the sandbox settings that fixed it elsewhere)",
                REGISTRY_BASE
            ),
            NoSpace {
                dir,
                free_gib,
                need_gib,
                what,
            } => write!(
                f,
                "{}: {free_gib:.1} GiB free, {what} needs about {need_gib:.0} GiB; free space there (`podman system prune` / `docker system prune` remove unused images)",
                dir.display()
            ),
            NoBase { why, commands } => write!(
                f,
                "no base image: {why}; make it with:\n  {}",
                commands.join("\n  ")
            ),
            Build { command, log, tail } => write!(
                f,
                "building the image failed; its log is {} and ends:\n{tail}\nrun it again to see it whole:\n  {command}",
                log.display()
            ),
            Pin { want, got } => write!(
                f,
                "the image was to carry rustc-web {want} but has {got}; set {}={} (what Debian served) or remove the image to rebuild it",
                RUST_VARIABLE,
                crate::toolchain::Version::parse(got).map_or("?".into(), |v| format!("{}.{}", v.0, v.1))
            ),
            Missing {
                program,
                package,
                why,
            } => write!(
                f,
                "{why}, and {program} is not installed; install it: `sudo apt-get install {package}` (Fedora: `sudo dnf install {package}`; Arch: `sudo pacman -S {package}`)"
            ),
            Inputs { path, why } => write!(f, "{}: {why}", path.display()),
            Cache(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for SetupError {}

impl From<crate::cache::CacheError> for SetupError {
    fn from(e: crate::cache::CacheError) -> SetupError {
        SetupError::Cache(e)
    }
}

/// Free space under `dir` in GiB, when it can be read.
pub fn free_gib(dir: &std::path::Path) -> Option<f64> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs fills one struct we own from a NUL-terminated path.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::statvfs(path.as_ptr(), &mut st) } == 0;
    ok.then(|| st.f_bavail as f64 * st.f_frsize as f64 / (1u64 << 30) as f64)
}

/// `dir` has at least `need_gib` free, or the error that says so.
pub fn check_space(
    dir: &std::path::Path,
    need_gib: f64,
    what: &'static str,
) -> Result<(), SetupError> {
    match free_gib(dir) {
        Some(free) if free < need_gib => Err(SetupError::NoSpace {
            dir: dir.to_path_buf(),
            free_gib: free,
            need_gib,
            what,
        }),
        _ => Ok(()),
    }
}
