//! A lock crate named on the command line: `NAME@VERSION` (crates.io),
//! `NAME@path:DIR` (a working copy) or `NAME@git:URL#REV`.
//!
//! Every part ends up in a generated Cargo.toml and in reports, so each is
//! checked against a small alphabet here, where it enters.

use super::error::SubjectError;
use crate::name::Name;
use std::fmt;
use std::path::PathBuf;

/// Where the crate comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A crates.io version, taken exactly (`=VERSION`).
    Registry(String),
    /// A directory holding the crate's Cargo.toml (made absolute).
    Path(PathBuf),
    /// A git repository and a commit, tag or branch.
    Git { url: String, rev: String },
}

/// A lock crate and the version of it to build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    pub name: Name,
    /// A git URL here has no user-info: [`Spec::credentials`] holds it.
    pub source: Source,
    /// The `user:password@` a git URL was given with, stripped from it
    /// where it entered: it is handed to the one git fetch that needs it
    /// (`derive.rs`, in the fetch's environment) and never stored,
    /// printed or rendered.
    pub credentials: Option<Credentials>,
}

/// The user-info of a URL, kept out of every output.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    /// The URL as given, with its user-info.
    pub url: String,
}

impl Credentials {
    /// The user and password of an http(s) URL, percent-decoded as git
    /// decodes a URL's user-info (no password: empty); `None` for other
    /// schemes, whose user-info is a login name (`ssh://git@host`).
    pub fn http_login(&self) -> Option<(String, String)> {
        if !is_http(&self.url) {
            return None;
        }
        let info = user_info(&self.url)?;
        let (user, password) = info.split_once(':').unwrap_or((info, ""));
        Some((percent_decoded(user), percent_decoded(password)))
    }
}

fn is_http(url: &str) -> bool {
    url.starts_with("https://") || url.starts_with("http://")
}

/// The user-info of a URL (before its `@`), as [`redact`] finds it.
fn user_info(url: &str) -> Option<&str> {
    let start = url.find("://")? + 3;
    // redact() takes away the user-info and its `@`, nothing else.
    let len = (url.len() - redact(url).len()).checked_sub(1)?;
    url.get(start..start + len)
}

/// `s` with each `%XX` turned into its byte (a stray `%` kept as it is).
fn percent_decoded(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = b
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
            Some(v) if b[i] == b'%' => {
                out.push(v);
                i += 3;
            }
            _ => {
                out.push(b[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Credentials(..)")
    }
}

/// A URL's user-info removed from text: the one rule, in `escape`, which
/// the container backend (below this module) uses too.
pub use crate::escape::redact;

impl fmt::Display for Spec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.source {
            Source::Registry(v) => write!(f, "{}@{v}", self.name),
            Source::Path(p) => write!(f, "{}@path:{}", self.name, p.display()),
            Source::Git { url, rev } => write!(f, "{}@git:{url}#{rev}", self.name),
        }
    }
}

const EXPECTED: &str =
    "expected NAME@VERSION (crates.io), NAME@path:DIR or NAME@git:URL#REV, e.g. spin@0.9.8";

/// Reads `--crate`'s value; relative paths are taken from `cwd`.
pub fn parse(s: &str, cwd: &std::path::Path) -> Result<Spec, SubjectError> {
    let bad =
        |why: &str| SubjectError::Spec(format!("--crate {}: {why}; {EXPECTED}", shown(&redact(s))));
    let (name, rest) = s.split_once('@').ok_or_else(|| bad("no `@`"))?;
    if !is_crate_name(name) {
        return Err(bad(
            "the crate's name must be 1 to 64 ASCII letters, digits, `_` or `-`, starting with a letter",
        ));
    }
    let name = Name::parse(name).map_err(|e| bad(&e.to_string()))?;
    let mut credentials = None;
    let source = if let Some(dir) = rest.strip_prefix("path:") {
        if dir.is_empty() {
            return Err(bad("`path:` needs the crate's directory"));
        }
        let dir = cwd.join(dir);
        if !dir.join("Cargo.toml").is_file() {
            return Err(bad(&format!("{} holds no Cargo.toml", dir.display())));
        }
        let dir = dir.canonicalize().map_err(|e| bad(&e.to_string()))?;
        if dir.to_str().is_none_or(|p| p.chars().any(char::is_control)) {
            return Err(bad("the path is not printable UTF-8"));
        }
        Source::Path(dir)
    } else if let Some(git) = rest.strip_prefix("git:") {
        let (url, rev) = git
            .rsplit_once('#')
            .ok_or_else(|| bad("a git source needs `#REV`"))?;
        let schemes = ["https://", "http://", "ssh://", "git://", "file://"];
        if !schemes.iter().any(|p| url.starts_with(p))
            || url.len() > 512
            || url
                .chars()
                .any(|c| c.is_whitespace() || c.is_control() || "\"'\\`$<>{}".contains(c))
        {
            return Err(bad("the git URL must be https://, http://, ssh://, git:// or file:// with no quotes, spaces or `$`"));
        }
        let rev_ok = !rev.is_empty()
            && rev.len() <= 128
            && !rev.starts_with('-')
            && rev
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._/-".contains(c));
        if !rev_ok {
            return Err(bad("REV must be a commit, tag or branch name"));
        }
        let plain = redact(url);
        if !is_http(url) && user_info(url).is_some_and(|i| i.contains(':')) {
            return Err(bad(
                "only an http:// or https:// URL takes a password; ssh:// takes a key (ssh-agent), git:// and file:// no login",
            ));
        }
        if plain != url {
            credentials = Some(Credentials {
                url: url.to_string(),
            });
        }
        Source::Git {
            url: plain,
            rev: rev.to_string(),
        }
    } else if is_version(rest) {
        Source::Registry(rest.to_string())
    } else {
        return Err(bad(&format!("`{}` is not a version", shown(rest))));
    };
    Ok(Spec {
        name,
        source,
        credentials,
    })
}

/// A crates.io package name.
fn is_crate_name(s: &str) -> bool {
    (1..=64).contains(&s.len())
        && s.starts_with(|c: char| c.is_ascii_alphabetic())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// `MAJOR.MINOR.PATCH`, with an optional `-pre` and `+build` part.
fn is_version(s: &str) -> bool {
    let core = s.split(['-', '+']).next().unwrap_or("");
    let parts: Vec<&str> = core.split('.').collect();
    s.len() <= 64
        && parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || ".-+".contains(c))
}

/// At most 80 characters, control characters escaped: safe in a message.
fn shown(s: &str) -> String {
    s.chars().take(80).flat_map(char::escape_debug).collect()
}

/// `s` as a TOML basic string.
pub fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(s: &str) -> Result<Spec, SubjectError> {
        parse(s, std::path::Path::new("/nonexistent"))
    }

    #[test]
    fn each_source_is_read() {
        let s = parsed("spin@0.9.8").unwrap();
        assert_eq!(s.name.as_str(), "spin");
        assert_eq!(s.source, Source::Registry("0.9.8".into()));
        assert_eq!(s.to_string(), "spin@0.9.8");
        let g = parsed("parking_lot@git:https://github.com/Amanieu/parking_lot#0.12.5").unwrap();
        assert_eq!(
            g.source,
            Source::Git {
                url: "https://github.com/Amanieu/parking_lot".into(),
                rev: "0.12.5".into()
            }
        );
        let dir = std::env::temp_dir().join(format!("lockmatrix-spec-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("Cargo.toml"), "").unwrap();
        let p = parse("tiny@path:.", &dir).unwrap();
        assert_eq!(p.source, Source::Path(dir.canonicalize().unwrap()));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn anything_else_is_refused_with_what_was_expected() {
        for bad in [
            "spin",
            "@0.9.8",
            "spin@",
            "spin@latest",
            "spin@0.9",
            "spin@0.9.8\"",
            "sp in@0.9.8",
            "../x@0.9.8",
            "spin@path:/nonexistent-dir",
            "spin@git:https://x/y",
            "spin@git:https://x/y#-oProxyCommand=x",
            "spin@git:https://x/\"y#main",
            "spin@git:ext::sh -c touch /tmp/x#main",
            "spin@git:https://x/${{ github.token }}#main",
        ] {
            let e = parsed(bad).unwrap_err().to_string();
            assert!(e.contains("expected NAME@VERSION"), "{bad}: {e}");
        }
        assert!(parsed(&format!("{}@1.0.0", "a".repeat(65))).is_err());
    }

    #[test]
    fn credentials_in_a_git_url_are_kept_out_of_the_spec() {
        let s = parsed("x@git:http://user:s3cr3t@host/r.git#main").unwrap();
        assert_eq!(s.to_string(), "x@git:http://host/r.git#main");
        assert!(!format!("{s:?}").contains("s3cr3t"));
        assert_eq!(s.credentials.unwrap().url, "http://user:s3cr3t@host/r.git");
        assert_eq!(
            redact("clone https://tok@github.com/a/b and git://u:p@h:9/x#y"),
            "clone https://github.com/a/b and git://h:9/x#y"
        );
        // The URL grammar, not the first `/`: a password holding `/`, `#`,
        // `?` or `@` goes whole; a URL without user-info is left as it is.
        for (url, plain) in [
            ("https://u:pa/ss@host/r.git", "https://host/r.git"),
            ("https://u:pa#ss@host/r.git", "https://host/r.git"),
            (
                "https://u:pa?ss@host:8080/r.git?x#y",
                "https://host:8080/r.git?x#y",
            ),
            ("https://u:p@ss/w@rd@host/r", "https://host/r"),
            ("ssh://git@github.com/a/b.git", "ssh://github.com/a/b.git"),
            ("https://host/r.git", "https://host/r.git"),
            ("`https://u:p/q@h/x`", "`https://h/x`"),
        ] {
            assert_eq!(redact(url), plain, "{url}");
        }
        let s = parsed("x@git:https://alice:to/k#e?n@host/r.git#main").unwrap();
        assert_eq!(s.to_string(), "x@git:https://host/r.git#main");
        assert!(s.credentials.is_some());
        let e = parsed("x@git:http://user:s3cr3t@host/r.git").unwrap_err();
        assert!(!e.to_string().contains("s3cr3t"), "{e}");
        assert!(parsed("x@path:")
            .unwrap_err()
            .to_string()
            .contains("needs the crate's directory"));
    }

    #[test]
    fn an_http_login_is_the_user_info_decoded_and_other_schemes_have_none() {
        let login = |url: &str| {
            parsed(&format!("x@git:{url}#main"))
                .unwrap()
                .credentials
                .unwrap()
                .http_login()
        };
        let pair = |u: &str, p: &str| Some((u.to_string(), p.to_string()));
        assert_eq!(
            login("http://user:s3cr3t@host/r.git"),
            pair("user", "s3cr3t")
        );
        assert_eq!(login("https://u:pa/ss@host:8/r"), pair("u", "pa/ss"));
        assert_eq!(login("https://u:p@ss/w@rd@host/r"), pair("u", "p@ss/w@rd"));
        assert_eq!(login("https://a%40b:p%2Fq%3a@host/r"), pair("a@b", "p/q:"));
        assert_eq!(login("https://tok@host/r"), pair("tok", ""));
        assert_eq!(login("https://u:100%@host/r"), pair("u", "100%"));
        assert_eq!(login("ssh://git@github.com/a/b.git"), None);
        let e = parsed("x@git:ssh://git:s3cr3t@host/r.git#main").unwrap_err();
        assert!(
            e.to_string()
                .contains("only an http:// or https:// URL takes a password"),
            "{e}"
        );
        assert!(!e.to_string().contains("s3cr3t"), "{e}");
    }

    #[test]
    fn toml_strings_are_escaped() {
        assert_eq!(toml_string("a\"b\\c\n"), "\"a\\\"b\\\\c\\u000A\"");
    }
}
