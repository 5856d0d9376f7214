//! Which container engine runs the image (Podman, else Docker), whether it
//! answers, and the sandbox settings its `run` and `build` need here.

use super::setup::SetupError;
pub use super::{Kind, ENGINE_VARIABLE};
use crate::toolchain::{command_version, which};
use std::path::PathBuf;
use std::process::Command;

/// An engine that answered `info`.
#[derive(Debug, Clone)]
pub struct Engine {
    pub kind: Kind,
    pub program: PathBuf,
    /// Its `--version` line.
    pub version: String,
    /// Options before the subcommand (`--cgroup-manager=cgroupfs`), found
    /// needed by [`Engine::probe_run`].
    pub global: Vec<String>,
    /// Options of `run` and `build` (`--ulimit ...`), likewise.
    pub limits: Vec<String>,
    /// `run --init` works: an init process passes Ctrl-C on to the
    /// matrix (as process 1 it would ignore it).
    pub init: bool,
}

impl Engine {
    /// The first engine on PATH that answers `info`; when none does, why
    /// the first one found does not (a Docker client without a daemon, no
    /// permission, a Podman machine that is not started).
    pub fn find() -> Result<Engine, SetupError> {
        let wanted: Vec<Kind> = match std::env::var(ENGINE_VARIABLE) {
            Ok(name) if !name.is_empty() => match Kind::from_name(&name) {
                Some(k) => vec![k],
                None => return Err(SetupError::UnknownEngine { name }),
            },
            _ => vec![Kind::Podman, Kind::Docker],
        };
        let mut first_failure = None;
        for kind in wanted.iter().copied() {
            let Some(program) = which(kind.name()) else {
                continue;
            };
            let out = Command::new(&program).arg("info").output();
            match out {
                Ok(o) if o.status.success() => {
                    return Ok(Engine {
                        kind,
                        version: command_version(Command::new(&program).arg("--version")),
                        program,
                        global: Vec::new(),
                        limits: Vec::new(),
                        init: true,
                    })
                }
                Ok(o) => {
                    let detail = String::from_utf8_lossy(&o.stderr).trim().to_string();
                    first_failure.get_or_insert(classify_info(kind, program, detail));
                }
                Err(e) => {
                    first_failure.get_or_insert(classify_info(kind, program, e.to_string()));
                }
            }
        }
        Err(first_failure.unwrap_or(SetupError::NoEngine {
            only: (wanted.len() == 1).then(|| wanted[0].name()),
        }))
    }

    /// The engine's command with the global options found needed.
    pub fn command(&self) -> Command {
        let mut c = Command::new(&self.program);
        c.args(&self.global);
        c
    }

    /// Where the engine keeps its images, when it is a directory of this
    /// machine (not inside a `podman machine` VM).
    pub fn storage(&self) -> Option<PathBuf> {
        let format = match self.kind {
            Kind::Podman => "{{.Store.GraphRoot}}",
            Kind::Docker => "{{.DockerRootDir}}",
        };
        let out = self
            .command()
            .args(["info", "--format", format])
            .output()
            .ok()?;
        let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        (out.status.success() && dir.is_dir()).then_some(dir)
    }

    /// Runs `true` in `image`; where that fails for a sandbox reason this
    /// machine's settings explain (resource limits above this host's hard
    /// limits, cgroups Podman cannot manage), adds the option that fixes
    /// it and tries again. Returns what was added and why, for one line
    /// of output; an error when it still cannot run.
    pub fn probe_run(&mut self, image: &str) -> Result<Vec<String>, SetupError> {
        let mut said = Vec::new();
        for _ in 0..12 {
            let out = self
                .command()
                .arg("run")
                .arg("--rm")
                .args(self.init.then_some("--init"))
                .args(&self.limits)
                .args([image, "true"])
                .output()
                .map_err(|e| SetupError::CannotRun {
                    engine: self.kind.name(),
                    detail: e.to_string(),
                })?;
            if out.status.success() {
                return Ok(said);
            }
            let detail = String::from_utf8_lossy(&out.stderr).trim().to_string();
            match sandbox_fix(self.kind, &detail, &self.limits, &self.global) {
                Some(Fix::Limits(limits, why)) => {
                    self.limits = limits;
                    // Only the limits that finally worked are worth saying.
                    said.retain(|w: &String| !w.contains("--ulimit"));
                    said.push(why);
                }
                Some(Fix::Global(options, why)) => {
                    self.global.extend(options);
                    said.push(why);
                }
                Some(Fix::NoInit(why)) => {
                    self.init = false;
                    said.push(why);
                }
                Some(Fix::Missing(e)) => return Err(e),
                None => {
                    return Err(SetupError::CannotRun {
                        engine: self.kind.name(),
                        detail,
                    })
                }
            }
        }
        Err(SetupError::CannotRun {
            engine: self.kind.name(),
            detail: format!("still failing after: {}", said.join("; ")),
        })
    }
}

/// Why `info` failed, as the error that says how to fix it.
fn classify_info(kind: Kind, program: PathBuf, detail: String) -> SetupError {
    let lower = detail.to_lowercase();
    if lower.contains("permission denied")
        || lower.contains("subuid")
        || lower.contains("newuidmap")
    {
        SetupError::Permission { kind, detail }
    } else if kind == Kind::Docker
        && (lower.contains("cannot connect to the docker daemon")
            || lower.contains("is the docker daemon running"))
    {
        SetupError::NoDaemon { program, detail }
    } else if kind == Kind::Podman
        && (lower.contains("podman machine") || lower.contains("cannot connect to podman"))
    {
        SetupError::NoMachine { detail }
    } else {
        SetupError::CannotRun {
            engine: kind.name(),
            detail,
        }
    }
}

enum Fix {
    Limits(Vec<String>, String),
    Global(Vec<String>, String),
    NoInit(String),
    /// The fix needs a program this host lacks: the error naming it.
    Missing(SetupError),
}

/// The limit a refusal names: open files (`RLIMIT_NOFILE`, runc's type 7)
/// or processes (`RLIMIT_NPROC`, type 6).
fn refused_limit(lower: &str) -> Option<&'static str> {
    if lower.contains("rlimit type 6") || lower.contains("rlimit_nproc") {
        Some("nproc")
    } else if lower.contains("rlimit") || lower.contains("ulimit") {
        Some("nofile")
    } else {
        None
    }
}

/// The value a `--ulimit=NAME=N:N` in `limits` sets.
fn current(limits: &[String], name: &str) -> Option<u64> {
    limits.iter().find_map(|l| {
        l.strip_prefix(&format!("--ulimit={name}="))?
            .split(':')
            .next()?
            .parse()
            .ok()
    })
}

/// The option that fixes a sandbox's refusal, if it is one of those known.
/// A limit refused is set to this host's hard limit; refused again (a
/// sandbox may cap it lower than it shows: here nproc 32768 of 96369),
/// halved, down to 1024.
fn sandbox_fix(kind: Kind, detail: &str, limits: &[String], global: &[String]) -> Option<Fix> {
    let lower = detail.to_lowercase();
    if lower.contains("init") && (lower.contains("not found") || lower.contains("no such file")) {
        return Some(Fix::NoInit(format!(
            "{} run without --init (no init binary: Ctrl-C stops the engine, which stops the matrix)",
            kind.name()
        )));
    }
    if let Some(name) = refused_limit(&lower) {
        let (nofile, nproc) = hard_limits();
        let hard = if name == "nproc" { nproc } else { nofile };
        let value = match current(limits, name) {
            None => hard,
            Some(v) if v / 2 >= 1024 => v / 2,
            Some(_) => return None,
        };
        let mut limits: Vec<String> = limits
            .iter()
            .filter(|l| !l.starts_with(&format!("--ulimit={name}=")))
            .cloned()
            .collect();
        limits.push(format!("--ulimit={name}={value}:{value}"));
        let why = format!(
            "{} {} (the engine's default limits exceed what this sandbox allows)",
            kind.name(),
            limits.join(" ")
        );
        return Some(Fix::Limits(limits, why));
    }
    let cgroupfs = "--cgroup-manager=cgroupfs".to_string();
    if kind == Kind::Podman && lower.contains("cgroup") && !global.contains(&cgroupfs) {
        // Debian's podman brings crun, which refuses hybrid cgroups;
        // runc runs there, and nothing installs it but the user.
        if !runc_installed() {
            return Some(Fix::Missing(SetupError::Missing {
                program: "runc",
                package: "runc",
                why: format!(
                    "podman's runtime refused this host's cgroups ({}); podman runs with --cgroup-manager=cgroupfs --runtime=runc here",
                    detail.lines().last().unwrap_or(detail).trim()
                ),
            }));
        }
        let why = "podman --cgroup-manager=cgroupfs --runtime=runc (its default cannot manage this host's cgroups)".to_string();
        return Some(Fix::Global(vec![cgroupfs, "--runtime=runc".into()], why));
    }
    None
}

/// Whether runc is installed where Podman looks for it (PATH, or
/// `/usr/sbin` and `/usr/bin` a user's PATH may lack).
fn runc_installed() -> bool {
    let on_disk = ["/usr/bin/runc", "/usr/sbin/runc", "/usr/local/bin/runc"]
        .iter()
        .any(|p| std::path::Path::new(p).is_file());
    std::env::var_os(RUNC_ABSENT).is_none() && (which("runc").is_some() || on_disk)
}

/// Set, runc is taken to be absent: a test of the message a host without
/// it gets, on a host that has it.
pub const RUNC_ABSENT: &str = "LOCKMATRIX_TEST_NO_RUNC";

/// This process's hard limits of open files and processes: no engine can
/// give a container more. Unlimited (or unreadable) is 1048576, Podman's
/// own default.
fn hard_limits() -> (u64, u64) {
    let read = |r: &libc::rlimit, ok: bool| {
        if !ok || r.rlim_max == libc::RLIM_INFINITY {
            1_048_576
        } else {
            r.rlim_max
        }
    };
    let mut nofile = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    let mut nproc = nofile;
    // SAFETY: getrlimit writes one rlimit into memory we own.
    let (a, b) = unsafe {
        (
            libc::getrlimit(libc::RLIMIT_NOFILE, &mut nofile) == 0,
            libc::getrlimit(libc::RLIMIT_NPROC, &mut nproc) == 0,
        )
    };
    (read(&nofile, a), read(&nproc, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_docker_client_without_a_daemon_is_told_to_start_it_or_use_podman() {
        let detail = "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?";
        let e = classify_info(Kind::Docker, "/usr/bin/docker".into(), detail.into());
        assert!(matches!(e, SetupError::NoDaemon { .. }), "{e:?}");
        let text = e.to_string();
        assert!(text.contains("sudo systemctl start docker"), "{text}");
        assert!(text.contains("podman"), "{text}");
    }

    #[test]
    fn permission_and_a_stopped_podman_machine_name_their_fixes() {
        let e = classify_info(
            Kind::Docker,
            "docker".into(),
            "permission denied while trying to connect to the Docker daemon socket".into(),
        );
        assert!(matches!(e, SetupError::Permission { .. }), "{e:?}");
        assert!(e.to_string().contains("usermod -aG docker"), "{e}");
        let e = classify_info(
            Kind::Podman,
            "podman".into(),
            "cannot find UID/GID for user lm: no subuid ranges found for user \"lm\" in /etc/subuid".into(),
        );
        assert!(e.to_string().contains("--add-subuids 100000-165535"), "{e}");
        let e = classify_info(
            Kind::Podman,
            "podman".into(),
            "Cannot connect to Podman. Please verify your connection to the Linux system using `podman system connection list`, or try `podman machine init` and `podman machine start`".into(),
        );
        assert!(matches!(e, SetupError::NoMachine { .. }), "{e:?}");
        assert!(e.to_string().contains("podman machine start"), "{e}");
    }

    #[test]
    fn a_refused_limit_is_set_to_the_hard_limit_then_halved_and_nothing_else_is_fixed() {
        let nofile = "runc create failed: error setting rlimits for ready process: error setting rlimit type 7: operation not permitted";
        let Some(Fix::Limits(limits, why)) = sandbox_fix(Kind::Podman, nofile, &[], &[]) else {
            panic!("no fix for {nofile}");
        };
        let (hard_nofile, hard_nproc) = hard_limits();
        assert_eq!(
            limits,
            [format!("--ulimit=nofile={hard_nofile}:{hard_nofile}")]
        );
        assert!(why.contains("sandbox"), "{why}");
        // Then processes: their hard limit, then half of it, and so on.
        let nproc = "error setting rlimit type 6: operation not permitted";
        let Some(Fix::Limits(limits, _)) = sandbox_fix(Kind::Podman, nproc, &limits, &[]) else {
            panic!("no fix for {nproc}");
        };
        assert_eq!(current(&limits, "nproc"), Some(hard_nproc));
        assert_eq!(current(&limits, "nofile"), Some(hard_nofile));
        let Some(Fix::Limits(halved, _)) = sandbox_fix(Kind::Podman, nproc, &limits, &[]) else {
            panic!("not halved");
        };
        assert_eq!(current(&halved, "nproc"), Some(hard_nproc / 2));
        assert_eq!(halved.len(), 2);
        let floor = vec!["--ulimit=nproc=1500:1500".to_string()];
        assert!(sandbox_fix(Kind::Podman, nproc, &floor, &[]).is_none());
        // crun says it by name.
        let crun = "crun: setrlimit `RLIMIT_NPROC`: Operation not permitted";
        assert!(matches!(
            sandbox_fix(Kind::Podman, crun, &[], &[]),
            Some(Fix::Limits(l, _)) if l[0].starts_with("--ulimit=nproc=")
        ));
        // crun refusing hybrid cgroups: runc, or the command that installs it.
        let hybrid = "Error: OCI runtime error: crun: cgroups in hybrid mode not supported, drop all controllers from cgroupv2";
        std::env::set_var(RUNC_ABSENT, "1");
        match sandbox_fix(Kind::Podman, hybrid, &[], &[]) {
            Some(Fix::Missing(e)) => {
                let e = e.to_string();
                assert!(e.contains("runc is not installed"), "{e}");
                assert!(e.contains("`sudo apt-get install runc`"), "{e}");
                assert!(e.contains("hybrid mode"), "{e}");
            }
            _ => panic!("runc not named"),
        }
        std::env::remove_var(RUNC_ABSENT);
        // Anything else is not a sandbox setting.
        assert!(sandbox_fix(Kind::Podman, "image not known", &[], &[]).is_none());
    }
}
