//! The ssh runner against a real OpenSSH server on 127.0.0.1, on a
//! non-default port with generated keys, started and stopped by the test.

use crate::common::*;
use serde_json::Value;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Sshd {
    child: Child,
    port: u16,
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn keygen(path: &Path) {
    let ok = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(path)
        .status()
        .unwrap();
    assert!(ok.success());
}

fn user() -> String {
    let out = Command::new("id").arg("-un").output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn start_sshd(dir: &Path, authorized: &Path) -> Sshd {
    keygen(&dir.join("host_key"));
    let port = free_port();
    let config = dir.join("sshd_config");
    std::fs::write(
        &config,
        format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host_key\nPidFile {d}/sshd.pid\n\
             AuthorizedKeysFile {auth}\nPermitRootLogin prohibit-password\nPasswordAuthentication no\n\
             KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nLogLevel ERROR\n",
            d = dir.display(),
            auth = authorized.display()
        ),
    )
    .unwrap();
    // sshd's privilege separation needs this directory; a fresh container lacks it.
    let _ = std::fs::create_dir_all("/run/sshd");
    let child = Command::new("/usr/sbin/sshd")
        .args(["-D", "-e", "-f"])
        .arg(&config)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("sshd from openssh-server (cargo xtask test installs it)");
    let sshd = Sshd { child, port };
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "sshd did not start on port {port}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    sshd
}

fn target(name: &str, class: &str, port: u16, user: &str) -> String {
    format!(
        "  - name: {name}\n    class: {class}\n    triple: x86_64-unknown-linux-gnu\n    runner: ssh\n    linker: cc\n    packages: []\n    enabled: true\n    ssh: {{host: 127.0.0.1, port: {port}, user: {user}}}\n"
    )
}

fn remote_dirs() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir("/tmp")
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("lockmatrix.")
        })
        .collect();
    v.sort();
    v
}

#[test]
fn runs_over_ssh_and_reports_unreachable_and_unauthorised_hosts() {
    let _cpus = shared_cpus();
    let dir = std::env::temp_dir().join(format!("lockmatrix-ssh-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (good_key, wrong_key) = (dir.join("client_key"), dir.join("wrong_key"));
    keygen(&good_key);
    keygen(&wrong_key);
    std::fs::copy(dir.join("client_key.pub"), dir.join("authorized_keys")).unwrap();
    let sshd = start_sshd(&dir, &dir.join("authorized_keys"));
    let user = user();

    let closed = free_port();
    let targets = format!(
        "defaults:\n  timeout_secs: 60\ntargets:\n{}{}{}",
        target("loopback", "x86", sshd.port, &user),
        target("closed-port", "x86", closed, &user),
        target("wrong-key", "x86", sshd.port, &user),
    );
    let config = dir.join("targets.yaml");
    std::fs::write(&config, targets).unwrap();
    let results = dir.join("results");
    let before = remote_dirs();

    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args([
            "matrix",
            "--no-install",
            "--no-gate",
            "--suites",
            "atomic",
            "--rounds",
            "1",
            "--config",
        ])
        .arg(&config)
        .arg("--results")
        .arg(&results)
        .env("LOCKMATRIX_SSH_KEY", &good_key)
        .env("LOCKMATRIX_SSH_KEY_WRONG_KEY", &wrong_key)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        out.status.code(),
        Some(1),
        "one good and two bad hosts: exit 1"
    );

    let run_dir = std::fs::read_dir(&results)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let run: Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("run.json")).unwrap()).unwrap();
    let status = |name: &str| {
        run["targets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap()
            .clone()
    };
    let good = status("loopback");
    assert_eq!(good["status"]["state"], "ok", "{good}");
    // The testbed is the remote CPU, read over ssh.
    assert_eq!(good["cpu_model"], run["host"]["cpu_model"], "{good}");
    let suite = &good["suites"][0];
    assert!(
        suite["command"]
            .as_str()
            .unwrap()
            .starts_with("env -i PATH=/usr/local/bin:/usr/bin:/bin LC_ALL=C ssh "),
        "{suite}"
    );
    assert!(suite["checks"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["ok"] == true));
    assert!(!suite["samples"].as_array().unwrap().is_empty());
    let refused = status("closed-port")["status"]["reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        refused.starts_with("ssh: ") && refused.contains("Connection refused"),
        "{refused}"
    );
    let denied = status("wrong-key")["status"]["reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        denied.starts_with("ssh: ") && denied.contains("Permission denied"),
        "{denied}"
    );
    assert!(stdout.contains("1 ok, 2 failed, 0 not run"), "{stdout}");
    // What was copied over is gone again.
    assert_eq!(remote_dirs(), before);

    // Without a key the target is "not run: no runner", not a silent pass.
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args([
            "matrix",
            "--no-install",
            "--no-gate",
            "--suites",
            "atomic",
            "--targets",
            "loopback",
            "--config",
        ])
        .arg(&config)
        .arg("--results")
        .arg(&results)
        .env_remove("LOCKMATRIX_SSH_KEY")
        .env_remove("LOCKMATRIX_SSH_KEY_LOOPBACK")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("not run: no runner: set LOCKMATRIX_SSH_KEY"),
        "{stdout}"
    );
    drop(sshd);
    std::fs::remove_dir_all(&dir).unwrap();
}
