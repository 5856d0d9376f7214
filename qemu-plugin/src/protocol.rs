//! What the plugin understands, free of QEMU so that it can be unit tested:
//! the region markers the guest issues (see `suites/harness/src/marker.rs`,
//! whose constants must equal these), the plugin's arguments, the open
//! regions of each vCPU, and the JSON lines it writes.

use crate::executed::Histogram;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The system call number of a marker. It must reach QEMU's `do_syscall`
/// (where plugins see system calls) on every target and be rejected with
/// ENOSYS by every Linux ABI, natively and under qemu-user:
///
/// - qemu-mips (o32) looks the number up in its o32 table before calling
///   `do_syscall`, and answers ENOSYS itself, unseen by plugins, for a
///   number beyond the table or in one of its holes. 4221 is the o32 slot
///   `reserved221`: in the table, `sys_ni_syscall` in the kernel (ENOSYS),
///   never to be reused, unimplemented in qemu, which returns -ENOSYS
///   without a message (it logs only under `-d unimp`), and it takes no
///   stack arguments.
/// - Every other ABI numbers its calls below ~470 (mips n64 5000+, n32
///   6000+), and new calls get the same number on all of them, so 4221 is
///   ENOSYS there too. It is below arm's private range (0x0f0000 and up,
///   where unknown numbers raise SIGILL), is not powerpc's 0x1ebe endian
///   switch, and has no x32 bit (0x40000000).
pub const SYSCALL: i64 = 4221;

/// First argument of a marker: "LMKR". Only the low 32 bits are compared,
/// since 32-bit guests pass 32-bit registers (sign-extended by QEMU).
pub const MAGIC: u32 = 0x4c4d_4b52;

/// Second argument: the region id. Third: the phase. These, `SYSCALL` and
/// `MAGIC` are also `suites/harness/src/marker.rs`'s; a test compares them.
pub const PHASE_BEGIN: u32 = 0;
pub const PHASE_END: u32 = 1;
/// Opens a traced region: besides its count, the plugin keeps what it
/// executed, instruction by instruction (`crate::executed`), and its reply
/// carries that histogram after the count.
pub const PHASE_BEGIN_TRACED: u32 = 2;

/// A decoded marker. The fourth argument of an `end` marker is a file
/// descriptor of the guest (qemu-user does not renumber descriptors, so it
/// is the same number in QEMU's process) to which the plugin writes the
/// region's count as 8 little-endian bytes (and, for a traced region, the
/// histogram: `crate::executed::reply`), or -1 for none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marker {
    Begin { region: u32, traced: bool },
    End { region: u32, reply_fd: Option<i32> },
}

/// The marker a system call is, if it is one.
pub fn decode(num: i64, a1: u64, a2: u64, a3: u64, a4: u64) -> Option<Marker> {
    if num != SYSCALL || a1 as u32 != MAGIC {
        return None;
    }
    let region = a2 as u32;
    match a3 as u32 {
        PHASE_BEGIN => Some(Marker::Begin {
            region,
            traced: false,
        }),
        PHASE_BEGIN_TRACED => Some(Marker::Begin {
            region,
            traced: true,
        }),
        PHASE_END => {
            let fd = a4 as u32 as i32;
            Some(Marker::End {
                region,
                reply_fd: (fd >= 0).then_some(fd),
            })
        }
        _ => None,
    }
}

/// The plugin's arguments: `-plugin libinsns_plugin.so,out=PATH`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Config {
    /// Where every closed region is written as a JSON line, as it closes.
    pub out: Option<PathBuf>,
}

impl Config {
    /// Parses QEMU's `key=value` plugin arguments (QEMU has already
    /// stripped a legacy `arg=` prefix).
    pub fn parse<S: AsRef<str>>(raw: &[S]) -> Result<Config, String> {
        let mut config = Config::default();
        for arg in raw {
            let arg = arg.as_ref();
            match arg.split_once('=') {
                Some(("out", path)) if !path.is_empty() => config.out = Some(path.into()),
                _ => {
                    return Err(format!(
                        "unknown argument `{arg}`; expected `out=PATH` (JSON lines, one per region)"
                    ))
                }
            }
        }
        Ok(config)
    }
}

/// What happened at a marker, for the output file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A region closed after `insns` guest instructions of its vCPU (and,
    /// traced, what they were).
    Closed {
        region: u32,
        vcpu: u32,
        insns: u64,
        executed: Option<Histogram>,
    },
    /// A marker that does not pair up; the region has no count.
    Error {
        region: u32,
        vcpu: u32,
        error: &'static str,
    },
}

impl Event {
    /// The JSON line (without newline), e.g. `{"region":3,"vcpu":0,"insns":123456}`,
    /// with `"executed":{TEXT:N,...},"entered":{SYMBOL:N,...}` after the
    /// count for a traced region.
    pub fn json(&self) -> String {
        match self {
            Event::Closed {
                region,
                vcpu,
                insns,
                executed: None,
            } => format!(r#"{{"region":{region},"vcpu":{vcpu},"insns":{insns}}}"#),
            Event::Closed {
                region,
                vcpu,
                insns,
                executed: Some(h),
            } => format!(
                r#"{{"region":{region},"vcpu":{vcpu},"insns":{insns},{}}}"#,
                h.json_fields()
            ),
            Event::Error {
                region,
                vcpu,
                error,
            } => format!(r#"{{"region":{region},"vcpu":{vcpu},"error":"{error}"}}"#),
        }
    }
}

/// The open regions, per vCPU and region id, with the vCPU's instruction
/// count when each opened and what the caller keeps with it (`T`: for the
/// plugin, how to trace it). A region is counted on the vCPU (guest thread)
/// that opened it only: other threads' instructions never enter it.
#[derive(Debug)]
pub struct Regions<T> {
    open: BTreeMap<(u32, u32), (u64, T)>,
}

impl<T> Default for Regions<T> {
    fn default() -> Regions<T> {
        Regions::new()
    }
}

impl<T> Regions<T> {
    pub const fn new() -> Regions<T> {
        Regions {
            open: BTreeMap::new(),
        }
    }

    /// Opens a region; when it was open already, returns the error and
    /// what the earlier opening kept.
    pub fn begin(&mut self, vcpu: u32, region: u32, now: u64, keep: T) -> Option<(Event, T)> {
        self.open
            .insert((vcpu, region), (now, keep))
            .map(|(_, old)| {
                let error = Event::Error {
                    region,
                    vcpu,
                    error: "begin of a region already open (count restarted)",
                };
                (error, old)
            })
    }

    /// Closes a region: its instruction count and what its opening kept,
    /// or the error when it was not open on this vCPU.
    pub fn end(&mut self, vcpu: u32, region: u32, now: u64) -> Result<(u64, T), Event> {
        match self.open.remove(&(vcpu, region)) {
            Some((start, keep)) => Ok((now - start, keep)),
            None => Err(Event::Error {
                region,
                vcpu,
                error: "end of a region not open on this thread",
            }),
        }
    }

    /// Regions still open when the guest exits, by thread and region.
    pub fn unclosed(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.open)
            .into_keys()
            .map(|(vcpu, region)| Event::Error {
                region,
                vcpu,
                error: "region never ended",
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    // The harness's constants are `c_long`: i64 here, i32 on 32-bit hosts.
    #[allow(clippy::unnecessary_cast)]
    fn marker_constants_match_the_harness() {
        // One protocol, two sides: the guest's markers and this decoder.
        assert_eq!(SYSCALL, harness::marker::SYSCALL as i64);
        assert_eq!(MAGIC as i64, harness::marker::MAGIC as i64);
        assert_eq!(PHASE_BEGIN as i64, harness::marker::PHASE_BEGIN as i64);
        assert_eq!(PHASE_END as i64, harness::marker::PHASE_END as i64);
        assert_eq!(
            PHASE_BEGIN_TRACED as i64,
            harness::marker::PHASE_BEGIN_TRACED as i64
        );
        assert_eq!(crate::executed::NO_PAYLOAD, harness::marker::NO_HISTOGRAM);
    }

    const M: u64 = MAGIC as u64;

    #[test]
    fn decodes_markers_of_64_and_32_bit_guests() {
        assert_eq!(
            decode(SYSCALL, M, 7, 0, u64::MAX),
            Some(Marker::Begin {
                region: 7,
                traced: false
            })
        );
        assert_eq!(
            decode(SYSCALL, M, 7, 2, u64::MAX),
            Some(Marker::Begin {
                region: 7,
                traced: true
            })
        );
        // A 32-bit guest's -1, sign-extended or not.
        for fd in [u64::MAX, 0xffff_ffff] {
            assert_eq!(
                decode(SYSCALL, M, 7, 1, fd),
                Some(Marker::End {
                    region: 7,
                    reply_fd: None
                })
            );
        }
        assert_eq!(
            decode(SYSCALL, M | 0xffff_ffff_0000_0000, 0xffff_ffff, 1, 5),
            Some(Marker::End {
                region: u32::MAX,
                reply_fd: Some(5)
            })
        );
    }

    #[test]
    fn ignores_other_system_calls() {
        assert_eq!(decode(SYSCALL, 0, 7, 0, 0), None);
        assert_eq!(decode(SYSCALL + 1, M, 7, 0, 0), None);
        assert_eq!(decode(SYSCALL, M, 7, 3, 0), None);
        assert_eq!(decode(64, M, 7, 0, 0), None);
    }

    #[test]
    fn parses_arguments() {
        assert_eq!(Config::parse::<&str>(&[]).unwrap(), Config::default());
        assert_eq!(
            Config::parse(&["out=/tmp/a b.jsonl"]).unwrap().out,
            Some(PathBuf::from("/tmp/a b.jsonl"))
        );
        for bad in ["out=", "verbose=on", "out"] {
            let err = Config::parse(&[bad]).unwrap_err();
            assert!(err.contains(bad) && err.contains("out=PATH"), "{err}");
        }
    }

    #[test]
    fn pairs_regions_per_thread() {
        let mut r = Regions::default();
        assert_eq!(r.begin(0, 1, 100, 'a'), None);
        assert_eq!(r.begin(1, 1, 5, 'b'), None);
        assert_eq!(r.end(0, 1, 150), Ok((50, 'a')));
        assert!(matches!(r.end(0, 1, 160), Err(Event::Error { .. })));
        // A second begin restarts the count and hands back the first's.
        assert!(matches!(
            r.begin(1, 1, 7, 'c'),
            Some((Event::Error { .. }, 'b'))
        ));
        assert_eq!(r.begin(0, 2, 170, 'd'), None);
        assert_eq!(
            r.unclosed().iter().map(Event::json).collect::<Vec<_>>(),
            [
                r#"{"region":2,"vcpu":0,"error":"region never ended"}"#,
                r#"{"region":1,"vcpu":1,"error":"region never ended"}"#
            ]
        );
        assert_eq!(
            Event::Closed {
                region: 3,
                vcpu: 0,
                insns: 123456,
                executed: None,
            }
            .json(),
            r#"{"region":3,"vcpu":0,"insns":123456}"#
        );
        let mut h = crate::executed::Histogram::default();
        h.insns.insert("lwsync".into(), 1000);
        assert_eq!(
            Event::Closed {
                region: 3,
                vcpu: 0,
                insns: 123456,
                executed: Some(h),
            }
            .json(),
            r#"{"region":3,"vcpu":0,"insns":123456,"executed":{"lwsync":1000},"entered":{}}"#
        );
    }
}
