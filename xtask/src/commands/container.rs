//! `matrix --backend container` (or `cross`, or `auto` where apt-get
//! cannot serve): find the engine, build the image if this machine has
//! none of these inputs, then run the same `matrix` inside it. Every
//! set-up error is exit 2 with its fix, before anything is built.

use super::resolve;
use crate::flags::MatrixArgs;
use crate::packages;
use anyhow::{bail, Result};
use lockmatrix::config::Config;
use lockmatrix::container::engine::Engine;
use lockmatrix::container::invoke::Invocation;
use lockmatrix::container::{self, image, Backend};
use lockmatrix::select::Selected;
use lockmatrix::{readiness, toolchain};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// A matrix to run in the image: why, and what to mount.
pub struct Plan {
    /// Why the container (one line).
    why: String,
    /// `--results`, created only once the engine and the image are ready.
    results: PathBuf,
    /// Other directories the arguments name, to mount.
    mounts: Vec<PathBuf>,
    /// The ssh keys of the selected ssh targets, mounted read-only.
    keys: Vec<PathBuf>,
    /// `--crate` and `--against-crate` as given.
    krate: Option<String>,
    against_crate: Option<String>,
}

/// The toolchains `--toolchain` admits.
fn only(args: &MatrixArgs) -> Result<toolchain::Only> {
    Ok(match &args.toolchain {
        Some(t) => toolchain::Only::parse(t)?,
        None => toolchain::Only::Any,
    })
}

/// Whether this matrix runs in the container, and why: asked for, or
/// (auto) some selected target lacks a tool and apt-get cannot install it.
pub fn choose(
    root: &Path,
    args: &MatrixArgs,
    selected: &[Selected],
    need: toolchain::Version,
) -> Result<Option<Plan>> {
    let why = match args.backend {
        Backend::Apt => return Ok(None),
        Backend::Container => "--backend container".to_string(),
        Backend::Auto => match auto_reason(selected, need, &only(args)?) {
            Some(why) => why,
            None => return Ok(None),
        },
    };
    let results = resolve(root, &args.results);
    mountable("--results", &results)?;
    Ok(Some(Plan {
        why,
        results,
        mounts: mounts(root, args)?,
        keys: ssh_keys(selected)?,
        krate: args.krate.clone(),
        against_crate: args.against_crate.clone(),
    }))
}

/// Refuses a path the container cannot mount at its own path, before
/// anything is created.
fn mountable(what: &str, path: &Path) -> Result<()> {
    Ok(lockmatrix::container::invoke::mountable(what, path)?)
}

/// The keys of the selected ssh targets (`LOCKMATRIX_SSH_KEY_<NAME>`,
/// else `LOCKMATRIX_SSH_KEY`), to mount read-only at their own paths, as
/// the run inside reads them there.
fn ssh_keys(selected: &[Selected]) -> Result<Vec<PathBuf>> {
    let mut keys = Vec::new();
    for s in selected.iter().filter(|s| s.skip.is_none()) {
        if s.target.runner != lockmatrix::config::RunnerKind::Ssh {
            continue;
        }
        let Some(key) = lockmatrix::runner::ssh::key_for(&s.target) else {
            continue;
        };
        if !key.is_absolute() {
            bail!(
                "{}={}: the container reads the key at the path the variable names; give an absolute path",
                lockmatrix::runner::ssh::key_variable(&s.target.name),
                key.display()
            );
        }
        mountable(&lockmatrix::runner::ssh::key_variable(&s.target.name), &key)?;
        if key.is_file() && !keys.contains(&key) {
            keys.push(key);
        }
    }
    Ok(keys)
}

/// Why `--backend auto` takes the container for `selected`: a target
/// lacks a tool here and apt-get cannot install it (not Debian or
/// Ubuntu, or neither root nor sudo). A host that has every tool, from
/// any source, runs the matrix itself.
pub fn auto_reason(
    selected: &[Selected],
    need: toolchain::Version,
    only: &toolchain::Only,
) -> Option<String> {
    let lacking = selected.iter().filter(|s| s.skip.is_none()).find_map(|s| {
        readiness::check(&s.target, need, only)
            .missing()
            .map(|m| format!("{}: {m}", s.target.name))
    })?;
    decide(
        &lacking,
        toolchain::which("dpkg-query").is_some(),
        packages::can_install(),
    )
}

/// [`auto_reason`] of what it found: the first tool a target `lacking`,
/// on a Debian-like system or not, where apt-get can install (root or
/// sudo) or not.
fn decide(lacking: &str, debian: bool, can_install: bool) -> Option<String> {
    if debian && can_install {
        return None;
    }
    let what = if debian {
        "neither root nor passwordless sudo for apt-get"
    } else {
        "not Debian or Ubuntu, no apt-get"
    };
    Some(format!(
        "{what}, and this host lacks {lacking}; --backend apt uses this host's tools as they are"
    ))
}

/// What `doctor` says of the backend: which one `matrix` takes, the
/// engine, and the image with its age and compilers; and whether `matrix`
/// takes the container and can run it (its image runs, or can be built).
/// Builds nothing.
pub fn doctor_lines(
    root: &Path,
    config: &Config,
    selected: &[Selected],
    need: toolchain::Version,
) -> (Vec<String>, bool) {
    let auto = auto_reason(selected, need, &Default::default());
    let mut lines = vec![match &auto {
        Some(why) => format!("backend    container ({why})"),
        None => "backend    apt (this host; --backend container runs the image instead)".into(),
    }];
    let mut engine = match Engine::find() {
        Ok(e) => e,
        Err(e) => {
            lines.push(format!("container  unavailable: {e}"));
            return (lines, false);
        }
    };
    lines.push(format!(
        "container  {} [{}]",
        engine.program.display(),
        engine.version
    ));
    let inputs = match image::Inputs::new(root, all_packages(config)) {
        Ok(i) => i,
        Err(e) => {
            lines.push(format!("image      {e}"));
            return (lines, false);
        }
    };
    let mut runs = true;
    match image::built(&engine, &inputs) {
        None => lines.push(format!(
            "image      not built: `cargo xtask matrix --backend container` builds {} from {} once (about 6 min, 4.7 GB), rustc-web {}",
            inputs.tag(image::REGISTRY_BASE).rsplit_once(':').map_or("", |t| t.0),
            image::CONTAINERFILE,
            inputs.rust_web
        )),
        Some(tag) => {
            let facts = match engine
                .probe_run(&tag)
                .and_then(|_| image::facts(&engine, &tag))
            {
                Ok(f) => labelled(&f),
                Err(e) => {
                    runs = false;
                    format!("cannot run it: {e}")
                }
            };
            lines.push(format!("image      {tag}{}: {facts}", age(&engine, &tag)));
        }
    }
    (lines, auto.is_some() && runs)
}

/// The directories outside the checkout that the arguments read or write:
/// results, the config's, the baselines, the reports', the git repository
/// of a worktree and a `@path:` crate.
fn mounts(root: &Path, args: &MatrixArgs) -> Result<Vec<PathBuf>> {
    let mut paths = Vec::new();
    let config = resolve(root, &args.selection.config);
    mountable("--config", &config)?;
    paths.extend(config.parent().map(Path::to_path_buf));
    if let Some(b) = args.gate.baselines.as_deref() {
        let b = resolve(root, b);
        mountable("--baselines", &b)?;
        paths.push(b);
    }
    for (flag, out) in [
        ("--json", &args.gate.json),
        ("--markdown", &args.gate.markdown),
        ("--pr-comment", &args.gate.pr_comment),
    ] {
        let Some(out) = out.as_deref().filter(|p| p.as_os_str() != "-") else {
            continue;
        };
        let out = resolve(root, out);
        mountable(flag, &out)?;
        paths.extend(out.parent().map(Path::to_path_buf));
    }
    mountable("the checkout", root)?;
    mountable("the current directory", &std::env::current_dir()?)?;
    mountable("the cache", &lockmatrix::cache::dir()?)?;
    let cargo_home = lockmatrix::container::invoke::cargo_home(Path::new("/"));
    mountable("CARGO_HOME", &cargo_home)?;
    // A checkout that is a git worktree keeps its repository elsewhere.
    if let Ok(out) = std::process::Command::new("git")
        .args(["rev-parse", "--path-format=absolute", "--git-common-dir"])
        .current_dir(root)
        .output()
    {
        let dir = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if out.status.success() && !dir.is_empty() {
            paths.push(PathBuf::from(dir));
        }
    }
    for spec in [&args.krate, &args.against_crate].into_iter().flatten() {
        if let Some((_, dir)) = spec.split_once("@path:") {
            let dir = resolve(root, Path::new(dir));
            mountable("--crate", &dir)?;
            paths.push(dir);
        }
    }
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    Ok(paths
        .into_iter()
        .map(|p| p.canonicalize().unwrap_or(p))
        .filter(|p| !p.starts_with(&root) && p.exists())
        .collect())
}

/// The engine, and the image of these inputs (built now if need be).
pub fn ready_image(root: &Path, config: &Config) -> Result<(Engine, String)> {
    let cache = lockmatrix::cache::check()?.join("container");
    std::fs::create_dir_all(&cache).map_err(|e| anyhow::anyhow!("{}: {e}", cache.display()))?;
    container::setup::check_space(&cache, image::CACHE_GIB, "the container's builds")?;
    let mut engine = Engine::find()?;
    let inputs = image::Inputs::new(root, all_packages(config))?;
    let say = |notes: Vec<String>| {
        for n in notes {
            errln!("container: sandbox setting applied: {n}");
        }
    };
    let tag = match image::built(&engine, &inputs) {
        Some(tag) => {
            say(probe(&mut engine, &tag)?);
            tag
        }
        None => {
            if let Some(dir) = engine.storage() {
                container::setup::check_space(&dir, image::BUILD_GIB, "building the image")?;
            }
            let base = match image::find_base(&engine) {
                image::Base::Ready(base, note) => {
                    errln!("container: {note}");
                    base
                }
                image::Base::Debootstrap(why) => {
                    if toolchain::which("debootstrap").is_none() && packages::can_install() {
                        errln!("container: debootstrap makes the base here; installing it as the apt path installs its packages");
                        packages::ensure(&["debootstrap".to_string()])?;
                    }
                    errln!(
                        "container: no registry gives {} ({why}): making {} with `debootstrap --variant=minbase bookworm` (about 1 min; log {})",
                        image::REGISTRY_BASE,
                        image::LOCAL_BASE,
                        cache.join("debootstrap.log").display()
                    );
                    image::debootstrap(&engine, &cache, &why)?;
                    image::LOCAL_BASE
                }
            };
            say(probe(&mut engine, base)?);
            errln!(
                "container: building {} from {} with rustc-web {} (once per machine; about 6 min and 4.7 GB here; log {})",
                inputs.tag(base),
                image::CONTAINERFILE,
                inputs.rust_web,
                image::build_log(&cache, &inputs.tag(base)).display()
            );
            image::build(&engine, &inputs, base, &cache)?
        }
    };
    Ok((engine, tag))
}

/// [`Engine::probe_run`], installing what it names missing (runc, where
/// Debian's podman brought crun) the way the apt path installs packages
/// when it can, then trying again; else its error, which names the
/// package and its install command.
fn probe(engine: &mut Engine, image: &str) -> Result<Vec<String>> {
    match engine.probe_run(image) {
        Err(container::setup::SetupError::Missing { package, why, .. })
            if packages::can_install() =>
        {
            errln!("container: {why}; installing {package} as the apt path installs its packages");
            packages::ensure(&[package.to_string()])?;
            Ok(engine.probe_run(image)?)
        }
        other => Ok(other?),
    }
}

/// Every package the config names: one image serves every selection.
fn all_packages(config: &Config) -> Vec<String> {
    config
        .targets
        .iter()
        .flat_map(|t| t.packages.iter().cloned())
        .collect()
}

impl Plan {
    /// Runs the matrix inside the image; its exit status is the run's.
    pub fn run(self, root: &Path, config: &Config) -> Result<bool> {
        errln!("backend: container ({})", self.why);
        let (engine, tag) = ready_image(root, config)?;
        let facts = image::facts(&engine, &tag)?;
        let age = age(&engine, &tag);
        errln!(
            "container: {}, image {tag}{age}: {}",
            engine.version,
            labelled(&facts)
        );
        let cache = lockmatrix::cache::check()?.join("container");
        // SAFETY: getuid has no preconditions.
        if !self.keys.is_empty()
            && engine.kind == container::Kind::Docker
            && unsafe { libc::getuid() } != 0
        {
            bail!("ssh targets cannot run in Docker as a user other than root here: the matrix runs as --user {} in the image, which has no such user, and ssh refuses to run without one; use Podman (LOCKMATRIX_ENGINE=podman), or run those targets with --backend apt", unsafe { libc::getuid() });
        }
        // Only now, the engine and the image ready, is anything created.
        std::fs::create_dir_all(&self.results)
            .map_err(|e| anyhow::anyhow!("--results {}: {e}", self.results.display()))?;
        let mut mounts = self.mounts;
        let results = self.results.canonicalize()?;
        if !results.starts_with(root.canonicalize()?) {
            mounts.push(results);
        }
        let cwd = std::env::current_dir()?;
        // A --crate git URL's credentials: a private file, mounted
        // read-only, never the command line (`subject::credentials`).
        lockmatrix::subject::credentials::prune(&cache);
        let specs: Vec<lockmatrix::subject::Spec> = [&self.krate, &self.against_crate]
            .into_iter()
            .flatten()
            .filter_map(|s| lockmatrix::subject::parse(s, &cwd).ok())
            .collect();
        let credentials =
            lockmatrix::subject::credentials::write(&specs.iter().collect::<Vec<_>>(), &cache)?;
        let mut read_only = self.keys;
        let mut env = Vec::new();
        if let Some(f) = &credentials {
            read_only.push(f.path().to_path_buf());
            env.push((
                lockmatrix::subject::credentials::VARIABLE.to_string(),
                f.path().into(),
            ));
        }
        errln!(
            "container: the matrix runs inside, its cache {}; the image's cargo builds the xtask there first (a few minutes the first time)",
            cache.display()
        );
        let invocation = Invocation {
            engine: &engine,
            image: &tag,
            root,
            cwd: &cwd,
            cache: &cache,
            mounts,
            read_only,
            env,
            args: matrix_args(),
        };
        let status = invocation
            .command()
            .status()
            .map_err(|e| anyhow::anyhow!("{}: {e}", engine.program.display()))?;
        match status.code() {
            Some(0) => Ok(true),
            Some(1) => Ok(false),
            Some(2) => bail!("the matrix in the container stopped with exit status 2: see its error above"),
            _ => bail!(
                "{} run ended with {status} (125-127: the engine could not start the matrix; see its message above)",
                engine.kind.name()
            ),
        }
    }
}

/// The image's facts, each said for what: `suites rustc 1.85.0 (...); plugin rustc 1.96.0 (...); qemu-aarch64 version 7.2.22 (...)`.
fn labelled(facts: &[String]) -> String {
    facts
        .iter()
        .zip(
            ["suites ", "plugin ", ""]
                .iter()
                .chain(std::iter::repeat(&"")),
        )
        .map(|(f, label)| format!("{label}{f}"))
        .collect::<Vec<_>>()
        .join("; ")
}

/// `, built 3 days ago`, or nothing when the engine does not say.
pub fn age(engine: &Engine, tag: &str) -> String {
    let Some(created) = image::created(engine, tag) else {
        return String::new();
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let hours = now.saturating_sub(created) / 3600;
    if hours < 48 {
        format!(", built {hours} h ago")
    } else {
        format!(", built {} days ago", hours / 24)
    }
}

/// This process's arguments after `matrix`.
fn matrix_args() -> Vec<OsString> {
    std::env::args_os()
        .skip(1)
        .skip_while(|a| a != "matrix")
        .skip(1)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::decide;

    #[test]
    fn auto_takes_the_container_only_where_apt_get_cannot_serve() {
        let lacking = "aarch64: linker aarch64-linux-gnu-gcc not found";
        // Debian as root or with sudo: apt-get installs what is missing.
        assert_eq!(decide(lacking, true, true), None);
        // Fedora, macOS: the container, saying why and what.
        let why = decide(lacking, false, false).unwrap();
        assert!(
            why.starts_with("not Debian or Ubuntu, no apt-get, and this host lacks aarch64: linker aarch64-linux-gnu-gcc"),
            "{why}"
        );
        // Debian without root or sudo.
        let why = decide(lacking, true, false).unwrap();
        assert!(
            why.starts_with("neither root nor passwordless sudo"),
            "{why}"
        );
    }
}
