//! The container backend (`--backend container`, docs/containers.md): for
//! hosts where apt-get cannot install the toolchains (not Debian or
//! Ubuntu, or not root), the whole `matrix` runs inside an image built
//! from `containers/Containerfile` that carries the apt path's toolchain,
//! with the checkout, the cache and the results mounted at their own
//! paths. Every stage after it is the apt path's, unchanged.
//!
//! [`engine`] finds Podman or Docker and the sandbox options it needs;
//! [`image`] builds the image once per machine, keyed by its inputs;
//! [`invoke`] is the `run` command line of the matrix inside; [`setup`]
//! says why it cannot start, with the fix.

pub mod engine;
pub mod image;
pub mod invoke;
pub mod setup;

/// `LOCKMATRIX_ENGINE` names the engine to use (`podman` or `docker`);
/// unset, Podman is tried first, then Docker.
pub const ENGINE_VARIABLE: &str = "LOCKMATRIX_ENGINE";
pub const REGISTRY_BASE: &str = "docker.io/library/debian:12";
/// The rustc-web release the image pins, e.g. `1.96` [default: the
/// workspace's `rust-version`, bookworm main's release, which the
/// committed baselines were counted with].
pub const RUST_VARIABLE: &str = "LOCKMATRIX_IMAGE_RUST";

/// Where `matrix` builds and runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// The container where apt-get cannot serve, else the host.
    Auto,
    /// This host's toolchains, installed with apt-get where missing.
    Apt,
    /// The image (`cross` is the same: what a user of cross-rs expects).
    Container,
}

impl std::str::FromStr for Backend {
    type Err = UnknownBackend;
    fn from_str(s: &str) -> Result<Backend, UnknownBackend> {
        match s {
            "auto" => Ok(Backend::Auto),
            "apt" | "host" => Ok(Backend::Apt),
            "container" | "cross" => Ok(Backend::Container),
            _ => Err(UnknownBackend(s.to_string())),
        }
    }
}

/// A `--backend` that is none of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownBackend(pub String);

impl std::fmt::Display for UnknownBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "unknown backend {:?}: auto, apt (this host), container (or cross)",
            self.0
        )
    }
}

impl std::error::Error for UnknownBackend {}

/// The container engines lockmatrix drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Podman,
    Docker,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Podman => "podman",
            Kind::Docker => "docker",
        }
    }

    pub(crate) fn from_name(name: &str) -> Option<Kind> {
        match name {
            "podman" => Some(Kind::Podman),
            "docker" => Some(Kind::Docker),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::setup::{check_space, free_gib, SetupError};
    use super::*;

    #[test]
    fn backends_by_name_and_cross_is_the_container() {
        assert_eq!("cross".parse(), Ok(Backend::Container));
        assert_eq!("container".parse(), Ok(Backend::Container));
        assert_eq!("apt".parse(), Ok(Backend::Apt));
        let e = "docker".parse::<Backend>().unwrap_err().to_string();
        assert!(e.contains("auto, apt"), "{e}");
    }

    #[test]
    fn every_setup_error_says_the_command_that_fixes_it() {
        let cases = [
            (
                SetupError::NoEngine { only: None },
                "sudo dnf install podman",
            ),
            (
                SetupError::NoEngine {
                    only: Some("docker"),
                },
                "LOCKMATRIX_ENGINE",
            ),
            (
                SetupError::NoSpace {
                    dir: "/var/lib/containers".into(),
                    free_gib: 1.5,
                    need_gib: 8.0,
                    what: "the image",
                },
                "podman system prune",
            ),
            (
                SetupError::NoBase {
                    why: "debian:12 cannot be pulled".into(),
                    commands: vec!["sudo debootstrap --variant=minbase bookworm DIR".into()],
                },
                "sudo debootstrap",
            ),
            (
                SetupError::Build {
                    command: "podman build -f containers/Containerfile".into(),
                    log: "/c/build.log".into(),
                    tail: "E: Unable to locate package gcc-nonsense".into(),
                },
                "podman build -f containers/Containerfile",
            ),
            (
                SetupError::Pin {
                    want: "1.85".into(),
                    got: "rustc 1.96.0 (x)".into(),
                },
                "LOCKMATRIX_IMAGE_RUST=1.96 ",
            ),
        ];
        for (e, fix) in cases {
            assert!(e.to_string().contains(fix), "{e} lacks {fix}");
        }
    }

    #[test]
    fn too_little_space_is_refused_and_enough_is_not() {
        let tmp = std::env::temp_dir();
        let free = free_gib(&tmp).expect("statvfs of the temporary directory");
        assert!(check_space(&tmp, free / 2.0, "the image").is_ok());
        match check_space(&tmp, free * 2.0 + 1.0, "the image") {
            Err(SetupError::NoSpace { free_gib, .. }) => {
                assert!((free_gib - free).abs() < free * 0.1 + 0.5)
            }
            other => panic!("{other:?}"),
        }
    }
}
