//! One cache line's coherence state, and what an access to it costs.
//!
//! A directory view: at most one core holds the line Modified, Owned or
//! Exclusive (the owner), any number hold it Shared. An access that the
//! requester's own copy serves is a hit; any other is a coherence miss (a
//! remote memory reference, RMR), priced by the machine's table from the
//! state the line was found in and the distance to the cache that
//! supplies it: the nearest holder for a load, the farthest copy to
//! invalidate for a write (every invalidation must be acknowledged).
//! Capacity and conflict misses are not modelled: a line, once fetched,
//! stays until another core's write takes it.

use crate::machine::{Found, Machine, Protocol};

/// What an access asks of the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Load,
    Store,
    /// A locked read-modify-write: the line exclusive in one transaction.
    Rmw,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Held {
    Modified,
    Owned,
    Exclusive,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// The core holding it M, O or E.
    pub owner: Option<(usize, Held)>,
    /// Cores holding it Shared (the owner not among them).
    pub sharers: u64,
    /// The node whose memory holds it: the first toucher's (first touch).
    pub home: u32,
}

/// What an access cost and did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Priced {
    pub cycles: u32,
    /// A coherence miss: the line came from another cache or memory.
    pub miss: bool,
    /// Cores whose copies this access invalidated.
    pub invalidated: u64,
    /// The state it was found in elsewhere, and the distance class that
    /// priced it (for a hit: `None`).
    pub found: Option<(Found, usize)>,
}

impl Line {
    pub fn new(home: u32) -> Line {
        Line {
            owner: None,
            sharers: 0,
            home,
        }
    }

    /// Whether `cpu`'s cache holds a valid copy.
    pub fn valid_in(&self, cpu: usize) -> bool {
        self.owner.is_some_and(|(o, _)| o == cpu) || self.sharers & (1 << cpu) != 0
    }

    /// Prices an access of `kind` by `cpu` (on node `nodes[cpu]`) and moves
    /// the line to its new state.
    pub fn access(&mut self, m: &Machine, nodes: &[u32], cpu: usize, kind: Kind) -> Priced {
        let me = 1u64 << cpu;
        let c = &m.costs;
        let dist = |other: usize| m.distance(nodes[cpu], nodes[other]);
        let hit = |cycles| Priced {
            cycles,
            miss: false,
            invalidated: 0,
            found: None,
        };
        let others = |mask: u64| (0..64).filter(move |i| mask & (1 << i) != 0);
        match kind {
            Kind::Load => {
                if self.valid_in(cpu) {
                    return hit(c.hit_load);
                }
                let (found, d) = match self.owner {
                    Some((o, held)) => {
                        let found = match held {
                            Held::Modified => Found::Modified,
                            Held::Owned => Found::Owned,
                            Held::Exclusive => Found::Exclusive,
                        };
                        // The owner supplies it: MOESI keeps a dirty copy
                        // Owned, MESI writes it back and shares it.
                        self.owner = match (held, m.protocol) {
                            (Held::Exclusive, _) | (Held::Modified, Protocol::Mesi) => {
                                self.sharers |= 1 << o;
                                None
                            }
                            (Held::Modified | Held::Owned, Protocol::Moesi) => {
                                Some((o, Held::Owned))
                            }
                            (Held::Owned, Protocol::Mesi) => unreachable!("no O in MESI"),
                        };
                        (found, dist(o))
                    }
                    None if self.sharers != 0 => (
                        Found::Shared,
                        others(self.sharers).map(dist).min().unwrap_or(0),
                    ),
                    None => (Found::Invalid, m.distance(nodes[cpu], self.home)),
                };
                if found == Found::Invalid {
                    self.owner = Some((cpu, Held::Exclusive));
                } else {
                    self.sharers |= me;
                }
                Priced {
                    cycles: c.load[found as usize][d],
                    miss: true,
                    invalidated: 0,
                    found: Some((found, d)),
                }
            }
            Kind::Store | Kind::Rmw => {
                let table = if kind == Kind::Store {
                    &c.store
                } else {
                    &c.rmw
                };
                let local = if kind == Kind::Store {
                    c.hit_store
                } else {
                    c.hit_rmw
                };
                let copies = self.sharers & !me;
                match self.owner {
                    Some((o, Held::Modified | Held::Exclusive)) if o == cpu && copies == 0 => {
                        self.owner = Some((cpu, Held::Modified));
                        return hit(local);
                    }
                    _ => {}
                }
                let holders = copies | self.owner.map_or(0, |(o, _)| 1 << o) & !me;
                let (found, d) = match self.owner {
                    // Our own Owned copy: the sharers are to invalidate.
                    Some((o, Held::Owned)) if o == cpu => (Found::Owned, 0),
                    Some((o, held)) if o != cpu && copies & !(1 << o) == 0 => {
                        let found = match held {
                            Held::Modified => Found::Modified,
                            Held::Owned => Found::Owned,
                            Held::Exclusive => Found::Exclusive,
                        };
                        (found, dist(o))
                    }
                    _ if holders != 0 => (Found::Shared, 0),
                    _ => (Found::Invalid, m.distance(nodes[cpu], self.home)),
                };
                // Every copy elsewhere is invalidated; the farthest prices it.
                let d = others(holders).map(dist).max().unwrap_or(d);
                self.owner = Some((cpu, Held::Modified));
                self.sharers = 0;
                Priced {
                    cycles: table[found as usize][d],
                    miss: true,
                    invalidated: holders,
                    found: Some((found, d)),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn x86() -> Machine {
        Machine::named("x86").unwrap()
    }

    #[test]
    fn a_line_bounces_between_writers_and_is_shared_by_readers() {
        let m = x86();
        let nodes = vec![0; 4];
        let mut l = Line::new(0);
        // First touch: from memory, then Exclusive.
        let p = l.access(&m, &nodes, 0, Kind::Load);
        assert_eq!((p.cycles, p.miss), (355, true));
        assert_eq!(l.owner, Some((0, Held::Exclusive)));
        // E -> M silently.
        let p = l.access(&m, &nodes, 0, Kind::Store);
        assert_eq!((p.cycles, p.miss), (1, false));
        // Another core reads the modified line: MESI shares it.
        let p = l.access(&m, &nodes, 1, Kind::Load);
        assert_eq!((p.cycles, p.found), (109, Some((Found::Modified, 0))));
        assert_eq!((l.owner, l.sharers), (None, 0b11));
        assert!(!l.access(&m, &nodes, 1, Kind::Load).miss);
        // A third core's RMW invalidates both copies.
        let p = l.access(&m, &nodes, 2, Kind::Rmw);
        assert_eq!((p.cycles, p.invalidated), (113, 0b11));
        assert_eq!(l.owner, Some((2, Held::Modified)));
        assert!(!l.valid_in(0) && !l.valid_in(1));
        // The writer's own RMW is local.
        assert_eq!(l.access(&m, &nodes, 2, Kind::Rmw).cycles, 24);
    }

    #[test]
    fn moesi_keeps_an_owned_copy_and_distance_prices_the_miss() {
        let m = Machine::named("amd").unwrap();
        // Cores 0 and 8 are on nodes 0 and 1 (same package), 16 on node 2.
        let nodes: Vec<u32> = (0..24).map(|c| m.node_of(c, 24)).collect();
        let mut l = Line::new(0);
        l.access(&m, &nodes, 0, Kind::Store);
        let p = l.access(&m, &nodes, 8, Kind::Load);
        assert_eq!((p.cycles, p.found), (161, Some((Found::Modified, 1))));
        assert_eq!(l.owner, Some((0, Held::Owned)));
        // The owner's write invalidates the reader one MCM away.
        let p = l.access(&m, &nodes, 0, Kind::Store);
        assert_eq!((p.cycles, p.found), (255, Some((Found::Owned, 1))));
        // Node 2 is two hops from node 1 in this topology? (node 0 and 2
        // share parity: one hop.)
        let p = l.access(&m, &nodes, 16, Kind::Rmw);
        assert_eq!(p.found, Some((Found::Modified, 2)));
        assert_eq!(p.cycles, 216);
    }
}
