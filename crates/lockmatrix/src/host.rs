//! Facts about the machine a run happened on, recorded with every result.

use serde::{Deserialize, Serialize};
use std::path::Path;
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Host {
    pub cpu_model: String,
    pub cpus: usize,
    pub kernel: String,
    pub os: String,
    /// The checkout's HEAD; `None` (`"unknown"` in run.json) outside git.
    #[serde(with = "crate::commit::or_unknown")]
    pub lockmatrix_commit: Option<crate::commit::CommitId>,
    pub lockmatrix_dirty: bool,
    /// Which machine this is ([`machine`]): two VMs of one CPU model are
    /// two testbeds. `None` in runs from before it was recorded.
    #[serde(default)]
    pub machine: Option<String>,
    /// How the machine is virtualised ([`virtualization`]): `none`, `kvm`,
    /// `kvm, container docker`. `None` where it could not be told, and in
    /// runs from before it was recorded.
    #[serde(default)]
    pub virtualization: Option<String>,
    /// The testbed the operator named in `LOCKMATRIX_TESTBED` ([`declared`]).
    #[serde(default)]
    pub declared_testbed: Option<String>,
    /// The container backend's image this run ran in ([`image`]), whose
    /// `/etc/lockmatrix` records its toolchain; `None` on the host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
}

/// The image the container backend runs this process in: its
/// `LOCKMATRIX_IMAGE`, when it has the form the backend gives it
/// (`localhost/lockmatrix:` and 16 hex digits).
pub fn image() -> Option<String> {
    image_name(&std::env::var(crate::container::invoke::IMAGE_VARIABLE).ok()?)
}

fn image_name(v: &str) -> Option<String> {
    let hex = v.strip_prefix("localhost/lockmatrix:")?;
    (hex.len() == 16 && hex.bytes().all(|b| b.is_ascii_hexdigit())).then(|| v.to_string())
}

/// The variable a dedicated machine's operator sets to name its testbed,
/// when lockmatrix cannot establish it (a container on a self-hosted
/// runner): timings against stored baselines then compare between runs
/// that declare the same name.
pub const TESTBED_VARIABLE: &str = "LOCKMATRIX_TESTBED";

/// `LOCKMATRIX_TESTBED`, checked: a name (it reaches reports), or why not.
pub fn declared() -> Result<Option<String>, HostError> {
    let bad = |why: String| HostError::Testbed(format!("{TESTBED_VARIABLE}: {why}"));
    match std::env::var(TESTBED_VARIABLE) {
        Err(std::env::VarError::NotPresent) => Ok(None),
        Ok(v) if v.is_empty() => Ok(None),
        Ok(v) => crate::name::Name::parse(&v)
            .map(|n| Some(n.to_string()))
            .map_err(|e| bad(e.to_string())),
        Err(e) => Err(bad(e.to_string())),
    }
}

/// What is wrong with what the machine says of itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostError {
    /// `LOCKMATRIX_TESTBED` is not a name.
    Testbed(String),
}

impl std::fmt::Display for HostError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HostError::Testbed(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for HostError {}

/// Why a machine's timings cannot be told from another machine's
/// ([`timing_identity`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoIdentity {
    NoMachineId,
    NoVirtualization,
    Container(String),
}

impl std::fmt::Display for NoIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoIdentity::NoMachineId => f.write_str("no machine id (/etc/machine-id) recorded"),
            NoIdentity::NoVirtualization => {
                f.write_str("its virtualisation was not recorded or could not be told")
            }
            NoIdentity::Container(v) => write!(
                f,
                "it ran in a container ({v}), whose machine id is its image's, not the machine's"
            ),
        }
    }
}

impl std::error::Error for NoIdentity {}

/// Whether timings measured on a machine can be told to come from the
/// same testbed as a stored baseline's, from what it recorded: a declared
/// testbed, or its own machine id on a machine whose virtualisation is
/// known and that is not a container (a container's `/etc/machine-id` is
/// its image's, shared by every container started from it, on any host).
/// The error says why not.
pub fn timing_identity(
    machine: Option<&str>,
    virtualization: Option<&str>,
    declared: Option<&str>,
) -> Result<(), NoIdentity> {
    if declared.is_some() {
        return Ok(());
    }
    match (machine, virtualization) {
        (None, _) => Err(NoIdentity::NoMachineId),
        (_, None) => Err(NoIdentity::NoVirtualization),
        (_, Some(v)) if v.contains("container") => Err(NoIdentity::Container(v.to_string())),
        _ => Ok(()),
    }
}

/// How this machine is virtualised, from what `systemd-detect-virt`
/// prints for `--vm` and `--container` (each `none` or a technology, or
/// `None` where the tool is missing) and, without it, from the evidence
/// a container or a VM leaves: `/.dockerenv`, `/run/.containerenv`, the
/// x86 `hypervisor` CPU flag. The DMI product (world-readable, e.g. a
/// cloud's instance type) is added where there is one.
pub fn describe_virtualization(
    vm: Option<&str>,
    container: Option<&str>,
    evidence: &Evidence,
) -> Option<String> {
    let vm = match vm {
        Some(v) => Some(v.to_string()),
        None if evidence.hypervisor_flag => Some("vm".to_string()),
        None if evidence.x86 => Some("none".to_string()),
        // No tool, and no CPU flag that would tell on this architecture.
        None => None,
    };
    let container = container.map(str::to_string).or_else(|| {
        evidence
            .container_file
            .map(str::to_string)
            .or_else(|| vm.as_ref().map(|_| "none".to_string()))
    });
    let mut out = vm?;
    if let Some(product) = evidence.dmi_product.as_deref().filter(|p| !p.is_empty()) {
        out.push_str(&format!(" ({product})"));
    }
    match container.as_deref() {
        Some("none") => {}
        Some(c) => out.push_str(&format!(", container {c}")),
        None => return None,
    }
    Some(out)
}

/// What the filesystem says when `systemd-detect-virt` is not there.
#[derive(Debug, Default, Clone)]
pub struct Evidence {
    pub x86: bool,
    pub hypervisor_flag: bool,
    /// `docker` for `/.dockerenv`, `podman` for `/run/.containerenv`.
    pub container_file: Option<&'static str>,
    /// `/sys/class/dmi/id/sys_vendor` and `product_name`, joined.
    pub dmi_product: Option<String>,
}

/// This machine's virtualisation ([`describe_virtualization`]).
pub fn virtualization() -> Option<String> {
    let detect = |flag: &str| {
        let out = Command::new("systemd-detect-virt")
            .arg(flag)
            .output()
            .ok()?;
        // Exit 1 with `none` when there is none.
        let v = String::from_utf8_lossy(&out.stdout).trim().to_string();
        (!v.is_empty() && !v.contains(char::is_whitespace)).then_some(v)
    };
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .ok()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
    };
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let dmi: Vec<String> = [
        "/sys/class/dmi/id/sys_vendor",
        "/sys/class/dmi/id/product_name",
    ]
    .iter()
    .filter_map(|p| read(p))
    .collect();
    let evidence = Evidence {
        x86: cfg!(any(target_arch = "x86_64", target_arch = "x86")),
        hypervisor_flag: cpuinfo
            .lines()
            .filter(|l| l.starts_with("flags"))
            .any(|l| l.split_whitespace().any(|f| f == "hypervisor")),
        container_file: if Path::new("/.dockerenv").exists() {
            Some("docker")
        } else if Path::new("/run/.containerenv").exists() {
            Some("podman")
        } else {
            None
        },
        dmi_product: (!dmi.is_empty()).then(|| dmi.join(" ")),
    };
    describe_virtualization(
        detect("--vm").as_deref(),
        detect("--container").as_deref(),
        &evidence,
    )
}

/// A machine's identity from its `/etc/machine-id` (`text`): a hash of it,
/// as systemd asks of anything that shows the id outside the machine. A
/// fresh CI VM has a new one, a self-hosted runner keeps its own.
pub fn machine(text: &str) -> Option<String> {
    let id = text.trim();
    (!id.is_empty()).then(|| {
        crate::file::sha256(format!("lockmatrix machine {id}").as_bytes())[..16].to_string()
    })
}

fn first_line_with(path: &str, key: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()?
        .lines()
        .find(|l| l.starts_with(key))
        .map(|l| {
            l.split_once(['=', ':'])
                .map_or(l, |(_, v)| v)
                .trim()
                .trim_matches('"')
                .to_string()
        })
}

/// Whether the checkout at `root` has uncommitted changes to tracked files.
pub fn dirty(root: &Path) -> bool {
    collect(root).lockmatrix_dirty
}

pub fn collect(root: &Path) -> Host {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(root)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    Host {
        cpu_model: first_line_with("/proc/cpuinfo", "model name")
            .unwrap_or_else(|| "unknown".into()),
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map_or("unknown".into(), |s| s.trim().to_string()),
        os: first_line_with("/etc/os-release", "PRETTY_NAME").unwrap_or_else(|| "unknown".into()),
        lockmatrix_commit: git(&["rev-parse", "--verify", "--quiet", "HEAD"])
            .and_then(|c| crate::commit::CommitId::parse(&c).ok()),
        lockmatrix_dirty: git(&["status", "--porcelain", "--untracked-files=no"])
            .is_some_and(|s| !s.is_empty()),
        machine: std::fs::read_to_string("/etc/machine-id")
            .ok()
            .and_then(|t| machine(&t)),
        virtualization: virtualization(),
        // Checked before any run starts (`declared()` in the matrix command).
        declared_testbed: declared().ok().flatten(),
        image: image(),
    }
}

/// Seconds since the epoch as UTC `YYYY-MM-DDTHH:MM:SSZ`.
pub fn utc(secs: u64) -> String {
    // Civil-from-days (H. Hinnant's algorithm): days since 1970-01-01 to y-m-d.
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

pub fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {

    #[test]
    fn only_the_backends_image_names_are_recorded() {
        let tag = "localhost/lockmatrix:b8ff4f2be5251893";
        assert_eq!(image_name(tag).as_deref(), Some(tag));
        for bad in [
            "",
            "docker.io/library/debian:12",
            "localhost/lockmatrix:b8ff4f2be525189",
            "localhost/lockmatrix:b8ff4f2be525189\u{1b}",
        ] {
            assert_eq!(image_name(bad), None, "{bad:?}");
        }
    }

    use super::*;

    #[test]
    fn a_machine_is_named_by_a_hash_of_its_id_never_the_id() {
        let id = "4f1c2a0b8e9d47c6a5b3d2e1f0a9b8c7\n";
        let m = machine(id).unwrap();
        assert_eq!(m.len(), 16);
        assert!(!id.contains(&m));
        assert_eq!(machine(id), Some(m.clone()));
        assert_ne!(machine("5f1c2a0b8e9d47c6a5b3d2e1f0a9b8c7"), Some(m));
        assert_eq!(machine(" \n"), None);
    }

    #[test]
    fn virtualisation_from_the_tool_or_the_evidence() {
        let none = Evidence::default();
        let x86 = Evidence {
            x86: true,
            ..Evidence::default()
        };
        // The tool's words win; `none` for a container is no container.
        assert_eq!(
            describe_virtualization(Some("kvm"), Some("docker"), &none).as_deref(),
            Some("kvm, container docker")
        );
        assert_eq!(
            describe_virtualization(Some("none"), Some("none"), &none).as_deref(),
            Some("none")
        );
        // Without the tool: the CPU flag on x86, the container's file.
        let vm_in_docker = Evidence {
            x86: true,
            hypervisor_flag: true,
            container_file: Some("docker"),
            dmi_product: Some("QEMU Standard PC".into()),
        };
        assert_eq!(
            describe_virtualization(None, None, &vm_in_docker).as_deref(),
            Some("vm (QEMU Standard PC), container docker")
        );
        assert_eq!(
            describe_virtualization(None, None, &x86).as_deref(),
            Some("none")
        );
        // Elsewhere, nothing to tell a VM by: not known, never `none`.
        assert_eq!(describe_virtualization(None, None, &none), None);
    }

    #[test]
    fn timings_have_an_identity_only_on_a_known_machine_or_a_declared_testbed() {
        let m = Some("0123456789abcdef");
        assert_eq!(timing_identity(m, Some("kvm"), None), Ok(()));
        assert_eq!(timing_identity(m, Some("none"), None), Ok(()));
        let container = timing_identity(m, Some("kvm, container docker"), None)
            .unwrap_err()
            .to_string();
        assert!(container.contains("container"), "{container}");
        assert!(timing_identity(None, Some("none"), None)
            .unwrap_err()
            .to_string()
            .contains("machine id"));
        assert!(timing_identity(m, None, None)
            .unwrap_err()
            .to_string()
            .contains("virtualisation"));
        // An operator's word for a dedicated machine settles it.
        assert_eq!(
            timing_identity(None, Some("kvm, container docker"), Some("rack-3")),
            Ok(())
        );
    }

    #[test]
    fn formats_utc_dates() {
        assert_eq!(utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc(1_796_000_000), "2026-11-30T00:53:20Z");
    }

    #[test]
    fn reads_this_machine() {
        let h = collect(Path::new(env!("CARGO_MANIFEST_DIR")));
        assert!(h.cpus >= 1);
        assert_ne!(h.kernel, "unknown");
    }
}
