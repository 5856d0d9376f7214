//! Cross-building the suites for each target: one cargo invocation per
//! target, two targets at a time. With a build-std toolchain std is built
//! first, once per triple, toolchain and base flags, into a sysroot in the
//! cache ([`sysroot_dir`]) that every variant of the triple builds against:
//! a variant's CPU and features apply to the suites and their crates.io
//! dependencies, not to std.

use crate::observe::{Event, Observer};
use crate::toolchain::Toolchain;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

pub mod c;
mod job;
mod stamp;
mod store;

pub use job::{Binary, BuildError, Built, Changed, Job, Tree};
pub(crate) use stamp::{clean_packages, SourcesStamp};
pub(crate) use store::lock_dir;
pub use store::store_dir;
use store::{builds_dir, built_before, keep, prune_store};

/// A hash of everything that decides what the suites compile to, from one
/// checkout: the workspace manifest and lock file, every file under
/// `suites/` (paths and contents), and the features.
pub fn sources_hash(root: &Path, features: &[String]) -> std::io::Result<String> {
    let mut files: Vec<PathBuf> = vec![root.join("Cargo.toml"), root.join("Cargo.lock")];
    let mut dirs = vec![root.join("suites")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files.sort();
    let mut all = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(root).unwrap_or(f);
        all.extend_from_slice(rel.to_string_lossy().as_bytes());
        all.push(0);
        all.extend_from_slice(crate::file::sha256(&std::fs::read(f)?).as_bytes());
        all.push(0);
    }
    all.extend_from_slice(features.join(",").as_bytes());
    Ok(crate::file::sha256(&all))
}

/// Makes sure cargo rebuilds the suites when `sources` differ from the
/// ones last built into this target dir ([`stamp`]; std is not in the
/// target dir).
fn forget_other_sources(root: &Path, job: &Job, sources: &str) -> Result<(), BuildError> {
    match SourcesStamp::new(&target_dir(job), sources.to_string()).holds() {
        true => Ok(()),
        false => clean_suites(root, job),
    }
}

/// `cargo clean` of the suite packages for `job` (dependencies stay).
fn clean_suites(root: &Path, job: &Job) -> Result<(), BuildError> {
    let mut clean = cargo_for(root, job);
    clean.args(["clean", "--release", "--target", &job.target.triple]);
    clean_packages(clean).map_err(|e| BuildError::Around {
        what: format!("cannot run {}: {e}", tc(job).cargo.display()),
    })?;
    // The record described the binaries just cleaned: kept, it would make
    // the next build (an `--against` base's or head's) warn of tampering.
    let _ = std::fs::remove_file(binaries_record(job));
    Ok(())
}

/// Where [`locked_build`] records the hashes of the binaries it built.
fn binaries_record(job: &Job) -> PathBuf {
    target_dir(job).join("lockmatrix-binaries")
}

/// The hashes of the binaries cargo last produced in `job`'s target dir,
/// as this module recorded them (`lockmatrix-binaries`: `suite sha256`
/// lines).
fn recorded_binaries(job: &Job) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(binaries_record(job));
    text.unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(s, h)| (s.to_string(), h.to_string()))
        .collect()
}

/// Suites whose cached binary no longer hashes to what its build recorded
/// (written to in place, truncated, replaced): cargo would take such a
/// binary for fresh, since it decides by its own fingerprints.
fn changed_since_built(job: &Job, out_dir: &Path, suites: &[&str]) -> Vec<PathBuf> {
    let recorded = recorded_binaries(job);
    suites
        .iter()
        .filter_map(|s| {
            let path = out_dir.join(s);
            let want = recorded.get(*s)?;
            let now = std::fs::read(&path).ok().map(|b| crate::file::sha256(&b));
            (now.as_ref() != Some(want)).then_some(path)
        })
        .collect()
}

/// One dir per triple, and per variant with its own CPU or features: the
/// two build at once, and a change of flags does not rebuild the other's
/// suites. (std is not in it: it comes from [`sysroot_dir`].)
fn target_dir(job: &Job) -> PathBuf {
    let t = job.target;
    let dir = match (&t.target_cpu, &t.target_features) {
        (None, None) => t.triple.to_string(),
        _ => format!("{}-{}", t.triple, t.name),
    };
    job.cache.join("target").join(dir)
}

/// The Rust toolchain of `job`: only its Rust suites' build asks, and a
/// target without one has none to build ([`crate::select::for_target`]).
fn tc<'a>(job: &'a Job) -> &'a Toolchain {
    job.toolchain
        .as_ref()
        .expect("Rust suites are built only for a target with a Rust toolchain")
}

/// `CARGO_TARGET_<TRIPLE>_<KEY>` as cargo spells it.
fn target_env(triple: &str, key: &str) -> String {
    format!(
        "CARGO_TARGET_{}_{key}",
        triple.to_uppercase().replace(['-', '.'], "_")
    )
}

/// A cargo command that nothing from the calling cargo or the user's shell
/// can steer: the suites and the plugin build the same way from any shell.
pub fn cargo(program: &Path) -> Command {
    let mut cmd = Command::new(program);
    for var in [
        "RUSTUP_TOOLCHAIN",
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_BUILD_RUSTFLAGS",
        "RUSTC_WRAPPER",
        "CARGO_BUILD_TARGET",
        "CARGO_BUILD_TARGET_DIR",
        "RUSTC_BOOTSTRAP",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

/// Cargo with the environment every build (and clean) for `job` uses.
fn cargo_for(root: &Path, job: &Job) -> Command {
    let triple = &job.target.triple;
    let mut cmd = cargo(&tc(job).cargo);
    cmd.current_dir(root)
        // One directory per triple: two targets build at once without
        // waiting on each other's cargo lock. A toolchain change shows in
        // cargo's fingerprints.
        .env("CARGO_TARGET_DIR", target_dir(job))
        .env("RUSTC", &tc(job).rustc)
        .env(target_env(triple, "LINKER"), &job.linker)
        // Static binaries run under qemu-user without a sysroot and can be
        // copied to a remote box as they are.
        // (and a variant's CPU and features, with the std built once for
        // the triple: see [`sysroot_dir`]).
        .env(target_env(triple, "RUSTFLAGS"), suite_rustflags(job));
    if tc(job).build_std {
        // The suites built with build-std's std before it was shared, and
        // the toolchain is a stable one: they still see the same compiler.
        cmd.env("RUSTC_BOOTSTRAP", "1");
    }
    cmd
}

/// The target's RUSTFLAGS for the suites: its codegen flags, and with a
/// build-std toolchain the sysroot its std was built into.
fn suite_rustflags(job: &Job) -> String {
    let mut flags = job.target.codegen_flags();
    if tc(job).build_std {
        flags.push(format!("--sysroot {}", sysroot_dir(job).display()));
    }
    flags.join(" ")
}

/// The crate std is built beside: nothing, with the workspace's release
/// profile (panic=abort), which `-Zbuild-std` builds std with.
/// `tests::std_is_built_with_the_workspace_release_profile` holds the
/// two together.
const STD_MANIFEST: &str = "[package]
name = \"lockmatrix-std\"
version = \"0.0.0\"
edition = \"2021\"

[lib]
path = \"lib.rs\"

[profile.release]
panic = \"abort\"

[workspace]
";

/// The std crates a sysroot holds.
const STD_CRATES: &str = "std,panic_abort";

/// std's features: its `default` set, without the `backtrace` cargo adds
/// by default. A suite aborts on panic and never prints a backtrace, and
/// the symbolizer behind it (addr2line, gimli, object, miniz_oxide: 6 of
/// the 22 rlibs) made each std build about a third longer (aarch64 on 2
/// vCPUs: 55 and 59 s with it, 47 and 37 s without). `default` is named,
/// not listed, so the set is whatever the toolchain's own std declares
/// (1.85's and 1.96's differ).
const STD_FEATURES: &str = "default";

/// Everything that decides the std a build-std toolchain builds for
/// `job`'s triple: the toolchain (where it is, its rustc and cargo
/// versions: the std sources come with it), the triple, the base flags
/// ([`crate::config::Target::std_codegen_flags`]), the crates, their
/// features and the profile. Not the target's CPU or features: variants share it.
pub fn sysroot_key(job: &Job) -> String {
    let tc = tc(job);
    let all = format!(
        "{:?}\0{:?}\0{}\0{}\0{}\0{}\0{STD_CRATES}\0{STD_FEATURES}\0{STD_MANIFEST}",
        tc.rustc,
        tc.cargo,
        tc.version(),
        crate::toolchain::command_version(Command::new(&tc.cargo).arg("-V")),
        job.target.triple,
        job.target.std_codegen_flags().join(" "),
    );
    crate::file::sha256(all.as_bytes())
}

/// `<cache>/sysroot/<key>`: the sysroot (`lib/rustlib/<triple>/lib/`, std's
/// rlibs) the suites of `job` build against, by [`sysroot_key`]. Written
/// once, by [`ensure_sysroot`], and never changed.
pub fn sysroot_dir(job: &Job) -> PathBuf {
    job.cache.join("sysroot").join(sysroot_key(job))
}

/// Where [`ensure_sysroot`] builds the sysroot's std (and holds its lock).
fn sysroot_work(job: &Job) -> PathBuf {
    job.cache
        .join("sysroot")
        .join(format!("{}.build", sysroot_key(job)))
}

/// Written last into a complete sysroot: what it is for (triple, flags,
/// toolchain), for whoever looks in the cache.
const SYSROOT_DONE: &str = "lockmatrix-sysroot";

/// The cargo command that builds std for `job`'s sysroot: a throwaway
/// crate ([`STD_MANIFEST`]) with `-Zbuild-std`, the base flags only.
pub fn std_command(job: &Job) -> Command {
    let work = sysroot_work(job);
    let triple = &job.target.triple;
    let mut cmd = cargo(&tc(job).cargo);
    cmd.current_dir(work.join("crate"))
        .env("CARGO_TARGET_DIR", work.join("target"))
        .env("RUSTC", &tc(job).rustc)
        // build-std is unstable, and the toolchain is a stable one.
        .env("RUSTC_BOOTSTRAP", "1")
        .env(
            target_env(triple, "RUSTFLAGS"),
            job.target.std_codegen_flags().join(" "),
        )
        .args(["build", "--release", "--target", triple])
        .arg(format!("-Zbuild-std={STD_CRATES}"))
        .arg(format!("-Zbuild-std-features={STD_FEATURES}"));
    cmd
}

/// Makes sure `job`'s sysroot ([`sysroot_dir`]) exists: builds std into
/// it when no build has, once across threads and processes (the two
/// variants of a triple building at once wait on one std build). Returns
/// what it did, for the build log.
fn ensure_sysroot(job: &Job, log: &Path) -> Result<String, BuildError> {
    let dir = sysroot_dir(job);
    let done = |d: &Path| d.join(SYSROOT_DONE).is_file();
    if done(&dir) {
        return Ok(format!("std: sysroot {} (built before)\n", dir.display()));
    }
    let work = sysroot_work(job);
    let _lock = lock_dir(&work).map_err(|e| around(e.to_string()))?;
    if done(&dir) {
        return Ok(format!(
            "std: sysroot {} (built meanwhile by another build)\n",
            dir.display()
        ));
    }
    if dir.to_string_lossy().contains(char::is_whitespace) {
        return Err(around(format!(
            "{}: the sysroot's path has whitespace, which RUSTFLAGS cannot carry (set LOCKMATRIX_CACHE)",
            dir.display()
        )));
    }
    let start = Instant::now();
    let said = build_std(job, &work, log)?;
    let (stage, copied) = stage_sysroot(job, &work)?;
    let secs = start.elapsed().as_secs_f64();
    let marker = stage.join(SYSROOT_DONE);
    std::fs::write(
        &marker,
        format!(
            "{}\n{}\n{} ({})\n{copied} rlibs, built in {secs:.1}s\n",
            job.target.triple,
            job.target.std_codegen_flags().join(" "),
            tc(job).version(),
            tc(job).label,
        ),
    )
    .map_err(|e| io_error(&marker, e))?;
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::rename(&stage, &dir).map_err(|e| io_error(&dir, e))?;
    // The sysroot is what is kept; the std build's own dir is large.
    let _ = std::fs::remove_dir_all(work.join("target"));
    Ok(format!(
        "{said}std: built sysroot {} in {secs:.1}s ({copied} rlibs)\n",
        dir.display()
    ))
}

/// A sysroot build's failure around cargo (its files, its lock).
fn around(what: String) -> BuildError {
    BuildError::Around { what }
}

/// A sysroot build's file operation on `path` that failed.
fn io_error(path: &Path, e: std::io::Error) -> BuildError {
    around(format!("{}: {e}", path.display()))
}

/// Builds std for `job` in `work`, through a throwaway crate
/// ([`std_command`]); returns what cargo said, or writes it to `log` and
/// says its first error when the build failed.
fn build_std(job: &Job, work: &Path, log: &Path) -> Result<String, BuildError> {
    let dir = sysroot_dir(job);
    let krate = work.join("crate");
    std::fs::create_dir_all(&krate).map_err(|e| io_error(&krate, e))?;
    for (name, text) in [("Cargo.toml", STD_MANIFEST), ("lib.rs", "")] {
        let path = krate.join(name);
        std::fs::write(&path, text).map_err(|e| io_error(&path, e))?;
    }
    let mut cmd = std_command(job);
    let out = cmd
        .output()
        .map_err(|e| around(format!("cannot run {}: {e}", tc(job).cargo.display())))?;
    let said = format!(
        "std: building sysroot {} for {} with {:?}\n{}",
        dir.display(),
        job.target.triple,
        job.target.std_codegen_flags().join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    if !out.status.success() {
        let _ = std::fs::write(log, &said);
        let first = said
            .lines()
            .find(|l| l.starts_with("error"))
            .unwrap_or("cargo failed");
        return Err(BuildError::Cargo {
            error: format!("building std: {first}"),
            log: log.to_path_buf(),
        });
    }
    Ok(said)
}

/// Copies the rlibs of std and what it depends on, but not the throwaway
/// crate's, from the std build in `work` into a staging dir, to be renamed
/// into place: a sysroot is there whole or not at all. Returns the staging
/// dir and the rlibs copied; an error when std's build left no libstd.
fn stage_sysroot(job: &Job, work: &Path) -> Result<(PathBuf, usize), BuildError> {
    let deps = work
        .join("target")
        .join(&job.target.triple)
        .join("release/deps");
    let stage = work.join("sysroot");
    let _ = std::fs::remove_dir_all(&stage);
    let lib = stage
        .join("lib/rustlib")
        .join(&job.target.triple)
        .join("lib");
    std::fs::create_dir_all(&lib).map_err(|e| io_error(&lib, e))?;
    let mut copied = 0;
    for entry in std::fs::read_dir(&deps).map_err(|e| io_error(&deps, e))? {
        let path = entry.map_err(|e| io_error(&deps, e))?.path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if name.ends_with(".rlib") && !name.starts_with("liblockmatrix_std-") {
            std::fs::copy(&path, lib.join(&*name)).map_err(|e| io_error(&path, e))?;
            copied += 1;
        }
    }
    if !lib
        .read_dir()
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| e.file_name().to_string_lossy().starts_with("libstd-"))
    {
        return Err(around(format!(
            "{}: std's build left no libstd rlib",
            deps.display()
        )));
    }
    Ok((stage, copied))
}

/// The cargo command that builds `suites` for `job`.
pub fn command(root: &Path, job: &Job, suites: &[&str], features: &[String]) -> (Command, PathBuf) {
    let triple = &job.target.triple;
    let mut cmd = cargo_for(root, job);
    // No -Zbuild-std: with a build-std toolchain, std comes from the
    // sysroot in the target's RUSTFLAGS ([`ensure_sysroot`]).
    cmd.args(["build", "--release", "--locked", "--target", triple]);
    for s in suites {
        cmd.args(["-p", s]);
    }
    if !features.is_empty() {
        cmd.args(["--features", &features.join(",")]);
    }
    (cmd, target_dir(job).join(triple).join("release"))
}

/// What every build from one tree shares ([`TreeBuilder`]).
struct Request<'a> {
    tree: &'a Tree<'a>,
    suites: &'a [&'a str],
    features: &'a [String],
    /// [`sources_hash`] of the tree.
    sources: &'a str,
}

fn build_one(req: &Request, job: &Job, observer: &dyn Observer) -> Built {
    let start = Instant::now();
    let binaries = locked_build(req, job, observer);
    Built {
        secs: start.elapsed().as_secs_f64(),
        binaries,
        sources: req.sources.to_string(),
    }
}

/// The suites of `req` that `job`'s target runs, each built by what
/// builds its language: cargo the Rust ones, the cross gcc the C ones.
fn locked_build(
    req: &Request,
    job: &Job,
    observer: &dyn Observer,
) -> Result<BTreeMap<String, Binary>, BuildError> {
    use crate::select::{lang, Lang};
    let (suites, _) = crate::select::for_target(req.suites, job.target);
    let (c_suites, rust): (Vec<&str>, Vec<&str>) =
        suites.iter().partition(|s| lang(s) == Some(Lang::C));
    let mut binaries = BTreeMap::new();
    if !rust.is_empty() {
        let rust_req = Request {
            suites: &rust,
            ..*req
        };
        binaries.extend(cargo_build(&rust_req, job, observer)?);
    }
    for suite in c_suites {
        // A tree from before the suite existed (an `--against` base) has
        // none to build: its target runs the head's alone.
        if !req.tree.root.join("suites").join(suite).is_dir() {
            continue;
        }
        let (name, binary) = c::build(req.tree, job, suite, req.sources, observer)?;
        binaries.insert(name, binary);
    }
    Ok(binaries)
}

/// The Rust suites of `req`, built by cargo with `job`'s toolchain.
fn cargo_build(
    req: &Request,
    job: &Job,
    observer: &dyn Observer,
) -> Result<BTreeMap<String, Binary>, BuildError> {
    let Request {
        tree,
        suites,
        features,
        sources,
    } = *req;
    let root = tree.root;
    let log = tree.logs.join(format!("build-{}.log", job.target.name));
    let log = log.as_path();
    // One build at a time per target dir, across processes: another
    // checkout's build would clean and replace the binaries between this
    // one's build and its copy of them.
    let _lock = lock_dir(&target_dir(job)).map_err(|e| BuildError::Around {
        what: e.to_string(),
    })?;
    let (mut cmd, out_dir) = command(root, job, suites, features);
    let key = build_key(&cmd, sources, job);
    let kept = tree.bins.join(&job.target.name);
    if let Some(done) = built_before(&job.cache, &key, suites, &kept, observer)? {
        let said: String = done
            .iter()
            .map(|(s, b)| format!("{s}: {}\n", b.path.display()))
            .collect();
        let _ = std::fs::write(
            log,
            format!("built before (build key {key}): cargo not run; the binaries come from the store\n{said}"),
        );
        return Ok(done);
    }
    let std_said = if tc(job).build_std {
        ensure_sysroot(job, log)?
    } else {
        String::new()
    };
    forget_other_sources(root, job, sources)?;
    let changed = changed_since_built(job, &out_dir, suites);
    if !changed.is_empty() {
        let shown: Vec<String> = changed.iter().map(|p| p.display().to_string()).collect();
        observer.event(Event::Warning(&format!(
            "{}: changed since it was built (sha256 differs from the build's record): rebuilding",
            shown.join(", ")
        )));
        for p in &changed {
            let _ = std::fs::remove_file(p);
        }
        clean_suites(root, job)?;
    }
    let out = cmd.output().map_err(|e| BuildError::Around {
        what: format!("cannot run {}: {e}", tc(job).cargo.display()),
    })?;
    let _ = std::fs::write(log, [std_said.as_bytes(), &out.stderr].concat());
    if !out.status.success() {
        let text = String::from_utf8_lossy(&out.stderr);
        let first = text
            .lines()
            .find(|l| l.starts_with("error"))
            .unwrap_or("cargo failed");
        return Err(BuildError::Cargo {
            error: first.to_string(),
            log: log.to_path_buf(),
        });
    }
    let to = tree.bins.join(&job.target.name);
    let mut kept = BTreeMap::new();
    for s in suites {
        let built = out_dir.join(s);
        if !built.is_file() {
            return Err(BuildError::NoBinary { path: built });
        }
        kept.insert(
            s.to_string(),
            keep(&job.cache, &built, s, &to.join(s), observer)?,
        );
    }
    let record: String = kept
        .iter()
        .map(|(s, b)| format!("{s} {}\n", b.sha256))
        .collect();
    let _ = std::fs::write(binaries_record(job), &record);
    let _ = SourcesStamp::new(&target_dir(job), sources.to_string()).write();
    let builds = builds_dir(&job.cache);
    if std::fs::create_dir_all(&builds).is_ok() {
        let _ = crate::file::replace(&builds.join(&key), &record);
    }
    Ok(kept)
}

/// Everything that decides what a build produces: the suite sources'
/// hash, the toolchain's version, and the cargo command with the
/// environment it sets (toolchain, linker, target, codegen flags and the
/// sysroot, whose path is its [`sysroot_key`], suites, features). Not the tree's path: two checkouts of one commit (a clone
/// and an `--against` worktree) build the same binaries.
fn build_key(cmd: &Command, sources: &str, job: &Job) -> String {
    let mut all = format!(
        "{sources}\0{}\0{:?}\0",
        tc(job).version(),
        cmd.get_program()
    );
    for a in cmd.get_args() {
        all.push_str(&format!("{a:?}\0"));
    }
    let mut envs: Vec<_> = cmd.get_envs().collect();
    envs.sort();
    for (k, v) in envs {
        all.push_str(&format!("{k:?}={v:?}\0"));
    }
    crate::file::sha256(all.as_bytes())
}

/// Builds and emulated runs at once: both cores stay busy through the
/// single-crate stretches of a std build (core, std) and the links. Two
/// variants of one triple share a std: the second waits for the first's
/// (see [`order`]).
pub const PARALLEL: usize = 2;

/// One tree's builds: its sources hashed once (every build key names
/// them), then each job built when the caller asks, from any thread.
pub struct TreeBuilder<'a> {
    tree: &'a Tree<'a>,
    suites: &'a [&'a str],
    features: &'a [String],
    /// [`sources_hash`] of the tree, or why it could not be read.
    sources: Result<String, BuildError>,
}

impl<'a> TreeBuilder<'a> {
    pub fn new(tree: &'a Tree<'a>, suites: &'a [&'a str], features: &'a [String]) -> Self {
        let sources = sources_hash(tree.root, features).map_err(|e| BuildError::Around {
            what: format!(
                "reading the suite sources under {}: {e}",
                tree.root.display()
            ),
        });
        TreeBuilder {
            tree,
            suites,
            features,
            sources,
        }
    }

    /// Builds `job`'s suites from this tree.
    pub fn build(&self, job: &Job, observer: &dyn Observer) -> Built {
        match &self.sources {
            Ok(sources) => {
                let req = Request {
                    tree: self.tree,
                    suites: self.suites,
                    features: self.features,
                    sources,
                };
                build_one(&req, job, observer)
            }
            Err(e) => Built {
                secs: 0.0,
                binaries: Err(e.clone()),
                sources: String::new(),
            },
        }
    }
}

/// Removes old stored binaries before a run's builds ([`prune_store`]).
pub fn prune(jobs: &[Job]) {
    if let Some(j) = jobs.first() {
        prune_store(&j.cache);
    }
}

/// The order to build `jobs` in: the first job of each triple, those
/// with CPU variants first, then the variants. Built at once, two
/// variants of one triple would wait on each other's std; after it, a
/// variant builds only its suites, so the short variant builds come last
/// and fill the end of the queue instead of one long std build.
pub fn order(jobs: &[Job]) -> Vec<usize> {
    let mut per_triple: std::collections::HashMap<&crate::name::Name, usize> = Default::default();
    for j in jobs {
        *per_triple.entry(&j.target.triple).or_default() += 1;
    }
    let mut seen = std::collections::HashSet::new();
    let (mut first, later): (Vec<usize>, Vec<usize>) =
        (0..jobs.len()).partition(|&i| seen.insert(&jobs[i].target.triple));
    // Stable: the configuration's order among equals.
    first.sort_by_key(|&i| std::cmp::Reverse(per_triple[&jobs[i].target.triple]));
    first.into_iter().chain(later).collect()
}

/// One build, reported as the step `step`.
pub fn build_step(builder: &TreeBuilder, job: &Job, step: &str, observer: &dyn Observer) -> Built {
    observer.event(Event::StepStarted(step));
    let built = builder.build(job, observer);
    let outcome = match &built.binaries {
        Ok(_) => format!("built in {:.1}s", built.secs),
        Err(e) => e.to_string(),
    };
    observer.event(Event::StepDone {
        step,
        outcome: &outcome,
    });
    built
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Target;

    fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    fn targets() -> Vec<Target> {
        crate::config::load(&root().join("targets.yaml"))
            .unwrap()
            .targets
    }

    fn job<'a>(target: &'a Target, build_std: bool, rustc: &str) -> Job<'a> {
        Job {
            target,
            toolchain: Some(Toolchain {
                label: "test".into(),
                cargo: "/nonexistent/cargo".into(),
                rustc: rustc.into(),
                build_std,
            }),
            linker: "aarch64-linux-gnu-gcc".into(),
            cache: "/cache".into(),
        }
    }

    fn env(cmd: &Command, key: &str) -> Option<String> {
        cmd.get_envs()
            .find(|(k, _)| *k == key)
            .and_then(|(_, v)| v)
            .map(|v| v.to_string_lossy().into_owned())
    }

    fn args(cmd: &Command) -> Vec<String> {
        cmd.get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    const FLAGS: &str = "CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUSTFLAGS";

    #[test]
    fn each_triple_builds_once_before_its_variants_and_those_with_variants_first() {
        let targets = targets();
        let jobs: Vec<Job> = targets
            .iter()
            .map(|t| job(t, true, "/usr/bin/rustc"))
            .collect();
        let order = order(&jobs);
        let mut sorted = order.clone();
        sorted.sort();
        assert_eq!(sorted, (0..jobs.len()).collect::<Vec<_>>(), "each job once");
        let triple = |i: usize| &jobs[i].target.triple;
        let triples: std::collections::HashSet<_> = jobs.iter().map(|j| &j.target.triple).collect();
        // The first builds are one per triple; a variant only after them.
        let (firsts, variants) = order.split_at(triples.len());
        let first_triples: std::collections::HashSet<_> =
            firsts.iter().map(|&i| triple(i)).collect();
        assert_eq!(first_triples, triples);
        assert!(!variants.is_empty(), "targets.yaml has CPU variants");
        // A triple with variants starts before any triple without.
        let count = |i: usize| {
            jobs.iter()
                .filter(|j| &j.target.triple == triple(i))
                .count()
        };
        let counts: Vec<usize> = firsts.iter().map(|&i| count(i)).collect();
        assert!(counts.windows(2).all(|w| w[0] >= w[1]), "{counts:?}");
        assert!(counts[0] > 1, "{counts:?}");
    }

    #[test]
    fn variants_share_std_built_without_their_flags() {
        let all = targets();
        let by = |n: &str| all.iter().find(|t| t.name.as_str() == n).unwrap();
        let (plain, lse) = (by("aarch64"), by("aarch64-lse"));
        let (plain, lse) = (
            job(plain, true, "/nonexistent/rustc"),
            job(lse, true, "/nonexistent/rustc"),
        );
        // One std for the two.
        assert_eq!(sysroot_dir(&plain), sysroot_dir(&lse));
        let sysroot = sysroot_dir(&lse);
        assert!(sysroot.starts_with("/cache/sysroot"), "{sysroot:?}");

        // The variant's suites: its features, the shared sysroot, no build-std.
        let (suite, _) = command(&root(), &lse, &["spinlock"], &[]);
        let flags = env(&suite, FLAGS).unwrap();
        assert_eq!(
            flags,
            format!(
                "-C target-feature=+crt-static,+lse --sysroot {}",
                sysroot.display()
            )
        );
        assert!(!args(&suite).iter().any(|a| a.starts_with("-Zbuild-std")));

        // std: the base flags alone, with build-std, in its own dir.
        for j in [&plain, &lse] {
            let std = std_command(j);
            assert_eq!(
                env(&std, FLAGS).as_deref(),
                Some("-C target-feature=+crt-static")
            );
            assert!(args(&std).contains(&"-Zbuild-std=std,panic_abort".to_string()));
            assert!(!args(&std).iter().any(|a| a.contains("lse")));
            assert_eq!(env(&std, "CARGO_TARGET_DIR"), {
                let w = sysroot_work(j).join("target");
                Some(w.display().to_string())
            });
        }

        // The build keys still tell the variants apart, and carry the sysroot.
        let (plain_cmd, _) = command(&root(), &plain, &["spinlock"], &[]);
        assert_ne!(
            build_key(&plain_cmd, "s", &plain),
            build_key(&suite, "s", &lse)
        );
    }

    #[test]
    fn the_sysroot_is_per_triple_and_toolchain() {
        let all = targets();
        let by = |n: &str| all.iter().find(|t| t.name.as_str() == n).unwrap();
        let a = job(by("aarch64-lse"), true, "/nonexistent/rustc");
        let other_rustc = job(by("aarch64-lse"), true, "/elsewhere/rustc");
        let other_triple = job(by("powerpc64le-power10"), true, "/nonexistent/rustc");
        assert_ne!(sysroot_dir(&a), sysroot_dir(&other_rustc));
        assert_ne!(sysroot_dir(&a), sysroot_dir(&other_triple));
        // A different sysroot is a different build.
        let (x, _) = command(&root(), &a, &["spinlock"], &[]);
        let (y, _) = command(&root(), &other_rustc, &["spinlock"], &[]);
        assert_ne!(build_key(&x, "s", &a), build_key(&y, "s", &other_rustc));
        // power10's cpu is the suites', not std's.
        let ppc = "CARGO_TARGET_POWERPC64LE_UNKNOWN_LINUX_GNU_RUSTFLAGS";
        assert_eq!(
            env(&std_command(&other_triple), ppc).as_deref(),
            Some("-C target-feature=+crt-static")
        );
        let (suite, _) = command(&root(), &other_triple, &["spinlock"], &[]);
        let suite_flags = env(&suite, ppc).unwrap();
        assert!(
            suite_flags.starts_with(
                "-C target-cpu=pwr10 -C target-feature=+crt-static --sysroot /cache/sysroot/"
            ),
            "{suite_flags}"
        );
    }

    #[test]
    fn a_toolchain_with_std_builds_as_before() {
        let all = targets();
        let x86 = all.iter().find(|t| t.name.as_str() == "x86_64").unwrap();
        let j = job(x86, false, "rustc");
        let (cmd, _) = command(&root(), &j, &["spinlock"], &[]);
        assert_eq!(
            env(&cmd, "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUSTFLAGS").as_deref(),
            Some("-C target-feature=+crt-static")
        );
        assert_eq!(env(&cmd, "RUSTC_BOOTSTRAP"), None);
        assert!(!args(&cmd).iter().any(|a| a.starts_with("-Z")));
    }

    /// `-Zbuild-std` built std with the workspace's release profile; the
    /// sysroot's std is built with [`STD_MANIFEST`]'s, which must match.
    #[test]
    fn std_is_built_with_the_workspace_release_profile() {
        let section = |text: &str, header: &str| -> Vec<String> {
            text.lines()
                .skip_while(|l| l.trim() != header)
                .skip(1)
                .take_while(|l| !l.trim_start().starts_with('['))
                .map(|l| l.split('#').next().unwrap().trim().to_string())
                .filter(|l| !l.is_empty())
                .collect()
        };
        let workspace = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
        assert_eq!(
            section(&workspace, "[profile.release]"),
            section(STD_MANIFEST, "[profile.release]"),
            "the workspace's release profile changed: change STD_MANIFEST's with it"
        );
        // Nothing else in the workspace reaches std's crates.
        assert!(!workspace.contains("[profile.release.package.\"*\"]"));
        assert!(!workspace.contains("[profile.release.build-override]"));
    }
}
