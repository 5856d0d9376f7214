//! The reader-writer locks' lock events (`harness::events`), as Linux's
//! `CONFIG_LOCK_EVENT_COUNTS` counts them for its rwsem
//! (`kernel/locking/lock_events_list.h`): a lock counts its own on its
//! slow paths only, in the counters of the thread that took the path; the
//! round sums them over its threads and the suite prints each as a rate per
//! acquisition of its side ([`Event::metric`]).
//!
//! Slow-path entries are not among them: the locks have counted those
//! themselves since before there were events (`RawRwLock::slowpaths`).

use harness::events::{Counters, Counts};

/// An event a lock counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A reader in its slow path took the lock without queueing, ahead of
    /// whoever waits (Linux's `rwsem_rlock_steal`).
    ReaderSteal,
    /// A reader went to sleep (`FUTEX_WAIT`) waiting for the lock (Linux's
    /// `rwsem_sleep_reader`, once per `schedule()`).
    ReaderSleep,
    /// A writer went to sleep (Linux's `rwsem_sleep_writer`).
    WriterSleep,
    /// A waker found the reader at the head of the queue waiting too long
    /// and set the hand-off bit for it (Linux's `rwsem_rlock_handoff`).
    ReaderHandoff,
    /// The writer at the head of the queue, waiting too long, set the
    /// hand-off bit (Linux's `rwsem_wlock_handoff`).
    WriterHandoff,
}

const N: usize = 5;

/// Counts of every event: one thread's, or a round's.
pub type Events = Counts<N>;

/// The side of the lock an event is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Reader,
    Writer,
}

impl Event {
    pub fn side(self) -> Side {
        match self {
            Event::ReaderSteal | Event::ReaderSleep | Event::ReaderHandoff => Side::Reader,
            Event::WriterSleep | Event::WriterHandoff => Side::Writer,
        }
    }

    /// The sample's metric: this event per acquisition of its side.
    pub fn metric(self) -> &'static str {
        match self {
            Event::ReaderSteal => "reader_steals_per_acquire",
            Event::ReaderSleep => "reader_sleeps_per_acquire",
            Event::WriterSleep => "writer_sleeps_per_acquire",
            Event::ReaderHandoff => "reader_handoffs_per_acquire",
            Event::WriterHandoff => "writer_handoffs_per_acquire",
        }
    }

    /// Sleeps and hand-offs are costs (a futex round trip; a waiter that
    /// waited past the hand-off timeout), so fewer is better. A steal is
    /// how a reader in the slow path gets the lock without queueing and
    /// sleeping: at a given rate of slow paths, fewer steals mean more
    /// sleeping readers, and a rwsem that stops stealing is the change to
    /// see (what it costs the writers queued meanwhile shows in their
    /// sleeps and hand-offs).
    pub fn lower_is_better(self) -> bool {
        self != Event::ReaderSteal
    }

    /// This event's count in `e`.
    pub fn of(self, e: &Events) -> u64 {
        e[self as usize]
    }
}

std::thread_local! {
    static COUNTERS: Counters<N> = const { Counters::new() };
}

/// Counts one `event` on this thread.
#[inline(always)]
pub fn count(event: Event) {
    COUNTERS.with(|c| c.add(event as usize, 1));
}

/// This thread's counts so far.
pub fn counts() -> Events {
    COUNTERS.with(Counters::get)
}

/// The `counted` events (a lock's `RawRwLock::EVENTS`), each with its
/// value per acquisition of its side (`reader_ops` and `writer_ops`
/// acquisitions); an event of a side that did not run is left out.
pub fn rates(
    counted: &[Event],
    events: &Events,
    reader_ops: u64,
    writer_ops: u64,
) -> Vec<(Event, f64)> {
    counted
        .iter()
        .filter_map(|&e| {
            let ops = match e.side() {
                Side::Reader => reader_ops,
                Side::Writer => writer_ops,
            };
            (ops > 0).then(|| (e, e.of(events) as f64 / ops as f64))
        })
        .collect()
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    const ALL: [Event; N] = [
        Event::ReaderSteal,
        Event::ReaderSleep,
        Event::WriterSleep,
        Event::ReaderHandoff,
        Event::WriterHandoff,
    ];

    #[test]
    fn every_event_has_its_counter_and_a_metric_of_its_own_side() {
        for (i, e) in ALL.iter().enumerate() {
            assert_eq!(*e as usize, i);
            let side = match e.side() {
                Side::Reader => "reader_",
                Side::Writer => "writer_",
            };
            assert!(e.metric().starts_with(side) && e.metric().ends_with("_per_acquire"));
        }
    }

    #[test]
    fn counts_are_this_threads() {
        let before = counts();
        count(Event::ReaderSleep);
        count(Event::ReaderSleep);
        assert_eq!(Event::ReaderSleep.of(&counts().since(before)), 2);
        assert!(std::thread::spawn(counts).join().unwrap().is_zero());
    }
}
