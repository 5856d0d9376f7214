//! The machines the model prices accesses on: a topology (nodes of cores,
//! and the distance class between two cores), a coherence protocol, a
//! line size, and a cost table whose every number has a published source
//! or is marked as an assumption (`docs/contention-model.md` lists them).
//!
//! Costs are in core cycles. Coherence costs are indexed by the state the
//! requester finds the line in, elsewhere (M, O, E, S; I: in no cache)
//! and by the distance class from the requester to the cache that holds
//! it (or, for I, to the line's home node).

/// MESI, or MOESI (a load of a modified line leaves the writer an Owned
/// copy instead of writing it back).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    Mesi,
    Moesi,
}

/// How read-modify-writes are done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rmw {
    /// One locked instruction: a single coherence transaction that takes
    /// the line exclusive (x86 `lock`, arm64 LSE).
    Locked,
    /// Load-linked and store-conditional: a read, then an upgrade that
    /// fails (and the RMW retries) if another core wrote the line between.
    LlSc,
}

/// Where vCPU `i` of `n` runs: the first node filled first, or round
/// robin over the nodes (seed 001's "2 nodes" rows).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    Fill,
    Spread,
}

/// The line states a requester may find a line in, elsewhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    Modified = 0,
    Owned = 1,
    Exclusive = 2,
    Shared = 3,
    /// In no cache: from memory at the line's home node.
    Invalid = 4,
}

/// A cost per found state (M, O, E, S, I) and distance class.
pub type Table = [[u32; MAX_DISTANCES]; 5];

pub const MAX_DISTANCES: usize = 4;

#[derive(Debug, Clone, PartialEq)]
pub struct Costs {
    pub load: Table,
    pub store: Table,
    /// CAS, fetch-add, swap (the SOSP'13 table has one row for them all
    /// on x86 and AMD, within a few cycles).
    pub rmw: Table,
    /// A load, store or locked RMW on a line this core holds (M or E for
    /// writes, any valid state for loads).
    pub hit_load: u32,
    pub hit_store: u32,
    pub hit_rmw: u32,
    /// The spin-wait hint (`pause`, `yield`/`isb`).
    pub pause: u32,
    /// `sched_yield()` with nothing else to run on the CPU.
    pub yield_syscall: u32,
    /// A `FUTEX_WAIT` that sleeps, or a `FUTEX_WAKE`: the system call.
    pub futex_syscall: u32,
    /// From a `FUTEX_WAKE` to the woken thread running again.
    pub futex_wakeup: u32,
    /// Reading the clock (`Instant::now`).
    pub clock_read: u32,
}

#[derive(Debug, Clone)]
pub struct Machine {
    /// Its name on the command line and in the records.
    pub name: &'static str,
    /// What it stands for, and where its numbers come from (one line).
    pub about: &'static str,
    /// The architecture it stands for, as Rust's `target_arch` names it:
    /// a lock that takes a constant by architecture (qspinlock's
    /// `PENDING_LOOPS`) takes this one's under the model ([`crate::target_arch`]),
    /// not the host's it was built for.
    pub arch: &'static str,
    pub nodes: u32,
    pub cores_per_node: u32,
    /// Names of the distance classes, nearest first.
    pub distances: &'static [&'static str],
    /// The distance class between two different nodes.
    pub node_distance: fn(u32, u32) -> usize,
    pub protocol: Protocol,
    pub rmw: Rmw,
    pub line_bytes: u64,
    /// Core cycles per nanosecond, for `Instant`.
    pub ghz: f64,
    pub placement: Placement,
    pub costs: Costs,
}

impl Machine {
    pub fn cores(&self) -> u32 {
        self.nodes * self.cores_per_node
    }

    /// The node vCPU `cpu` of `n` runs on.
    pub fn node_of(&self, cpu: usize, n: usize) -> u32 {
        let cpu = cpu as u32;
        match self.placement {
            Placement::Fill => cpu / self.cores_per_node,
            Placement::Spread => {
                let nodes = self.nodes.min(n.max(1) as u32);
                cpu % nodes
            }
        }
    }

    /// The distance class between two nodes (0: the same node).
    pub fn distance(&self, a: u32, b: u32) -> usize {
        if a == b {
            0
        } else {
            (self.node_distance)(a, b)
        }
    }

    /// The machine named `name`, or `None`.
    pub fn named(name: &str) -> Option<Machine> {
        all().into_iter().find(|m| m.name == name)
    }

    /// This machine with its vCPUs spread round robin over its nodes.
    pub fn spread(mut self) -> Machine {
        self.placement = Placement::Spread;
        self
    }

    /// This machine with `bytes`-byte lines.
    pub fn with_line_bytes(mut self, bytes: u64) -> Machine {
        self.line_bytes = bytes;
        self
    }
}

fn one_node(_: u32, _: u32) -> usize {
    0
}

/// Two sockets: always one hop.
fn xeon_two_sockets(_: u32, _: u32) -> usize {
    1
}

/// AMD Opteron Magny-Cours/Interlagos: 4 packages of 2 dies (nodes 2p and
/// 2p+1 share package p, SOSP'13's "same MCM"); between packages one or
/// two HyperTransport hops. Which pairs are one hop apart is this model's
/// assumption (the paper's machine: at most two hops): dies of the same
/// parity are directly linked.
fn opteron_8_nodes(a: u32, b: u32) -> usize {
    if a / 2 == b / 2 {
        1
    } else if (a ^ b) & 1 == 0 {
        2
    } else {
        3
    }
}

// SOSP'13 Table 2 (David, Guerraoui, Trigonakis, "Everything you always
// wanted to know about synchronization but were afraid to ask"),
// Xeon E7-8867L (Westmere-EX) columns: same die, one hop, two hops.
const XEON_LOAD: Table = [
    [109, 289, 400, 0],
    [109, 289, 400, 0], // no O state on Intel: as M
    [92, 273, 383, 0],
    [44, 223, 334, 0],
    [355, 492, 601, 0],
];
const XEON_STORE: Table = [
    [115, 320, 431, 0],
    [115, 320, 431, 0],
    [115, 315, 425, 0],
    [116, 318, 428, 0],
    [355, 492, 601, 0], // not in the table: as a load from memory
];
const XEON_RMW: Table = [
    [120, 324, 430, 0],
    [120, 324, 430, 0],
    [120, 324, 430, 0], // the table's "Modified" row for M and E
    [113, 312, 423, 0],
    [355, 492, 601, 0],
];

fn xeon_costs() -> Costs {
    Costs {
        load: XEON_LOAD,
        store: XEON_STORE,
        rmw: XEON_RMW,
        // Intel optimization manual (Nehalem/Westmere): 4-cycle L1 hit.
        hit_load: 4,
        // A store retires into the store buffer (not modelled).
        hit_store: 1,
        // Seed 000: a local `lock cmpxchg` on a Xeon E5405, 24 cycles.
        hit_rmw: 24,
        // Intel optimization manual: PAUSE takes about 10 cycles before
        // Skylake (as many as 140 from Skylake on).
        pause: 10,
        // Assumptions (no published figure for these CPUs): a system call
        // round trip, a futex wake to the sleeper running, a vDSO clock.
        yield_syscall: 1_000,
        futex_syscall: 2_000,
        futex_wakeup: 10_000,
        clock_read: 25,
    }
}

// SOSP'13 Table 2, Opteron 6172 (Magny-Cours) columns: same die, same
// MCM, one hop, two hops.
const OPTERON_LOAD: Table = [
    [81, 161, 172, 252],
    [83, 163, 175, 254],
    [83, 163, 175, 253],
    [83, 164, 176, 254],
    [136, 237, 247, 327],
];
const OPTERON_STORE: Table = [
    [83, 172, 191, 273],
    [244, 255, 286, 291],
    [83, 171, 191, 271],
    [246, 255, 286, 296],
    [136, 237, 247, 327], // not in the table: as a load from memory
];
const OPTERON_RMW: Table = [
    [110, 197, 216, 296],
    [272, 283, 312, 332], // O: others hold copies, as the "Shared" row
    [110, 197, 216, 296],
    [272, 283, 312, 332],
    [136, 237, 247, 327],
];

/// Westmere-EP (2 sockets, Xeon X5650 at 2.67 GHz): SOSP'13's same-die
/// Xeon costs, and across the sockets the median cross-socket CAS latency
/// (round trip / 2) of the dual X5650 matrix published with
/// nviennot/core-to-core-latency, 73.7 ns = 197 cycles, for every
/// transfer (its same-socket median, 37.2 ns = 99 cycles, is within 10%
/// of SOSP'13's 92-120); memory one hop away is SOSP'13's.
fn wsm_ep_costs() -> Costs {
    const HOP: u32 = 197;
    let mut c = xeon_costs();
    for table in [&mut c.load, &mut c.store, &mut c.rmw] {
        for row in table.iter_mut().take(4) {
            row[1] = HOP;
        }
        row_clear(table);
    }
    c
}

/// Only the distance classes a two-socket machine has.
fn row_clear(table: &mut Table) {
    for row in table.iter_mut() {
        row[2] = 0;
        row[3] = 0;
    }
}

fn opteron_costs() -> Costs {
    Costs {
        load: OPTERON_LOAD,
        store: OPTERON_STORE,
        rmw: OPTERON_RMW,
        // AMD Family 10h optimization guide: 3-cycle L1 hit.
        hit_load: 3,
        hit_store: 1,
        // Seed 000: a local `lock cmpxchg` on an Athlon 64 X2, 17 cycles.
        hit_rmw: 17,
        // Assumption: as Intel's pre-Skylake PAUSE.
        pause: 10,
        yield_syscall: 1_000,
        futex_syscall: 2_000,
        futex_wakeup: 10_000,
        clock_read: 25,
    }
}

/// AWS Graviton2 (64 Neoverse N1 cores, one die, 2.5 GHz): the median
/// core-to-core CAS latency (round trip / 2) of the Graviton2 matrix
/// published with nviennot/core-to-core-latency, 47.2 ns = 118 cycles,
/// for every transfer between cores; the Neoverse N1 software
/// optimization guide's 4-cycle L1 hit.
const N1_TRANSFER: u32 = 118;
/// Assumption: memory about twice a core-to-core transfer.
const N1_MEMORY: u32 = 2 * N1_TRANSFER;

fn n1_table() -> Table {
    let t = [N1_TRANSFER, 0, 0, 0];
    [t, t, t, t, [N1_MEMORY, 0, 0, 0]]
}

fn n1_costs() -> Costs {
    Costs {
        load: n1_table(),
        store: n1_table(),
        rmw: n1_table(),
        hit_load: 4,
        hit_store: 1,
        // Assumption: an L1-hit atomic as a load and a store in order.
        hit_rmw: 8,
        // Assumption: Rust's aarch64 spin hint (`isb`) drains the
        // pipeline, some tens of cycles.
        pause: 30,
        yield_syscall: 1_000,
        futex_syscall: 2_000,
        futex_wakeup: 10_000,
        clock_read: 25,
    }
}

/// Every machine, the default first.
pub fn all() -> Vec<Machine> {
    vec![
        Machine {
            name: "x86",
            arch: "x86_64",
            about: "generic x86, one socket of 64 cores: Westmere same-die costs (SOSP'13 Table 2, Xeon)",
            nodes: 1,
            cores_per_node: 64,
            distances: &["same die"],
            node_distance: one_node,
            protocol: Protocol::Mesi,
            rmw: Rmw::Locked,
            line_bytes: 64,
            ghz: 2.13,
            placement: Placement::Fill,
            costs: xeon_costs(),
        },
        Machine {
            name: "wsm-ep",
            arch: "x86_64",
            about: "Intel Westmere-EP class, 2 sockets of 32 cores: SOSP'13 same-die Xeon costs, X5650 cross-socket latency",
            nodes: 2,
            cores_per_node: 32,
            distances: &["same die", "one hop"],
            node_distance: xeon_two_sockets,
            protocol: Protocol::Mesi,
            rmw: Rmw::Locked,
            line_bytes: 64,
            ghz: 2.67,
            placement: Placement::Fill,
            costs: wsm_ep_costs(),
        },
        Machine {
            name: "amd",
            arch: "x86_64",
            about: "AMD Opteron Interlagos class, 8 nodes of 8 cores: Magny-Cours costs (SOSP'13 Table 2, Opteron), MOESI",
            nodes: 8,
            cores_per_node: 8,
            distances: &["same die", "same MCM", "one hop", "two hops"],
            node_distance: opteron_8_nodes,
            protocol: Protocol::Moesi,
            rmw: Rmw::Locked,
            line_bytes: 64,
            ghz: 2.1,
            placement: Placement::Fill,
            costs: opteron_costs(),
        },
        Machine {
            name: "arm64-lse",
            arch: "aarch64",
            about: "arm64 with LSE atomics, 64 Neoverse N1 cores (Graviton2 core-to-core latency), MOESI",
            nodes: 1,
            cores_per_node: 64,
            distances: &["same die"],
            node_distance: one_node,
            protocol: Protocol::Moesi,
            rmw: Rmw::Locked,
            line_bytes: 64,
            ghz: 2.5,
            placement: Placement::Fill,
            costs: n1_costs(),
        },
        Machine {
            name: "arm64-llsc",
            arch: "aarch64",
            about: "arm64 with LL/SC (ldaxr/stlxr) atomics, 64 Neoverse N1 cores (Graviton2 core-to-core latency), MOESI",
            nodes: 1,
            cores_per_node: 64,
            distances: &["same die"],
            node_distance: one_node,
            protocol: Protocol::Moesi,
            rmw: Rmw::LlSc,
            line_bytes: 64,
            ghz: 2.5,
            placement: Placement::Fill,
            costs: n1_costs(),
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_machine_has_64_cores_and_a_cost_for_each_distance() {
        for m in all() {
            assert_eq!(m.cores(), 64, "{}", m.name);
            assert!(m.distances.len() <= MAX_DISTANCES);
            for a in 0..m.nodes {
                for b in 0..m.nodes {
                    let d = m.distance(a, b);
                    assert!(d < m.distances.len(), "{}: {a}-{b}", m.name);
                    assert_eq!(d == 0, a == b);
                    for table in [&m.costs.load, &m.costs.store, &m.costs.rmw] {
                        for row in table {
                            assert!(row[d] > 0, "{}: no cost at distance {d}", m.name);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn placement_fills_or_spreads() {
        let amd = Machine::named("amd").unwrap();
        assert_eq!((amd.node_of(7, 16), amd.node_of(8, 16)), (0, 1));
        let amd = amd.spread();
        assert_eq!(
            (amd.node_of(0, 2), amd.node_of(1, 2), amd.node_of(2, 2)),
            (0, 1, 0)
        );
        assert_eq!(amd.node_of(9, 16), 1);
    }
}
