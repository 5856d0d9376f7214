//! The ssh runner: copy the static suite binary to the host named in
//! targets.yaml, run it there under `timeout`, read the results back from
//! its stdout, and remove what was copied.
//!
//! The private key comes from the environment (`LOCKMATRIX_SSH_KEY_<NAME>`
//! for one target, else `LOCKMATRIX_SSH_KEY`), never from targets.yaml.

use crate::config::{SshHost, Target};
use crate::runner::{Exit, Invocation, Outcome};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The environment variable (and CI secret) holding one target's key:
/// `LOCKMATRIX_SSH_KEY_` and the name upper-cased, every character that is
/// not a letter or digit as `_` (`rpi4.lab` -> `LOCKMATRIX_SSH_KEY_RPI4_LAB`).
pub fn key_variable(target: &str) -> String {
    let name: String = target
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("LOCKMATRIX_SSH_KEY_{name}")
}

/// The key for `target`, if the environment names one.
pub fn key_for(target: &Target) -> Option<PathBuf> {
    std::env::var_os(key_variable(&target.name))
        .or_else(|| std::env::var_os("LOCKMATRIX_SSH_KEY"))
        .map(PathBuf::from)
}

/// An open session: a temporary directory on the remote host.
pub struct Remote {
    host: SshHost,
    key: PathBuf,
    /// lockmatrix's own known-hosts file, in the cache.
    known_hosts: PathBuf,
    dir: String,
}

/// Options shared by ssh and scp: no prompts, a bounded connect time, and
/// host keys remembered in lockmatrix's cache rather than the user's file.
fn common_opts(key: &Path, known: &Path) -> Vec<String> {
    [
        "-i",
        &key.display().to_string(),
        "-o",
        "BatchMode=yes",
        "-o",
        "IdentitiesOnly=yes",
        "-o",
        "ConnectTimeout=10",
        "-o",
        "StrictHostKeyChecking=accept-new",
        "-o",
        &format!("UserKnownHostsFile={}", known.display()),
        "-o",
        "LogLevel=ERROR",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// The reason an ssh command failed, from its last line of stderr.
/// Why a step on an ssh host failed.
#[derive(Debug)]
pub enum SshError {
    /// No cache directory for lockmatrix's known-hosts file.
    Cache(crate::cache::CacheError),
    /// ssh itself could not be started.
    Spawn(std::io::Error),
    /// The binary to copy could not be read.
    Read {
        path: PathBuf,
        error: std::io::Error,
    },
    /// ssh ran and failed (or the host did): the last line it said.
    Refused(String),
}

impl std::fmt::Display for SshError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SshError::Cache(e) => e.fmt(f),
            SshError::Spawn(e) => write!(f, "cannot run ssh: {e}"),
            SshError::Read { path, error } => write!(f, "cannot read {}: {error}", path.display()),
            SshError::Refused(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for SshError {}

/// The last line ssh printed, without its `ssh: ` prefix.
fn refused(stderr: &[u8]) -> SshError {
    let text = String::from_utf8_lossy(stderr);
    let last = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("no message")
        .trim();
    SshError::Refused(last.strip_prefix("ssh: ").unwrap_or(last).to_string())
}

impl Remote {
    fn ssh(&self) -> Command {
        let mut c = Command::new("ssh");
        // User and host go in as option values and after `--`, so neither
        // can ever be read as an option (targets.yaml also vets both).
        c.args(common_opts(&self.key, &self.known_hosts))
            .args(["-p", &self.host.port.to_string(), "-l", &self.host.user])
            .args(["--", &self.host.host]);
        c
    }

    /// Connects and creates the remote working directory.
    pub fn open(host: &SshHost, key: &Path) -> Result<Remote, SshError> {
        let cache = crate::cache::dir().map_err(SshError::Cache)?;
        let mut r = Remote {
            host: host.clone(),
            key: key.to_path_buf(),
            known_hosts: cache.join("ssh_known_hosts"),
            dir: String::new(),
        };
        let out = r
            .ssh()
            .args(["mktemp", "-d", "/tmp/lockmatrix.XXXXXX"])
            .output()
            .map_err(SshError::Spawn)?;
        if !out.status.success() {
            return Err(refused(&out.stderr));
        }
        r.dir = String::from_utf8_lossy(&out.stdout).trim().to_string();
        Ok(r)
    }

    /// Copies `binary` into the remote directory as `name`, through ssh's
    /// stdin: it needs only a shell on the host (scp may need sftp).
    pub fn copy(&self, binary: &Path, name: &str) -> Result<(), SshError> {
        let file = std::fs::File::open(binary).map_err(|error| SshError::Read {
            path: binary.to_path_buf(),
            error,
        })?;
        let out = self
            .ssh()
            .arg(format!(
                "cat > {dir}/{name} && chmod +x {dir}/{name}",
                dir = self.dir
            ))
            .stdin(file)
            .output()
            .map_err(SshError::Spawn)?;
        if out.status.success() {
            Ok(())
        } else {
            Err(refused(&out.stderr))
        }
    }

    /// The remote CPU's model, as /proc/cpuinfo names it (x86 and most
    /// others say "model name"; powerpc says "cpu"), for the testbed.
    pub fn cpu_model(&self) -> Option<String> {
        let out = self.ssh().args(["cat", "/proc/cpuinfo"]).output().ok()?;
        let text = String::from_utf8_lossy(&out.stdout);
        ["model name", "cpu model", "cpu"].iter().find_map(|key| {
            text.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == *key).then(|| v.trim().to_string())
            })
        })
    }

    /// The remote host's identity ([`crate::host::machine`]).
    pub fn machine(&self) -> Option<String> {
        let out = self.ssh().args(["cat", "/etc/machine-id"]).output().ok()?;
        crate::host::machine(&String::from_utf8_lossy(&out.stdout))
    }

    /// The remote host's virtualisation, as `systemd-detect-virt` tells
    /// it (`host::describe_virtualization`); `None` without the tool
    /// there, so its timings compare with stored ones only if declared.
    pub fn virtualization(&self) -> Option<String> {
        let out = self
            .ssh()
            .args(["systemd-detect-virt --vm; echo '|'; systemd-detect-virt --container"])
            .output()
            .ok()?;
        let text = String::from_utf8_lossy(&out.stdout);
        let (vm, container) = text.split_once('|')?;
        let word = |s: &str| {
            let w = s.trim();
            (!w.is_empty() && !w.contains(char::is_whitespace)).then(|| w.to_string())
        };
        crate::host::describe_virtualization(
            Some(&word(vm)?),
            Some(&word(container)?),
            &crate::host::Evidence::default(),
        )
    }

    /// The remote host's kernel release.
    pub fn kernel(&self) -> Option<String> {
        let out = self.ssh().args(["uname", "-r"]).output().ok()?;
        let k = String::from_utf8_lossy(&out.stdout).trim().to_string();
        (out.status.success() && !k.is_empty()).then_some(k)
    }

    /// The remote shell command that runs `name` with a timeout and reports
    /// how it ended on a marker line, since ssh folds signals into 255.
    fn remote_command(&self, name: &str, args: &[String], timeout: Duration) -> String {
        let env: Vec<String> = crate::runner::CLEAN_ENV
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let argv: Vec<String> = args
            .iter()
            .map(|a| format!("'{}'", a.replace('\'', r"'\''")))
            .collect();
        format!(
            "cd {dir} && env -i {env} timeout -k 5 {secs} ./{name} {args}; echo \"{MARKER}$?\" >&2",
            dir = self.dir,
            env = env.join(" "),
            secs = timeout.as_secs().max(1),
            args = argv.join(" "),
        )
    }

    /// Runs a copied binary; the local timeout leaves the remote one room
    /// to act first and covers a host that stops answering.
    pub fn run(
        &self,
        name: &str,
        args: &[String],
        timeout: Duration,
    ) -> Result<(Outcome, String), SshError> {
        let remote = self.remote_command(name, args, timeout);
        let mut ssh = self.ssh();
        ssh.arg(&remote);
        let inv = Invocation {
            program: "ssh".into(),
            args: ssh
                .get_args()
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
        };
        // Saturating: the timeout is the caller's (targets.yaml bounds its own).
        let local = timeout.saturating_add(Duration::from_secs(30));
        let mut outcome =
            crate::runner::execute(&inv, Path::new("/"), local).map_err(SshError::Spawn)?;
        let marker = outcome
            .stderr
            .lines()
            .rev()
            .find_map(|l| l.strip_prefix(MARKER))
            .and_then(|c| c.trim().parse::<i32>().ok());
        outcome.exit = match (outcome.exit, marker) {
            (Exit::TimedOut, _) => Exit::TimedOut,
            // timeout(1) exits 124 when it killed the command, 137 after -k.
            (_, Some(124 | 137)) => Exit::TimedOut,
            (_, Some(code)) if code > 128 => Exit::Signal(code - 128),
            (_, Some(code)) => Exit::Code(code),
            (_, None) => return Err(refused(outcome.stderr.as_bytes())),
        };
        outcome.stderr = outcome
            .stderr
            .lines()
            .filter(|l| !l.starts_with(MARKER))
            .map(|l| format!("{l}\n"))
            .collect();
        Ok((outcome, inv.shell()))
    }
}

const MARKER: &str = "lockmatrix-exit-status:";

impl Drop for Remote {
    fn drop(&mut self) {
        if self.dir.starts_with("/tmp/lockmatrix.") {
            let _ = self.ssh().args(["rm", "-rf", &self.dir]).output();
        }
    }
}
