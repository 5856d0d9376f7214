//! Building a C suite ([`crate::select::Lang::C`]): every `.c` file of
//! `suites/<name>/`, compiled and linked in one command by the target's
//! cross gcc (its `linker`), statically, or against `qemu_ld_prefix`
//! where the emulator runs only dynamic binaries. Recorded like a cargo
//! build: keyed by the sources' hash, the compiler's version and the
//! command, kept by content in the store, and the binary says what built
//! it ([`Binary::compiler`]: the compiler, its flags and version).

use super::job::{Binary, BuildError, Job, Tree};
use super::store::{builds_dir, built_before, keep, lock_dir};
use crate::observe::Observer;
use crate::toolchain::ToolInfo;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The flags every C suite is built with: the kernel's -O2; GNU C11 for
/// the `__atomic` builtins and inline asm; no identical-code folding, so
/// each primitive keeps its own address (it is a probe of the static
/// footprint).
pub const FLAGS: &[&str] = &["-O2", "-std=gnu11", "-pthread", "-fno-ipa-icf", "-Wall"];

/// How `job`'s target links: statically, unless it runs dynamic binaries
/// against a sysroot (`qemu_ld_prefix`): then gcc's default.
pub fn link_flags(job: &Job) -> Vec<String> {
    match &job.target.qemu_ld_prefix {
        None => vec!["-static".to_string()],
        Some(_) => Vec::new(),
    }
}

/// The sources of suite `suite` in `root`: its `.c` files, sorted.
fn c_files(root: &Path, suite: &str) -> Result<Vec<PathBuf>, BuildError> {
    let dir = root.join("suites").join(suite);
    let read = std::fs::read_dir(&dir).map_err(|e| BuildError::Around {
        what: format!("reading the C suite {}: {e}", dir.display()),
    })?;
    let mut files: Vec<PathBuf> = read
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(BuildError::Around {
            what: format!("{}: no .c file", dir.display()),
        });
    }
    Ok(files)
}

/// The compiler command that builds `suite` from `files` into `out`.
pub fn command(job: &Job, files: &[PathBuf], out: &Path) -> Command {
    let mut cmd = Command::new(&job.linker);
    cmd.args(FLAGS)
        .args(link_flags(job))
        .arg("-o")
        .arg(out)
        .args(files)
        // The compiler's messages in one language, whatever the shell's.
        .env("LC_ALL", "C");
    cmd
}

/// What built a C suite for `job`: the compiler and its flags, and its
/// version (`gcc --version`'s first line).
pub fn compiler(job: &Job) -> ToolInfo {
    let flags: Vec<String> = FLAGS
        .iter()
        .map(|f| f.to_string())
        .chain(link_flags(job))
        .collect();
    let dynamic = match &job.target.qemu_ld_prefix {
        Some(prefix) => format!(" (dynamically linked, run with -L {prefix})"),
        None => String::new(),
    };
    ToolInfo {
        what: format!("{} {}{dynamic}", job.linker.display(), flags.join(" ")),
        version: crate::toolchain::command_version(Command::new(&job.linker).arg("--version")),
    }
}

/// Builds C suite `suite` of `tree` for `job`, or takes the binary a build
/// with the same key produced before. `sources` is the tree's
/// [`super::sources_hash`] (every file under `suites/`).
pub fn build(
    tree: &Tree,
    job: &Job,
    suite: &str,
    sources: &str,
    observer: &dyn Observer,
) -> Result<(String, Binary), BuildError> {
    let around = |what: String| BuildError::Around { what };
    let files = c_files(tree.root, suite)?;
    let tool = compiler(job);
    // The command without its paths (two checkouts build alike), with the
    // compiler's version: the build's identity.
    let key = crate::file::sha256(
        format!(
            "c\0{sources}\0{suite}\0{}\0{}\0{}",
            tool.what, tool.version, job.target.triple
        )
        .as_bytes(),
    );
    let kept = tree.bins.join(&job.target.name);
    let with_compiler = |mut b: Binary| {
        b.compiler = Some(tool.clone());
        (suite.to_string(), b)
    };
    if let Some(mut done) = built_before(&job.cache, &key, &[suite], &kept, observer)? {
        let b = done
            .remove(suite)
            .expect("built_before returns every suite");
        return Ok(with_compiler(b));
    }
    let work = job.cache.join("c-build").join(&key);
    let _lock = lock_dir(&work).map_err(|e| around(e.to_string()))?;
    let out = work.join(suite);
    let _ = std::fs::remove_file(&out);
    let log = tree
        .logs
        .join(format!("build-{}-{suite}.log", job.target.name));
    let mut cmd = command(job, &files, &out);
    let said = cmd
        .output()
        .map_err(|e| around(format!("cannot run {}: {e}", job.linker.display())))?;
    let text = format!(
        "{:?}\n{}{}",
        cmd,
        String::from_utf8_lossy(&said.stdout),
        String::from_utf8_lossy(&said.stderr)
    );
    let _ = std::fs::write(&log, &text);
    if !said.status.success() || !out.is_file() {
        let first = text
            .lines()
            .find(|l| l.contains("error"))
            .unwrap_or("the compiler failed")
            .to_string();
        return Err(BuildError::Compiler { error: first, log });
    }
    let binary = keep(&job.cache, &out, suite, &kept.join(suite), observer)?;
    let builds = builds_dir(&job.cache);
    if std::fs::create_dir_all(&builds).is_ok() {
        let record = format!("{suite} {}\n", binary.sha256);
        let _ = crate::file::replace(&builds.join(&key), &record);
    }
    let _ = std::fs::remove_file(&out);
    Ok(with_compiler(binary))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Target;

    fn target(name: &str) -> Target {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let config = crate::config::load(&root.join("targets.yaml")).unwrap();
        config.targets.into_iter().find(|t| t.name == name).unwrap()
    }

    fn job(t: &Target) -> Job<'_> {
        Job {
            target: t,
            toolchain: None,
            linker: t.linker.clone().unwrap().into(),
            cache: "/cache".into(),
        }
    }

    #[test]
    fn links_statically_unless_the_emulator_needs_a_sysroot() {
        let (s390x, alpha) = (target("s390x"), target("alpha64"));
        assert_eq!(link_flags(&job(&s390x)), ["-static"]);
        assert!(link_flags(&job(&alpha)).is_empty());
        let what = compiler(&job(&alpha)).what;
        assert_eq!(
            what,
            "alpha-linux-gnu-gcc -O2 -std=gnu11 -pthread -fno-ipa-icf -Wall (dynamically linked, run with -L /usr/alpha-linux-gnu)"
        );
        let cmd = command(&job(&s390x), &["a.c".into()], Path::new("/o/atomic-c"));
        let args: Vec<String> = cmd
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            args,
            [
                "-O2",
                "-std=gnu11",
                "-pthread",
                "-fno-ipa-icf",
                "-Wall",
                "-static",
                "-o",
                "/o/atomic-c",
                "a.c"
            ]
        );
    }
}
