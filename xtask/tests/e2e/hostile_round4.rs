//! Round four of hostile input, one test per probe, kept: a baseline's
//! `commit` that is an option or off this history, a run's commit, a
//! cache someone else can write or a worktree planted in it, a path crate
//! with secrets and a sparse file beside it, credentials in a git URL,
//! `validate-gate --json` at a link or a FIFO, a lock type that closes the
//! generated struct, and the minor ones. Each asserts the exit status, the
//! first line a user sees, and that nothing was created, executed or
//! leaked outside the run's directories (`Lab::case`: the lab's results,
//! baselines and cache byte for byte as before, nothing beside them).

use crate::common::*;
use crate::lab::*;
use crate::scratch::git;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// Asserts that the output says `what` somewhere.
fn says(out: &Output, what: &str) {
    let all = text(out);
    assert!(all.contains(what), "expected `{what}` in:\n{all}");
}

/// The lab's baseline of x86_64's atomic suite, changed by `edit`.
fn edit_baseline(lab: &Lab, edit: impl FnOnce(&mut Value)) -> PathBuf {
    let file = lab.baselines.join("x86_64/atomic.json");
    edit_json(&file, edit);
    file
}

/// No file under `dir` (and no name) holds `secret`.
fn nowhere(dir: &Path, secret: &str) {
    for (p, kind) in snapshot(dir) {
        assert!(!p.to_string_lossy().contains(secret), "{}", p.display());
        if kind == "dir" || kind == "special" || kind.starts_with("link") {
            continue;
        }
        let bytes = std::fs::read(&p).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(secret),
            "{} holds the secret",
            p.display()
        );
    }
}

#[test]
fn a_baseline_commit_that_is_a_git_option_never_reaches_git() {
    let _cpus = shared_cpus();
    let lab = Lab::with_run("commit-option");
    let pwned = lab.dir.join("pwned");
    let file = edit_baseline(&lab, |v| {
        v["commit"] = Value::from(format!("--output={}", pwned.display()))
    });
    // Round three wrote the repository's log to `pwned..<sha>` and exited 0.
    for args in [
        vec!["gate", "{run}", "--baselines", "{baselines}"],
        vec![
            "report",
            "{run}",
            "--html",
            "-o",
            "-",
            "--baselines",
            "{baselines}",
        ],
    ] {
        let (out, _) = lab.case(&args, 2, "using run");
        says(&out, &format!("{}: corrupt baseline", file.display()));
        says(&out, "commit `--output=");
        says(&out, "not a commit id; expected 40 or 64 hex digits");
    }
    // The history gates each run and says why one is not gated.
    let (out, _) = lab.case(
        &[
            "report",
            "--history",
            "{results}",
            "--baselines",
            "{baselines}",
        ],
        0,
        "warning: ",
    );
    says(&out, "not a commit id");
    // The matrix refuses it before building anything.
    lab.case(
        &[
            "matrix",
            "--no-install",
            "--targets",
            "x86_64",
            "--suites",
            "atomic",
            "--results",
            "{results}",
            "--baselines",
            "{baselines}",
        ],
        2,
        &format!("error: {}: corrupt baseline", file.display()),
    );
    let planted: Vec<_> = std::fs::read_dir(&lab.dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("pwned"))
        .collect();
    assert!(planted.is_empty(), "git wrote {planted:?}");
}

#[test]
fn a_run_whose_commit_is_an_option_is_refused_and_never_recorded() {
    let _cpus = shared_cpus();
    let lab = Lab::with_run("run-commit-option");
    let run = lab.edited_run("20300101T000000Z", |d| {
        edit_json(&d.join("run.json"), |v| {
            v["host"]["lockmatrix_commit"] = Value::from("--output=/tmp/lockmatrix-pwned")
        })
    });
    let (out, _) = lab.case(
        &[
            "baseline",
            "update",
            "--from",
            s(&run),
            "--baselines",
            "{baselines}",
        ],
        2,
        "using run",
    );
    says(&out, "run.json: not a lockmatrix run: commit `--output=");
    let (out, _) = lab.case(
        &["gate", s(&run), "--baselines", "{baselines}"],
        2,
        "using run",
    );
    says(&out, "not a commit id");
    assert!(!Path::new("/tmp/lockmatrix-pwned").exists());
}

#[test]
fn a_ten_megabyte_commit_is_named_in_a_short_line() {
    let _cpus = shared_cpus();
    let lab = Lab::with_run("commit-huge");
    edit_baseline(&lab, |v| v["commit"] = Value::from("a".repeat(10 << 20)));
    let (out, took) = lab.case(
        &["gate", "{run}", "--baselines", "{baselines}"],
        2,
        "using run",
    );
    let longest = text(&out).lines().map(str::len).max().unwrap_or(0);
    assert!(longest < 1000, "a line of {longest} bytes");
    assert!(took < Duration::from_secs(10), "{took:?}");
}

/// A scratch repository of this checkout with a side branch whose one
/// commit adds a build script to the atomic suite that would leave
/// `marker` behind; returns (main's commit, the side commit).
fn repo_with_side_commit(repo: &Path, marker: &Path) -> (String, String) {
    let base = crate::scratch::scratch_repo(repo);
    git(repo, &["checkout", "-q", "-b", "side"]);
    std::fs::write(
        repo.join("suites/atomic/build.rs"),
        format!(
            "fn main() {{ std::fs::write({:?}, \"built\").unwrap(); }}\n",
            marker.display().to_string()
        ),
    )
    .unwrap();
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-q", "-m", "side: a build script"]);
    let side = git(repo, &["rev-parse", "HEAD"]);
    git(repo, &["checkout", "-q", "main"]);
    (base, side)
}

#[test]
fn a_baseline_commit_off_this_history_never_starts_a_trailer_range() {
    let _cpus = shared_cpus();
    let lab = Lab::with_run("commit-side");
    let repo = lab.dir.join("repo");
    let marker = lab.dir.join("executed");
    let (base, side) = repo_with_side_commit(&repo, &marker);
    // The run was made at main's commit of this repository.
    edit_json(&lab.run.join("run.json"), |v| {
        v["host"]["lockmatrix_commit"] = Value::from(base.as_str())
    });
    let gate = |lab: &Lab, status: i32| {
        let mut cmd = lab.command(&["gate", "{run}", "--baselines", "{baselines}"]);
        cmd.current_dir(&repo);
        lab.case_of(cmd, status, "using run").0
    };
    // Both sides differ: an ancestor is taken, the side commit is not.
    let file = edit_baseline(&lab, |v| v["commit"] = Value::from(base.as_str()));
    gate(&lab, 0);
    edit_baseline(&lab, |v| v["commit"] = Value::from(side.as_str()));
    let out = gate(&lab, 2);
    says(
        &out,
        &format!(
            "error: {}: commit {side}: not an ancestor of {}",
            file.display(),
            &base[..12]
        ),
    );
    assert!(!marker.exists());
}

#[test]
fn a_baseline_commit_off_this_history_is_never_built_for_a_recount() {
    let _cpus = shared_cpus();
    let work = scratch_dir("round4-recount");
    let (repo, results) = (work.join("repo"), work.join("results"));
    let marker = work.join("executed");
    let (_, side) = repo_with_side_commit(&repo, &marker);
    let args = [
        "--targets",
        "aarch64",
        "--suites",
        "spinlock",
        "--rounds",
        "1",
    ];
    let mut first = args.to_vec();
    first.push("--no-gate");
    let (out, run) = crate::scratch::matrix_in(&repo, &results, &first);
    assert!(out.status.success(), "{}", text(&out));
    let update = xtask_in(&repo, &["baseline", "update", "--from", s(&run)]);
    assert!(update.status.success(), "{}", text(&update));
    // Counted by another compiler, at the side commit: a recount would
    // check it out and build it.
    let file = repo.join("baselines/aarch64/spinlock.json");
    edit_json(&file, |v| {
        v["commit"] = Value::from(side.as_str());
        v["testbed"]["compiler_version"] = Value::from("rustc 1.0.0 (another compiler)");
        v.as_object_mut().unwrap().remove("binary");
    });
    let (out, _) = crate::scratch::matrix_in(&repo, &results, &args);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    says(
        &out,
        &format!(
            "error: {}: commit {side}: not an ancestor of HEAD",
            file.display()
        ),
    );
    assert!(!text(&out).contains("--against"), "{}", text(&out));
    assert!(!marker.exists(), "the side commit's build script ran");
    let worktree = worktree_in(&lockmatrix_cache(), &repo, &side);
    assert!(!worktree.exists(), "{} checked out", worktree.display());
    std::fs::remove_dir_all(&work).unwrap();
}

/// The cache the commands use when no variable names another.
fn lockmatrix_cache() -> PathBuf {
    std::env::var_os("LOCKMATRIX_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var("HOME").unwrap()).join(".cache/lockmatrix"))
}

/// Where `cache` keeps the worktree of `commit` for the repository at
/// `repo`: `worktrees/<the first 8 bytes of the sha256 of its real git
/// directory, in hex>/<commit>`, as the cache's layout is documented.
fn worktree_in(cache: &Path, repo: &Path, commit: &str) -> PathBuf {
    let common = git(
        repo,
        &["rev-parse", "--path-format=absolute", "--git-common-dir"],
    );
    let real = std::fs::canonicalize(common.trim()).unwrap();
    let key = &sha256_hex(real.as_os_str().as_encoded_bytes())[..16];
    cache.join("worktrees").join(key).join(commit)
}

#[test]
fn a_plain_directory_planted_as_a_worktree_is_replaced_never_built() {
    let _cpus = shared_cpus();
    let lab = Lab::new("planted-worktree");
    let head = git(&repo_root(), &["rev-parse", "HEAD"]);
    let planted = worktree_in(&lab.cache, &repo_root(), &head);
    let marker = lab.dir.join("executed");
    // A copy of the checkout, with a build script that leaves a mark.
    for f in git(&repo_root(), &["ls-files"]).lines() {
        let (from, to) = (repo_root().join(f), planted.join(f));
        if from.is_file() {
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(&from, &to).unwrap();
        }
    }
    std::fs::write(
        planted.join("suites/atomic/build.rs"),
        format!(
            "fn main() {{ std::fs::write({:?}, \"built\").unwrap(); }}\n",
            marker.display().to_string()
        ),
    )
    .unwrap();
    let out = lab.run(&[
        "matrix",
        "--no-install",
        "--no-insns",
        "--no-gate",
        "--targets",
        "x86_64",
        "--suites",
        "atomic",
        "--rounds",
        "2",
        "--against",
        "HEAD",
        "--results",
        "{results}",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(!marker.exists(), "the planted build script ran");
    assert!(!planted.join("suites/atomic/build.rs").exists());
    let listed = git(&repo_root(), &["worktree", "list", "--porcelain"]);
    assert!(
        listed.contains(&format!("worktree {}", planted.display())),
        "{listed}"
    );
    let _ = std::fs::remove_dir_all(&planted);
    git(&repo_root(), &["worktree", "prune"]);
}

#[test]
fn a_cache_others_can_write_is_refused_through_a_link_too() {
    let lab = Lab::new("open-cache");
    let open = lab.dir.join("open");
    std::fs::create_dir_all(&open).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let link = lab.dir.join("link");
    std::os::unix::fs::symlink(&open, &link).unwrap();
    let matrix = [
        "matrix",
        "--no-install",
        "--targets",
        "x86_64",
        "--results",
        "{results}",
    ];
    for (cache, first) in [
        (
            &open,
            format!(
                "error: {}: refused as lockmatrix's cache: writable by everyone (mode 0777)",
                open.display()
            ),
        ),
        (
            &link,
            format!(
                "error: {}: refused as lockmatrix's cache: writable by everyone (mode 0777) (a link to {})",
                link.display(),
                open.display()
            ),
        ),
    ] {
        let mut cmd = lab.command(&matrix);
        cmd.env("LOCKMATRIX_CACHE", cache);
        lab.case_of(cmd, 2, &first);
    }
}

#[test]
fn a_relative_xdg_cache_home_is_ignored() {
    let lab = Lab::new("xdg-relative");
    let home = scratch_dir("round4-home");
    let mut cmd = lab.command(&[
        "matrix",
        "--no-install",
        "--targets",
        "x86_64",
        "--against",
        "no-such-revision",
        "--results",
        "{results}",
    ]);
    cmd.env_remove("LOCKMATRIX_CACHE")
        .env("XDG_CACHE_HOME", "relative-cache")
        .env("HOME", &home);
    lab.case_of(
        cmd,
        2,
        "error: --against no-such-revision: not a revision of this repository",
    );
    assert!(!repo_root().join("relative-cache").exists());
    assert!(home.join(".cache/lockmatrix").is_dir());
    std::fs::remove_dir_all(&home).unwrap();
}

/// A copy of the tinylock fixture in a git repository at `dir`.
fn tinylock_repo(dir: &Path) -> PathBuf {
    let from = repo_root().join("xtask/tests/fixtures/tinylock");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    for f in ["Cargo.toml", "src/lib.rs"] {
        std::fs::copy(from.join(f), dir.join(f)).unwrap();
    }
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "tinylock"]);
    dir.to_path_buf()
}

#[test]
fn a_sparse_file_beside_a_path_crate_is_refused_unread() {
    let lab = Lab::new("crate-sparse");
    // Beside the lab: its snapshot would read the 2 GB.
    let krate = tinylock_repo(&scratch_dir("round4-sparse"));
    let big = std::fs::File::create(krate.join("data.bin")).unwrap();
    big.set_len(2 << 30).unwrap();
    // Named by the manifest's `include`, so packaged although untracked
    // (an untracked file the manifest does not name is left out unread:
    // hostile_round5).
    let manifest = std::fs::read_to_string(krate.join("Cargo.toml")).unwrap();
    std::fs::write(
        krate.join("Cargo.toml"),
        manifest.replace(
            "publish = false\n",
            "publish = false\ninclude = [\"src/**\", \"Cargo.toml\", \"data.bin\"]\n",
        ),
    )
    .unwrap();
    let spec = format!("tinylock@path:{}", krate.display());
    let start = Instant::now();
    let (out, _) = lab.case(
        &[
            "matrix",
            "--no-install",
            "--targets",
            "x86_64",
            "--crate",
            &spec,
            "--results",
            "{results}",
        ],
        2,
        "error: ",
    );
    says(
        &out,
        "data.bin: over 16 MiB, the most lockmatrix copies of a path crate: refused",
    );
    assert!(start.elapsed() < Duration::from_secs(60));
    assert!(!krate.join("target").exists(), "written into the crate");
    std::fs::remove_dir_all(&krate).unwrap();
}

#[test]
fn a_path_crate_leaves_its_secrets_and_no_copy_in_the_cache() {
    let _cpus = shared_cpus();
    let lab = Lab::new("crate-secret");
    let krate = tinylock_repo(&lab.dir.join("tinylock"));
    // Made here, so that no copy of this source holds it.
    let secret = format!("hunter2-{}", std::process::id());
    std::fs::write(krate.join(".env"), format!("TOKEN={secret}")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(krate.join(".env"), std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::write(krate.join("notes.txt"), format!("{secret} untracked")).unwrap();
    std::fs::write(krate.join(".gitignore"), "notes.txt\n").unwrap();
    let spec = format!("tinylock@path:{}", krate.display());
    let out = lab.run(&[
        "matrix",
        "--no-install",
        "--no-insns",
        "--targets",
        "x86_64",
        "--suites",
        "spinlock",
        "--rounds",
        "1",
        "--crate",
        &spec,
        "--results",
        "{results}",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        first_line(&out).starts_with("crate: tinylock 0.1.0"),
        "{}",
        text(&out)
    );
    nowhere(&lab.cache, &secret);
    nowhere(&lab.results, &secret);
    let copies: Vec<_> = std::fs::read_dir(lab.cache.join("crate-trees"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".crate"))
        .map(|e| e.path())
        .collect();
    assert!(copies.is_empty(), "copies left: {copies:?}");
}

#[test]
fn credentials_in_a_git_url_reach_no_output_and_no_file() {
    let lab = Lab::new("crate-credentials");
    let mut cmd = lab.command(&[
        "matrix",
        "--no-install",
        "--targets",
        "x86_64",
        "--crate",
        "tinylock@git:http://user:s3cr3t-round4@127.0.0.1:9/tinylock.git#main",
        "--results",
        "{results}",
    ]);
    cmd.env("GIT_TERMINAL_PROMPT", "0");
    let (out, _) = lab.case_of(
        cmd,
        2,
        "error: tinylock@git:http://127.0.0.1:9/tinylock.git#main: cargo cannot resolve it",
    );
    assert!(!text(&out).contains("s3cr3t-round4"), "{}", text(&out));
    nowhere(&lab.dir, "s3cr3t-round4");
}

#[test]
fn validate_gate_json_never_writes_through_a_link_or_into_a_fifo() {
    let lab = Lab::new("validate-output");
    let victim = lab.file("victim", "keep");
    let link = lab.dir.join("link.json");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let fifo = lab.dir.join("fifo.json");
    let c = std::ffi::CString::new(s(&fifo)).unwrap();
    // SAFETY: mkfifo on a path in the lab.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let recording = repo_root().join("validation/2026-12-03-perlock");
    let first = std::fs::read_dir(&recording)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    for (dest, kind) in [(&link, "a symbolic link"), (&fifo, "a FIFO")] {
        let start = Instant::now();
        lab.case(
            &["validate-gate", "--from", s(&first), "--json", s(dest)],
            2,
            &format!(
                "error: {}: is {kind}; expected a regular file to write",
                dest.display()
            ),
        );
        assert!(start.elapsed() < Duration::from_secs(30));
    }
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
}

#[test]
fn a_lock_type_that_closes_the_generated_struct_is_refused() {
    let lab = Lab::new("crate-type");
    let krate = lab.dir.join("tinylock");
    tinylock_repo(&krate);
    let manifest = std::fs::read_to_string(krate.join("Cargo.toml")).unwrap();
    std::fs::write(
        krate.join("Cargo.toml"),
        manifest.replace(
            "mutex = [\"RawTinyLock\"]",
            "mutex = [\"RawTinyLock<()>), pub struct Evil(u8\"]",
        ),
    )
    .unwrap();
    let spec = format!("tinylock@path:{}", krate.display());
    let (out, _) = lab.case(
        &[
            "matrix",
            "--no-install",
            "--targets",
            "x86_64",
            "--crate",
            &spec,
            "--results",
            "{results}",
        ],
        2,
        &format!("error: {spec}: "),
    );
    says(
        &out,
        "lock type `RawTinyLock<()>), pub struct Evil(u8`: expected a path",
    );
    assert!(!krate.join("target").exists(), "written into the crate");
}

#[test]
fn a_line_break_or_bidi_control_in_a_testbed_field_is_refused() {
    let _cpus = shared_cpus();
    let lab = Lab::with_run("testbed-bidi");
    for (value, code) in [("AMD\nnew line", "U+000A"), ("AMD \u{202e}DMA", "U+202E")] {
        edit_baseline(&lab, |v| v["testbed"]["cpu_model"] = Value::from(value));
        let (out, _) = lab.case(
            &["gate", "{run}", "--baselines", "{baselines}"],
            2,
            "using run",
        );
        says(&out, &format!("testbed.cpu_model: holds {code}"));
    }
}

#[test]
fn the_minor_ones_are_exit_2_with_a_short_first_line() {
    let lab = Lab::new("minor");
    let matrix = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = ["matrix", "--no-install", "--targets", "x86_64", "--results"]
            .map(String::from)
            .to_vec();
        v.push("{results}".into());
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    let cases: Vec<(Vec<String>, String)> = vec![
        (
            matrix(&["--features", "a\nb"]),
            "error: --features `a\\nb`: not a feature name".into(),
        ),
        (
            matrix(&["--config", "/etc/passwd"]),
            "error: /etc/passwd:1:1: invalid type: string of ".into(),
        ),
        (
            matrix(&["--crate", "tinylock@path:"]),
            "error: --crate tinylock@path:: `path:` needs the crate's directory".into(),
        ),
        // (`--crate` alone with `--json` or `--require-gate` is a run
        // whose verdict says it compared nothing: `verdicts.rs`.)
        (
            ["validate-gate", "--evaluations", "1000000000"]
                .map(String::from)
                .to_vec(),
            "error: --evaluations is 1000000000: expected at most 10000".into(),
        ),
    ];
    for (args, first) in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (out, _) = lab.case(&args, 2, first);
        assert!(!text(&out).contains("root:x:0:0"), "{}", text(&out));
    }
    // One recording given three times counts once, or is refused.
    let recording = repo_root().join("validation/2026-12-03-perlock");
    let first = std::fs::read_dir(&recording)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    lab.case(
        &["validate-gate", "--from", s(&first), s(&first), s(&first)],
        2,
        &format!("error: --from {}: given twice", first.display()),
    );
}

/// A git server on 127.0.0.1 (dumb HTTP, by python3's http.server) that
/// serves `dir` only to `user:password`; its port, and the process.
pub(crate) fn git_server_with_password(dir: &Path, password: &str) -> (u16, std::process::Child) {
    let script = format!(
        "import base64,functools,http.server,os\n\
         want='Basic '+base64.b64encode(os.environ['LOCKMATRIX_TEST_AUTH'].encode()).decode()\n\
         class H(http.server.SimpleHTTPRequestHandler):\n\
         \x20 def do_GET(self):\n\
         \x20   if self.headers.get('Authorization')!=want:\n\
         \x20     self.send_response(401);self.send_header('WWW-Authenticate','Basic realm=x');self.end_headers();return\n\
         \x20   super().do_GET()\n\
         \x20 def log_message(self,*a):pass\n\
         s=http.server.ThreadingHTTPServer(('127.0.0.1',0),functools.partial(H,directory={:?}))\n\
         print(s.server_address[1],flush=True)\n\
         s.serve_forever()\n",
        dir.display().to_string()
    );
    // The password by the environment, never the server's command line:
    // round five looks for it in every process's arguments.
    let mut child = std::process::Command::new("python3")
        .args(["-c", &script])
        .env("LOCKMATRIX_TEST_AUTH", format!("user:{password}"))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs");
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    (line.trim().parse().unwrap(), child)
}

#[test]
fn a_password_in_a_git_url_fetches_the_crate_and_is_kept_nowhere() {
    let _cpus = shared_cpus();
    let lab = Lab::new("crate-password");
    let served = scratch_dir("round4-served");
    let krate = tinylock_repo(&served.join("work"));
    git(
        &served,
        &["clone", "-q", "--bare", s(&krate), "tinylock.git"],
    );
    git(&served.join("tinylock.git"), &["update-server-info"]);
    // Made here, so that no copy of this source holds it.
    let password = format!("pw{}", std::process::id());
    let (port, mut server) = git_server_with_password(&served, &password);
    let spec = format!("tinylock@git:http://user:{password}@127.0.0.1:{port}/tinylock.git#main");
    // Every program the run starts, with its whole command line: git's
    // remote helper is handed the URL it fetches, so a login put back into
    // the URL (`insteadOf`) shows there, and `ps` shows it to every user.
    let execs = served.join("execve.log");
    let xtask = lab.command(&[
        "matrix",
        "--no-install",
        "--no-insns",
        "--targets",
        "x86_64",
        "--suites",
        "spinlock",
        "--rounds",
        "1",
        "--crate",
        &spec,
        "--results",
        "{results}",
    ]);
    let mut traced = Command::new("strace");
    traced
        .args([
            "-f",
            "-qq",
            "--seccomp-bpf",
            "-e",
            "trace=execve",
            "-s",
            "65536",
            "-o",
        ])
        .arg(&execs)
        .arg(xtask.get_program())
        .args(xtask.get_args())
        .current_dir(repo_root())
        .envs(xtask.get_envs().filter_map(|(k, v)| Some((k, v?))));
    let out = traced.output().expect("strace runs");
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let execs = std::fs::read_to_string(&execs).unwrap();
    assert!(
        execs.contains("remote-http"),
        "the fetch started no git remote-http:\n{execs}"
    );
    // Every command line but the one the user typed.
    let typed = format!("execve({:?}", env!("CARGO_BIN_EXE_xtask"));
    let mut started = execs.lines().filter(|l| !l.contains(&typed));
    if let Some(line) = started.find(|l| l.contains(&password)) {
        panic!(
            "a command line holds the password: {}",
            line.replace(&password, "<PASSWORD>")
        );
    }
    assert!(
        first_line(&out).starts_with(&format!(
            "crate: tinylock 0.1.0: 1 locks (tinylock.RawTinyLock), lock_api 0.4.14, git http://127.0.0.1:{port}/tinylock.git commit "
        )),
        "{}",
        text(&out)
    );
    assert!(!text(&out).contains(&password), "{}", text(&out));
    nowhere(&lab.dir, &password);
    std::fs::remove_dir_all(&served).unwrap();
}
