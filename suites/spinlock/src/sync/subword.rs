//! Byte and halfword views of a 32-bit atomic word, for loom, which has no
//! mixed-size atomics: qspinlock's `locked`, `pending`, `locked_pending`
//! and `tail` views of its word (see its module doc).
//!
//! Each access is an access of the whole word: a load reads the word and
//! masks, a store or swap is a read-modify-write that replaces the view's
//! bits and leaves the others as they are (a `fetch_and` to store 0, else a
//! compare-exchange loop), the way Linux's qspinlock does it when
//! `_Q_PENDING_BITS != 8`. That is a stronger program than the sub-word
//! accesses the matrix runs: an RMW reads the latest value of the word and
//! continues release sequences, where a byte store does neither, and the
//! assumption the real code rests on (a sub-word access is single-copy
//! atomic against whole-word RMWs) is not checked at all.

use loom::sync::atomic::{AtomicU32, Ordering};
use std::marker::PhantomData;

/// The bytes of a `T` (`u8` or `u16`) at a byte offset of an `AtomicU32`.
pub struct SubWord<'a, T> {
    word: &'a AtomicU32,
    /// Where the view's bits are in the word's value.
    shift: u32,
    mask: u32,
    _t: PhantomData<T>,
}

pub type AtomicU8<'a> = SubWord<'a, u8>;
pub type AtomicU16<'a> = SubWord<'a, u16>;

impl<'a, T: Copy + Into<u32> + TryFrom<u32>> SubWord<'a, T> {
    /// The view of the `size_of::<T>()` bytes at byte `offset` of `word` in
    /// memory, in the target's byte order (as `AtomicU8::from_ptr` on the
    /// word's address plus `offset` would see them).
    pub fn new(word: &'a AtomicU32, offset: usize) -> SubWord<'a, T> {
        let bytes = std::mem::size_of::<T>();
        assert!(bytes < 4 && offset % bytes == 0 && offset + bytes <= 4);
        let low_byte = if cfg!(target_endian = "big") {
            4 - offset - bytes
        } else {
            offset
        };
        let shift = 8 * low_byte as u32;
        SubWord {
            word,
            shift,
            mask: ((1u32 << (8 * bytes)) - 1) << shift,
            _t: PhantomData,
        }
    }

    fn field(&self, word: u32) -> T {
        match T::try_from((word & self.mask) >> self.shift) {
            Ok(v) => v,
            Err(_) => unreachable!("a masked field fits its type"),
        }
    }

    pub fn load(&self, order: Ordering) -> T {
        self.field(self.word.load(order))
    }

    pub fn store(&self, v: T, order: Ordering) {
        if v.into() == 0 {
            self.word.fetch_and(!self.mask, order);
        } else {
            self.swap(v, order);
        }
    }

    pub fn swap(&self, v: T, order: Ordering) -> T {
        let bits = v.into() << self.shift;
        // Relaxed: only the first guess; the compare-exchange re-reads.
        let mut old = self.word.load(Ordering::Relaxed);
        loop {
            let new = (old & !self.mask) | bits;
            match self
                .word
                .compare_exchange(old, new, order, Ordering::Relaxed)
            {
                Ok(_) => return self.field(old),
                Err(now) => old = now,
            }
        }
    }
}
