//! A git spec's credentials carried into the container the way the apt
//! path keeps them: never on a command line. The host writes each URL with
//! its user-info to a file only its user reads (`credentials-<pid>` in the
//! container's cache, a [`Scratch`]: gone however the run ends), mounts it
//! read-only and names it in [`VARIABLE`]; the run inside is given the
//! specs without user-info and takes the credentials back from the file
//! ([`restore`]), so its fetch gets them from git's environment as on the
//! host (`derive.rs`). `ps`, `podman inspect` and the container's
//! configuration see the plain URL and the file's path.

use super::spec::{redact, Credentials, Source, Spec};
use crate::scratch::Scratch;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// The file of credentials, inside the container.
pub const VARIABLE: &str = "LOCKMATRIX_GIT_CREDENTIALS";

/// The most read of it: a line per spec.
const LIMIT: u64 = 64 << 10;

/// Writes the URLs with user-info of `specs` to `dir/credentials-<pid>`
/// (mode 0600); `None` when none has any.
pub fn write(specs: &[&Spec], dir: &Path) -> std::io::Result<Option<Scratch>> {
    let lines: Vec<&str> = specs
        .iter()
        .filter_map(|s| s.credentials.as_ref().map(|c| c.url.as_str()))
        .collect();
    if lines.is_empty() {
        return Ok(None);
    }
    let file = Scratch::new(dir.join(format!("credentials-{}", std::process::id())));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(file.path())?;
    f.write_all(format!("{}\n", lines.join("\n")).as_bytes())?;
    Ok(Some(file))
}

/// `spec` with the credentials [`VARIABLE`]'s file holds for its URL, if
/// the variable is set and the spec has none of its own.
pub fn restore(mut spec: Spec) -> Spec {
    let (Source::Git { url, .. }, None) = (&spec.source, &spec.credentials) else {
        return spec;
    };
    let Some(path) = std::env::var_os(VARIABLE) else {
        return spec;
    };
    let Ok(Some(text)) = crate::file::read_text(Path::new(&path), LIMIT) else {
        return spec;
    };
    if let Some(line) = text.lines().find(|l| redact(l) == *url) {
        spec.credentials = Some(Credentials {
            url: line.to_string(),
        });
    }
    spec
}

/// Removes the credentials files in `dir` whose process is gone (what a
/// SIGKILL left).
pub fn prune(dir: &Path) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let pid = name
            .strip_prefix("credentials-")
            .and_then(|p| p.parse().ok());
        if pid.is_some_and(|p| !crate::file::process_alive(p)) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_go_through_a_private_file_and_come_back() {
        let dir = std::env::temp_dir().join(format!("lm-credentials-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cwd = Path::new("/");
        let given = "x@git:https://alice:to/k#en@host.example/r.git#main";
        let with = super::super::spec::parse(given, cwd).unwrap();
        let plain = super::super::spec::parse(&redact(given), cwd).unwrap();
        assert!(plain.credentials.is_none());
        let file = write(&[&with, &plain], &dir).unwrap().unwrap();
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(file.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        std::env::set_var(VARIABLE, file.path());
        let back = restore(plain);
        std::env::remove_var(VARIABLE);
        assert_eq!(back.credentials, with.credentials);
        assert_eq!(back.to_string(), with.to_string());
        let path = file.path().to_path_buf();
        drop(file);
        assert!(!path.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
