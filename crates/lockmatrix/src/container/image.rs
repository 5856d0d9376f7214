//! The image: `containers/Containerfile` built once per machine and tagged
//! by the hash of everything that decides it (the Containerfile and its
//! helper, the packages, the pinned rustc-web, the base), from `debian:12`
//! where a registry gives it, else from a base made with `debootstrap`.

use super::engine::Engine;
use super::setup::{check_space, SetupError};
pub use super::{REGISTRY_BASE, RUST_VARIABLE};
use crate::toolchain::{self, which};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The base made here with debootstrap when no registry answers.
pub const LOCAL_BASE: &str = "localhost/lockmatrix-base:bookworm";
/// Where Debian's packages come from, for debootstrap and the base's
/// sources (those of the debian:12 image: main, updates, security).
pub const MIRROR: &str = "http://deb.debian.org/debian";
pub const CONTAINERFILE: &str = "containers/Containerfile";
const HELPER: &str = "containers/plugin-rust.sh";
/// Free space an image build needs where the engine keeps images
/// (measured: 4.7 GB, and apt's downloads while it builds).
pub const BUILD_GIB: f64 = 8.0;
/// Free space the container's cache needs (measured: 1.8 GB after a cold
/// 16-target matrix, of which 0.8 GB the xtask's own build).
pub const CACHE_GIB: f64 = 3.0;

/// What decides the image.
#[derive(Debug, Clone)]
pub struct Inputs {
    root: PathBuf,
    /// Every package the selected config names, sorted, once each.
    pub packages: Vec<String>,
    /// The rustc-web release the suites are built with (`1.85`).
    pub rust_web: String,
    /// What the QEMU plugin needs (`1.88`).
    pub plugin_rust: String,
    files: String,
}

impl Inputs {
    pub fn new(root: &Path, mut packages: Vec<String>) -> Result<Inputs, SetupError> {
        packages.sort();
        packages.dedup();
        let major_minor = |v: toolchain::Version| format!("{}.{}", v.0, v.1);
        let rust_web = match std::env::var(RUST_VARIABLE) {
            Ok(v) if !v.is_empty() => toolchain::Version::parse(&v).map_or(v, major_minor),
            _ => major_minor(toolchain::rust_version(&root.join("Cargo.toml"))),
        };
        let mut files = String::new();
        for f in [CONTAINERFILE, HELPER] {
            let path = root.join(f);
            files += &std::fs::read_to_string(&path).map_err(|e| SetupError::Inputs {
                path,
                why: e.to_string(),
            })?;
        }
        Ok(Inputs {
            root: root.to_path_buf(),
            packages,
            rust_web,
            plugin_rust: major_minor(toolchain::rust_version(
                &root.join("qemu-plugin/Cargo.toml"),
            )),
            files,
        })
    }

    /// The image's tag when built on `base`: `localhost/lockmatrix:<hash>`.
    pub fn tag(&self, base: &str) -> String {
        let key = crate::file::sha256(
            format!(
                "{}\0{}\0{}\0{}\0{base}",
                self.files,
                self.packages.join(" "),
                self.rust_web,
                self.plugin_rust
            )
            .as_bytes(),
        );
        format!("localhost/lockmatrix:{}", &key[..16])
    }

    /// The build command for `base`, as it is run (and shown when it fails).
    pub fn build_command(&self, engine: &Engine, base: &str) -> Command {
        let mut c = engine.command();
        c.arg("build").args(&engine.limits);
        for (k, v) in [
            ("BASE", base),
            ("PACKAGES", &self.packages.join(" ")),
            ("RUST_WEB", &self.rust_web),
            ("PLUGIN_RUST", &self.plugin_rust),
        ] {
            c.arg("--build-arg").arg(format!("{k}={v}"));
        }
        let file = self.root.join(CONTAINERFILE);
        c.arg("-t").arg(self.tag(base)).arg("-f").arg(&file);
        c.arg(file.parent().unwrap_or(&self.root));
        c
    }
}

/// The image of these inputs already built, on either base: its tag.
pub fn built(engine: &Engine, inputs: &Inputs) -> Option<String> {
    [REGISTRY_BASE, LOCAL_BASE]
        .iter()
        .map(|b| inputs.tag(b))
        .find(|t| exists(engine, t))
}

pub fn exists(engine: &Engine, image: &str) -> bool {
    engine
        .command()
        .args(["image", "inspect", "--format", "{{.Id}}", image])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// When `image` was built, in seconds since the epoch.
pub fn created(engine: &Engine, image: &str) -> Option<u64> {
    let out = engine
        .command()
        .args(["image", "inspect", "--format", "{{.Created}}", image])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| epoch_seconds(String::from_utf8_lossy(&out.stdout).trim()))?
}

/// `2026-12-05 22:30:01.5 +0000 UTC` (Podman) or `2026-12-05T22:30:01Z`
/// (Docker), both UTC, in seconds since the epoch.
fn epoch_seconds(text: &str) -> Option<u64> {
    let n = |r: std::ops::Range<usize>| text.get(r)?.parse::<i64>().ok();
    let (y, m, d) = (n(0..4)?, n(5..7)?, n(8..10)?);
    let (hh, mm, ss) = (n(11..13)?, n(14..16)?, n(17..19)?);
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    u64::try_from(days * 86_400 + hh * 3600 + mm * 60 + ss).ok()
}

/// What the image got (its `/etc/lockmatrix` records): the suites'
/// compiler, the plugin's and QEMU's, one line each.
pub fn facts(engine: &Engine, image: &str) -> Result<Vec<String>, SetupError> {
    let out = engine
        .command()
        .arg("run")
        .arg("--rm")
        .args(&engine.limits)
        .args([
            image,
            "cat",
            "/etc/lockmatrix/rustc",
            "/etc/lockmatrix/plugin-rustc",
            "/etc/lockmatrix/qemu",
        ])
        .output()
        .map_err(|e| SetupError::CannotRun {
            engine: engine.kind.name(),
            detail: e.to_string(),
        })?;
    if !out.status.success() {
        return Err(SetupError::CannotRun {
            engine: engine.kind.name(),
            detail: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect())
}

/// The image's suite compiler (`rustc 1.85.0 (...)`) is the pinned release.
pub fn check_pin(want: &str, rustc: &str) -> Result<(), SetupError> {
    let got = toolchain::Version::parse(rustc).map(|v| format!("{}.{}", v.0, v.1));
    let wanted = toolchain::Version::parse(want).map(|v| format!("{}.{}", v.0, v.1));
    if got.is_some() && got == wanted {
        Ok(())
    } else {
        Err(SetupError::Pin {
            want: want.to_string(),
            got: rustc.to_string(),
        })
    }
}

/// The base to build on, as found.
pub enum Base {
    /// This image, and one line saying which it is.
    Ready(&'static str, String),
    /// No registry gives debian:12 (why): [`debootstrap`] makes
    /// [`LOCAL_BASE`].
    Debootstrap(String),
}

/// debian:12 when the engine has it or a registry gives it, else the
/// debootstrap base when it was made earlier.
pub fn find_base(engine: &Engine) -> Base {
    if exists(engine, REGISTRY_BASE) {
        return Base::Ready(REGISTRY_BASE, format!("base image {REGISTRY_BASE}"));
    }
    if exists(engine, LOCAL_BASE) {
        return Base::Ready(
            LOCAL_BASE,
            format!("base image {LOCAL_BASE} (made earlier with debootstrap)"),
        );
    }
    match engine.command().args(["pull", REGISTRY_BASE]).output() {
        Ok(o) if o.status.success() => {
            Base::Ready(REGISTRY_BASE, format!("base image {REGISTRY_BASE}, pulled"))
        }
        Ok(o) => Base::Debootstrap(
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .last()
                .unwrap_or("")
                .to_string(),
        ),
        Err(e) => Base::Debootstrap(e.to_string()),
    }
}

/// The commands that make the debootstrap base by hand.
fn base_commands(engine: &Engine) -> Vec<String> {
    let e = engine.kind.name();
    vec![
        format!("sudo debootstrap --variant=minbase bookworm /tmp/bookworm {MIRROR}"),
        "sudo rm /tmp/bookworm/etc/apt/sources.list".into(),
        format!(
            "printf '{}' | sudo tee /tmp/bookworm/etc/apt/sources.list.d/debian.sources",
            SOURCES.replace('\n', "\\n")
        ),
        format!("sudo tar -C /tmp/bookworm -c . | {e} import - {LOCAL_BASE}"),
    ]
}

/// The debian:12 image's package sources.
const SOURCES: &str = "Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
";

/// Makes [`LOCAL_BASE`] with `debootstrap --variant=minbase bookworm` (as
/// root; its log in `cache`) and debian:12's package sources. `why`: why
/// no registry gave debian:12.
pub fn debootstrap(engine: &Engine, cache: &Path, why: &str) -> Result<(), SetupError> {
    let no = |what: String| SetupError::NoBase {
        why: format!("no registry gives {REGISTRY_BASE} ({why}) and {what}"),
        commands: base_commands(engine),
    };
    let Some(program) = which("debootstrap").or_else(|| which("/usr/sbin/debootstrap")) else {
        return Err(no("debootstrap is not installed (Debian/Ubuntu: `apt-get install debootstrap`, Fedora: `dnf install debootstrap`)".into()));
    };
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(no("debootstrap needs root".into()));
    }
    let dir = cache.join(format!("bookworm-rootfs-{}", std::process::id()));
    let log = cache.join("debootstrap.log");
    let failed = |what: &str, e: String| no(format!("{what} failed: {e} (log: {})", log.display()));
    let log_file =
        std::fs::File::create(&log).map_err(|e| failed("writing its log", e.to_string()))?;
    let err_file = log_file
        .try_clone()
        .map_err(|e| failed("writing its log", e.to_string()))?;
    let status = Command::new(program)
        .args(["--variant=minbase", "bookworm"])
        .arg(&dir)
        .arg(MIRROR)
        .stdout(log_file)
        .stderr(err_file)
        .status();
    let result = match status {
        Ok(s) if s.success() => {
            import(engine, &dir).map_err(|e| failed("importing it", e.to_string()))
        }
        Ok(s) => Err(failed("debootstrap", s.to_string())),
        Err(e) => Err(failed("debootstrap", e.to_string())),
    };
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// Gives `rootfs` debian:12's package sources and imports it as the base.
fn import(engine: &Engine, rootfs: &Path) -> std::io::Result<()> {
    let apt = rootfs.join("etc/apt");
    let _ = std::fs::remove_file(apt.join("sources.list"));
    std::fs::write(apt.join("sources.list.d/debian.sources"), SOURCES)?;
    let mut tar = Command::new("tar")
        .arg("-C")
        .arg(rootfs)
        .args(["-c", "."])
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| std::io::Error::other(format!("tar: {e}")))?;
    let stdin = tar
        .stdout
        .take()
        .ok_or_else(|| std::io::Error::other("tar: no output"))?;
    let out = engine
        .command()
        .args(["import", "-", LOCAL_BASE])
        .stdin(stdin)
        .output()?;
    let tar_ok = tar.wait().is_ok_and(|s| s.success());
    if out.status.success() && tar_ok {
        Ok(())
    } else {
        Err(std::io::Error::other(
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        ))
    }
}

/// Builds the image of `inputs` on `base`, its output in a log under
/// `cache`, and checks that it carries the pinned compiler; returns its tag.
pub fn build(
    engine: &Engine,
    inputs: &Inputs,
    base: &str,
    cache: &Path,
) -> Result<String, SetupError> {
    if let Some(dir) = engine.storage() {
        check_space(&dir, BUILD_GIB, "building the image")?;
    }
    let tag = inputs.tag(base);
    let log = build_log(cache, &tag);
    let mut cmd = inputs.build_command(engine, base);
    let shown = std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|a| shell_word(&a.to_string_lossy()))
        .collect::<Vec<_>>()
        .join(" ");
    let failed = |tail: String| SetupError::Build {
        command: shown.clone(),
        log: log.clone(),
        tail,
    };
    let file = std::fs::File::create(&log).map_err(|e| failed(e.to_string()))?;
    let err = file.try_clone().map_err(|e| failed(e.to_string()))?;
    let status = cmd.stdout(file).stderr(err).status();
    if !status.is_ok_and(|s| s.success()) {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let tail = lines[lines.len().saturating_sub(12)..].join("\n");
        return Err(failed(tail));
    }
    let facts = facts(engine, &tag)?;
    check_pin(&inputs.rust_web, facts.first().map_or("", String::as_str))?;
    Ok(tag)
}

/// Where the build of `tag` logs.
pub fn build_log(cache: &Path, tag: &str) -> PathBuf {
    cache.join(format!(
        "build-{}.log",
        tag.rsplit(':').next().unwrap_or("image")
    ))
}

/// `word` quoted for a POSIX shell where it needs it.
fn shell_word(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@,+".contains(c))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    #[test]
    fn the_tag_changes_with_every_input_and_only_with_them() {
        let a = Inputs::new(&root(), vec!["qemu-user".into(), "gcc".into()]).unwrap();
        let same = Inputs::new(
            &root(),
            vec!["gcc".into(), "qemu-user".into(), "gcc".into()],
        )
        .unwrap();
        assert_eq!(a.tag(REGISTRY_BASE), same.tag(REGISTRY_BASE));
        assert_ne!(a.tag(REGISTRY_BASE), a.tag(LOCAL_BASE));
        let more = Inputs::new(
            &root(),
            vec![
                "gcc".into(),
                "qemu-user".into(),
                "gcc-s390x-linux-gnu".into(),
            ],
        )
        .unwrap();
        assert_ne!(a.tag(REGISTRY_BASE), more.tag(REGISTRY_BASE));
        let mut other_rust = a.clone();
        other_rust.rust_web = "1.96".into();
        assert_ne!(a.tag(REGISTRY_BASE), other_rust.tag(REGISTRY_BASE));
        let mut edited = a.clone();
        edited.files.push('\n');
        assert_ne!(a.tag(REGISTRY_BASE), edited.tag(REGISTRY_BASE));
        assert!(a.tag(LOCAL_BASE).starts_with("localhost/lockmatrix:"));
    }

    #[test]
    fn the_pin_defaults_to_the_workspace_rust_version_and_the_plugin_to_its_own() {
        if std::env::var_os(RUST_VARIABLE).is_some() {
            return;
        }
        let i = Inputs::new(&root(), vec![]).unwrap();
        let v = toolchain::rust_version(&root().join("Cargo.toml"));
        assert_eq!(i.rust_web, format!("{}.{}", v.0, v.1));
        assert!(
            toolchain::Version::parse(&i.plugin_rust) > Some(v),
            "{}",
            i.plugin_rust
        );
    }

    #[test]
    fn a_missing_containerfile_is_named() {
        let dir = std::env::temp_dir().join(format!("lm-no-containerfile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let e = Inputs::new(&dir, vec![]).unwrap_err();
        assert!(e.to_string().contains("containers/Containerfile"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_pin_is_checked_on_major_and_minor() {
        let debian = "rustc 1.85.0 (4d91de4e4 2025-02-17) (built from a source tarball)";
        assert!(check_pin("1.85", debian).is_ok());
        let e = check_pin("1.96", debian).unwrap_err();
        assert!(e.to_string().contains("LOCKMATRIX_IMAGE_RUST=1.85 "), "{e}");
        assert!(check_pin("1.85", "cat: /etc/lockmatrix/rustc: No such file").is_err());
    }

    #[test]
    fn both_engines_creation_times_read_the_same() {
        let podman = epoch_seconds("2026-12-05 22:30:01.123456789 +0000 UTC");
        let docker = epoch_seconds("2026-12-05T22:30:01.123Z");
        assert_eq!(podman, docker);
        assert_eq!(epoch_seconds("1970-01-02T00:00:00Z"), Some(86_400));
        assert_eq!(epoch_seconds("2000-03-01T00:00:00Z"), Some(951_868_800));
        assert_eq!(epoch_seconds("garbage"), None);
    }

    #[test]
    fn a_failed_build_shows_a_command_a_shell_runs_again() {
        assert_eq!(
            shell_word("PACKAGES=gcc qemu-user"),
            "'PACKAGES=gcc qemu-user'"
        );
        assert_eq!(shell_word("-t"), "-t");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
    }
}
