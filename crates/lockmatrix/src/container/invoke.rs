//! The matrix inside the image: `cargo xtask matrix` with the same
//! arguments and `--backend apt`, every path it reads or writes mounted at
//! its own path (so run.json, `--against` worktrees and messages name the
//! host's paths), the image's Debian toolchain, and a cache of its own.

use super::engine::{Engine, Kind};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Names the image to the matrix inside, which records it in run.json
/// (`host.image`).
pub const IMAGE_VARIABLE: &str = "LOCKMATRIX_IMAGE";

/// `cargo xtask matrix` in the image, built by its cargo.
const MATRIX: [&str; 8] = [
    "cargo",
    "run",
    "--quiet",
    "--locked",
    "--package",
    "xtask",
    "--",
    "matrix",
];

/// One `run` of the matrix in the image.
pub struct Invocation<'a> {
    pub engine: &'a Engine,
    pub image: &'a str,
    /// The checkout; the matrix runs from `cwd`, inside it.
    pub root: &'a Path,
    pub cwd: &'a Path,
    /// The container's own lockmatrix cache (its std builds are of the
    /// image's compiler): `<cache>/container`.
    pub cache: &'a Path,
    /// Other directories the arguments name outside the checkout.
    pub mounts: Vec<PathBuf>,
    /// Files mounted read-only at their own paths: ssh keys, the
    /// credentials file.
    pub read_only: Vec<PathBuf>,
    /// Variables set inside that name those files (never a secret).
    pub env: Vec<(String, OsString)>,
    /// The arguments after `matrix`, as the user gave them.
    pub args: Vec<OsString>,
}

/// A path that cannot be mounted at its own path.
#[derive(Debug, thiserror::Error)]
#[error("{what} {}: holds `:`, which the engine's --volume takes for its separator: it cannot be mounted into the container; use a path without `:`", .path.display())]
pub struct Unmountable {
    /// The flag or variable that named it (`--results`, `CARGO_HOME`).
    pub what: String,
    pub path: PathBuf,
}

/// Refuses a path `what` names that `--volume=PATH:PATH` cannot carry.
pub fn mountable(what: &str, path: &Path) -> Result<(), Unmountable> {
    if path.as_os_str().as_encoded_bytes().contains(&b':') {
        return Err(Unmountable {
            what: what.to_string(),
            path: path.to_path_buf(),
        });
    }
    Ok(())
}

/// The user's cargo home, which the container mounts for its crates:
/// `CARGO_HOME` (a relative one from the current directory, as cargo reads
/// it), else `~/.cargo`, if it is a directory; else one in `home`.
pub fn cargo_home(home: &Path) -> PathBuf {
    cargo_home_of(
        std::env::var_os("CARGO_HOME"),
        std::env::var_os("HOME"),
        &std::env::current_dir().unwrap_or_default(),
        home,
    )
}

/// [`cargo_home`] of the variables `cargo_home` and `user_home`, from `cwd`.
fn cargo_home_of(
    cargo_home: Option<OsString>,
    user_home: Option<OsString>,
    cwd: &Path,
    home: &Path,
) -> PathBuf {
    cargo_home
        .filter(|v| !v.is_empty())
        .map(|v| cwd.join(v))
        .or_else(|| user_home.map(|h| PathBuf::from(h).join(".cargo")))
        .filter(|d| d.is_dir())
        .map(|d| d.canonicalize().unwrap_or(d))
        .unwrap_or_else(|| home.join(".cargo"))
}

/// Variables the matrix inside reads from the user's environment.
fn passed(name: &str) -> bool {
    (name.starts_with("LOCKMATRIX_")
        && !matches!(
            name,
            "LOCKMATRIX_CACHE" | "LOCKMATRIX_ENGINE" | "LOCKMATRIX_IMAGE_RUST" | "LOCKMATRIX_IMAGE"
        ))
        || matches!(
            name,
            "CI" | "NO_COLOR" | "GITHUB_ACTIONS" | "GITHUB_STEP_SUMMARY"
        )
}

impl Invocation<'_> {
    pub fn command(&self) -> Command {
        let mut c = self.engine.command();
        c.args(["run", "--rm", "--network=host"]);
        c.args(self.engine.init.then_some("--init"));
        // Fedora's SELinux would refuse the mounted home directories
        // unless relabelled; relabelling a user's checkout is not ours to do.
        c.arg("--security-opt=label=disable");
        c.args(&self.engine.limits);
        let home = self.cache.join("home");
        let cargo_home = cargo_home(&home);
        let mut mounts: Vec<&Path> = vec![self.root, self.cache, &cargo_home];
        mounts.extend(self.mounts.iter().map(PathBuf::as_path));
        mounts.sort();
        mounts.dedup();
        for m in mounts {
            let mut v = OsString::from("--volume=");
            v.push(m);
            v.push(":");
            v.push(m);
            c.arg(v);
        }
        for m in &self.read_only {
            let mut v = OsString::from("--volume=");
            v.push(m);
            v.push(":");
            v.push(m);
            v.push(":ro");
            c.arg(v);
        }
        // Rootful Docker writes as root: keep the user's files the user's.
        // (Rootless Podman's root is the user already.)
        if self.engine.kind == Kind::Docker {
            // SAFETY: getuid and getgid have no preconditions.
            let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
            if uid != 0 {
                c.arg(format!("--user={uid}:{gid}"));
            }
        }
        let mut env: Vec<(String, OsString)> = vec![
            ("LOCKMATRIX_CACHE".into(), self.cache.into()),
            ("HOME".into(), home.into()),
            ("CARGO_HOME".into(), cargo_home.into()),
            // The xtask built by the image's cargo, apart from the host's.
            (
                "CARGO_TARGET_DIR".into(),
                self.cache.join("xtask-target").into(),
            ),
            // The checkout's owner is not the container's user under
            // rootful engines: git would refuse it as "dubious".
            ("GIT_CONFIG_COUNT".into(), "1".into()),
            ("GIT_CONFIG_KEY_0".into(), "safe.directory".into()),
            ("GIT_CONFIG_VALUE_0".into(), "*".into()),
            (IMAGE_VARIABLE.into(), self.image.into()),
        ];
        env.extend(self.env.iter().cloned());
        env.extend(
            std::env::vars_os()
                .filter(|(k, _)| k.to_str().is_some_and(passed))
                .map(|(k, v)| (k.to_string_lossy().into_owned(), v)),
        );
        for (k, v) in env {
            let mut e = OsString::from("--env=");
            e.push(k);
            e.push("=");
            e.push(v);
            c.arg(e);
        }
        let mut w = OsString::from("--workdir=");
        w.push(self.cwd);
        c.arg(w);
        c.arg(self.image);
        c.args(MATRIX).args(inner_args(&self.args));
        c
    }
}

/// The user's `matrix` arguments for the run inside: the same, less
/// `--backend` and less any URL's user-info (a `--crate` git URL's
/// credentials go by a mounted file: `subject::credentials`), with
/// `--backend apt` (the image's toolchain) and `--no-install` (the image
/// has every package; one it lacks is an error, not an install into a
/// container that is thrown away).
pub fn inner_args(args: &[OsString]) -> Vec<OsString> {
    let mut out = Vec::new();
    let mut skip_value = false;
    for a in args {
        if skip_value {
            skip_value = false;
            continue;
        }
        let text = a.to_string_lossy();
        if text == "--backend" {
            skip_value = true;
            continue;
        }
        if text.starts_with("--backend=") {
            continue;
        }
        match a.to_str() {
            Some(t) if t.contains("://") => out.push(crate::escape::redact(t).into()),
            _ => out.push(a.clone()),
        }
    }
    out.extend(["--backend", "apt"].map(OsString::from));
    if !args.iter().any(|a| a == "--no-install") {
        out.push("--no-install".into());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn the_run_inside_is_the_same_matrix_on_the_apt_path() {
        let args = os(&[
            "--targets",
            "aarch64",
            "--backend",
            "container",
            "--rounds",
            "1",
        ]);
        assert_eq!(
            inner_args(&args),
            os(&[
                "--targets",
                "aarch64",
                "--rounds",
                "1",
                "--backend",
                "apt",
                "--no-install"
            ])
        );
        let args = os(&["--backend=cross", "--no-install", "--suites", "atomic"]);
        assert_eq!(
            inner_args(&args),
            os(&["--no-install", "--suites", "atomic", "--backend", "apt"])
        );
    }

    #[test]
    fn mounts_keep_their_paths_and_the_cache_is_the_containers_own() {
        let engine = Engine {
            kind: Kind::Podman,
            program: "podman".into(),
            version: String::new(),
            global: vec![],
            limits: vec!["--ulimit=nofile=20000:20000".into()],
            init: true,
        };
        let inv = Invocation {
            engine: &engine,
            image: "localhost/lockmatrix:0123456789abcdef",
            root: Path::new("/src/lockmatrix"),
            cwd: Path::new("/src/lockmatrix/suites"),
            cache: Path::new("/home/u/.cache/lockmatrix/container"),
            mounts: vec!["/tmp/results".into(), "/src/lockmatrix".into()],
            read_only: vec!["/home/u/.ssh/id_rpi".into()],
            env: vec![(
                "LOCKMATRIX_GIT_CREDENTIALS".into(),
                "/c/credentials-1".into(),
            )],
            args: os(&["--results", "/tmp/results", "--backend", "container"]),
        };
        let c = inv.command();
        let args: Vec<String> = c
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let has = |s: &str| args.iter().any(|a| a == s);
        assert!(has("--volume=/src/lockmatrix:/src/lockmatrix"), "{args:?}");
        assert!(has("--volume=/tmp/results:/tmp/results"), "{args:?}");
        assert_eq!(
            args.iter()
                .filter(|a| a.starts_with("--volume=/src/"))
                .count(),
            1
        );
        assert!(has(
            "--env=LOCKMATRIX_CACHE=/home/u/.cache/lockmatrix/container"
        ));
        assert!(has("--workdir=/src/lockmatrix/suites"));
        assert!(has("--volume=/home/u/.ssh/id_rpi:/home/u/.ssh/id_rpi:ro"));
        assert!(has("--env=LOCKMATRIX_GIT_CREDENTIALS=/c/credentials-1"));
        assert!(has("--ulimit=nofile=20000:20000"));
        let image = args.iter().position(|a| a == inv.image).unwrap();
        let inner: Vec<&str> = args[image + 1..].iter().map(String::as_str).collect();
        assert_eq!(inner[..MATRIX.len()], MATRIX);
        assert_eq!(
            inner[MATRIX.len()..],
            [
                "--results",
                "/tmp/results",
                "--backend",
                "apt",
                "--no-install"
            ]
        );
    }

    #[test]
    fn a_urls_user_info_never_reaches_the_command_line() {
        let secret = "alice:to/k#e?n";
        let args = os(&[
            "--crate",
            &format!("spin@git:https://{secret}@host.example/spin.git#v1"),
        ]);
        assert!(args[1].to_str().unwrap().contains(secret));
        let inner = inner_args(&args);
        assert_eq!(inner[1], "spin@git:https://host.example/spin.git#v1");
        assert!(!inner.iter().any(|a| a.to_str().unwrap().contains("alice")));
    }

    #[test]
    fn a_relative_cargo_home_is_taken_from_the_current_directory() {
        let d = std::env::temp_dir().join(format!("lm-cargo-home-{}", std::process::id()));
        std::fs::create_dir_all(d.join("work/rel-cargo")).unwrap();
        let d = d.canonicalize().unwrap();
        let got = cargo_home_of(
            Some("rel-cargo".into()),
            None,
            &d.join("work"),
            Path::new("/c"),
        );
        // An absolute path: a mount source, never a named volume.
        assert_eq!(got, d.join("work/rel-cargo"));
        assert!(got.is_absolute());
        let got = cargo_home_of(None, Some(d.as_os_str().into()), &d, Path::new("/c"));
        assert_eq!(
            got,
            Path::new("/c/.cargo"),
            "no ~/.cargo there: the container's own"
        );
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_path_with_a_colon_is_refused_as_a_mount() {
        let e = mountable("--results", Path::new("/tmp/a:b")).unwrap_err();
        assert!(
            e.to_string().starts_with("--results /tmp/a:b: holds `:`"),
            "{e}"
        );
        assert!(mountable("--results", Path::new("/tmp/a-b")).is_ok());
    }

    #[test]
    fn the_users_cache_and_engine_choice_stay_outside() {
        assert!(passed("LOCKMATRIX_TESTBED"));
        assert!(passed("LOCKMATRIX_SSH_KEY_RPI"));
        assert!(!passed("LOCKMATRIX_CACHE"));
        assert!(!passed("LOCKMATRIX_ENGINE"));
        assert!(!passed("PATH"));
    }
}
