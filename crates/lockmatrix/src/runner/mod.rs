//! Running one suite binary on a target: the command line each runner kind
//! uses, and execution with a timeout, capturing stdout and stderr.

pub mod ssh;

use crate::config::{RunnerKind, Target};
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

/// The environment suites run in: nothing inherited, so runs repeat.
pub const CLEAN_ENV: &[(&str, &str)] = &[("PATH", "/usr/local/bin:/usr/bin:/bin"), ("LC_ALL", "C")];

#[derive(Debug, Clone)]
pub struct Invocation {
    pub program: String,
    pub args: Vec<String>,
}

impl Invocation {
    /// How a user reproduces the run from a shell.
    pub fn shell(&self) -> String {
        let env: Vec<String> = CLEAN_ENV.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let words: Vec<String> = std::iter::once(&self.program)
            .chain(&self.args)
            .map(|w| quote(w))
            .collect();
        format!("env -i {} {}", env.join(" "), words.join(" "))
    }
}

fn quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=,:+@%".contains(c))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// The command that runs `binary` with `args` on `target` (native and
/// qemu; ssh targets are run by `ssh.rs`). Under QEMU, `plugin` is loaded
/// to count instructions.
pub fn invocation(
    target: &Target,
    binary: &Path,
    args: &[String],
    plugin: Option<&Path>,
) -> Invocation {
    match target.runner {
        RunnerKind::Qemu => {
            let mut run = under_qemu(
                target.emulator.as_deref().unwrap_or_default(),
                target.qemu_cpu.as_deref(),
                binary,
                args,
                plugin,
            );
            // Its dynamically linked C suites' libraries (`-0 NAME` first).
            if let Some(prefix) = &target.qemu_ld_prefix {
                run.args.splice(2..2, ["-L".to_string(), prefix.clone()]);
            }
            run
        }
        RunnerKind::Native | RunnerKind::Ssh => Invocation {
            program: binary.display().to_string(),
            args: args.to_vec(),
        },
    }
}

/// `binary` run by the user-mode `emulator` modelling `cpu` (its default
/// when `None`), with `plugin` loaded. argv[0] is the suite's bare name so
/// the guest's stack, and so its instruction counts, do not depend on where
/// the binary was built.
pub fn under_qemu(
    emulator: &str,
    cpu: Option<&str>,
    binary: &Path,
    args: &[String],
    plugin: Option<&Path>,
) -> Invocation {
    let path = binary.display().to_string();
    let name = binary
        .file_name()
        .map_or(path.clone(), |n| n.to_string_lossy().into_owned());
    let mut argv = vec!["-0".to_string(), name];
    if let Some(cpu) = cpu {
        argv.extend(["-cpu".to_string(), cpu.to_string()]);
    }
    if let Some(p) = plugin {
        argv.extend(["-plugin".to_string(), p.display().to_string()]);
    }
    argv.push(path);
    argv.extend(args.iter().cloned());
    Invocation {
        program: emulator.to_string(),
        args: argv,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Exit {
    Code(i32),
    Signal(i32),
    TimedOut,
    /// Killed for printing more than [`crate::file::OUTPUT_LIMIT`] on
    /// stdout or stderr: a suite prints a few MB at most.
    Flooded,
}

#[derive(Debug, Clone)]
pub struct Outcome {
    pub exit: Exit,
    pub stdout: String,
    pub stderr: String,
    pub secs: f64,
}

pub fn signal_name(sig: i32) -> &'static str {
    match sig {
        1 => "SIGHUP",
        2 => "SIGINT",
        4 => "SIGILL",
        5 => "SIGTRAP",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        15 => "SIGTERM",
        31 => "SIGSYS",
        _ => "signal",
    }
}

/// What ends the wait for a child before its timeout.
enum Ended {
    Exited,
    /// It printed more than [`crate::file::OUTPUT_LIMIT`] on stdout or
    /// stderr.
    Flooded,
}

/// Reads `r` to its end on a thread of its own, keeping at most
/// [`crate::file::OUTPUT_LIMIT`] bytes; says [`Ended::Flooded`] when
/// there was more.
fn drain(r: impl Read + Send + 'static, ended: Sender<Ended>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let limit = crate::file::OUTPUT_LIMIT;
        let mut buf = Vec::new();
        let mut r = r.take(limit + 1);
        let _ = r.read_to_end(&mut buf);
        if buf.len() as u64 > limit {
            buf.truncate(limit as usize);
            let _ = ended.send(Ended::Flooded);
            // Keep reading, and dropping, so the child never blocks on a
            // full pipe before it is killed.
            let _ = std::io::copy(&mut r.into_inner(), &mut std::io::sink());
        }
        String::from_utf8_lossy(&buf).into_owned()
    })
}

/// Blocks until process `pid` (a child) has exited, without reaping it:
/// its `Child` stays the one to wait for it, and to kill it until then.
fn exited(pid: u32) {
    loop {
        // SAFETY: a zeroed siginfo_t is a valid out-parameter.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: waitid only writes `info`; WNOWAIT leaves the child
        // unreaped, so its pid cannot be reused while we hold it.
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if r == 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return;
        }
    }
}

/// Runs `inv` in a clean environment, killing it after `timeout`. The
/// wait blocks (no polling): a timed suite shares two vCPUs with this
/// process, and a wake-up every few milliseconds is noise in its windows.
pub fn execute(inv: &Invocation, cwd: &Path, timeout: Duration) -> std::io::Result<Outcome> {
    use std::os::unix::process::ExitStatusExt;
    use std::sync::mpsc::{channel, RecvTimeoutError};
    let start = Instant::now();
    let mut child = Command::new(&inv.program)
        .args(&inv.args)
        .env_clear()
        .envs(CLEAN_ENV.iter().copied())
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let (tx, rx) = channel();
    let out = drain(child.stdout.take().expect("piped stdout"), tx.clone());
    let err = drain(child.stderr.take().expect("piped stderr"), tx.clone());
    let pid = child.id();
    std::thread::spawn(move || {
        exited(pid);
        let _ = tx.send(Ended::Exited);
    });
    let killed = match rx.recv_timeout(timeout.saturating_sub(start.elapsed())) {
        Ok(Ended::Exited) | Err(RecvTimeoutError::Disconnected) => None,
        Ok(Ended::Flooded) => Some(Exit::Flooded),
        Err(RecvTimeoutError::Timeout) => Some(Exit::TimedOut),
    };
    if killed.is_some() {
        let _ = child.kill();
    }
    let status = child.wait()?;
    let exit = killed.unwrap_or(match status.signal() {
        Some(sig) => Exit::Signal(sig),
        None => Exit::Code(status.code().unwrap_or(-1)),
    });
    let secs = start.elapsed().as_secs_f64();
    Ok(Outcome {
        exit,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
        secs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str, timeout_ms: u64) -> Outcome {
        let inv = Invocation {
            program: "sh".into(),
            args: vec!["-c".into(), script.into()],
        };
        execute(&inv, Path::new("/"), Duration::from_millis(timeout_ms)).unwrap()
    }

    #[test]
    fn captures_output_and_exit_code() {
        let o = sh("echo out; echo err >&2; exit 3", 5000);
        assert_eq!(
            (o.exit, o.stdout.as_str(), o.stderr.as_str()),
            (Exit::Code(3), "out\n", "err\n")
        );
    }

    #[test]
    fn reports_the_signal_and_kills_on_timeout() {
        assert_eq!(sh("kill -SEGV $$", 5000).exit, Exit::Signal(11));
        let o = sh("echo started; exec sleep 30", 300);
        assert_eq!(o.exit, Exit::TimedOut);
        assert_eq!(o.stdout, "started\n");
        assert!(o.secs < 10.0);
    }

    #[test]
    fn a_flood_of_output_is_cut_and_killed() {
        let o = sh("exec yes lockmatrix", 60_000);
        assert_eq!(o.exit, Exit::Flooded);
        assert_eq!(o.stdout.len() as u64, crate::file::OUTPUT_LIMIT);
        assert!(o.secs < 30.0, "{}", o.secs);
    }

    #[test]
    fn runs_with_a_clean_environment_and_quotes_the_reproducer() {
        std::env::set_var("LOCKMATRIX_LEAK_TEST", "1");
        assert_eq!(
            sh("echo ${LOCKMATRIX_LEAK_TEST:-clean}", 5000).stdout,
            "clean\n"
        );
        let inv = Invocation {
            program: "qemu-mips".into(),
            args: vec!["/a b/atomic".into(), "--rounds".into(), "2".into()],
        };
        assert_eq!(
            inv.shell(),
            "env -i PATH=/usr/local/bin:/usr/bin:/bin LC_ALL=C qemu-mips '/a b/atomic' --rounds 2"
        );
    }
}
