//! spin 0.5's `RwLock<()>` as a `lock_api::RawRwLock`: each lock takes a
//! guard and forgets it, each unlock is spin's own `force_*` unlock, which
//! does what dropping the guard does.
#![no_std]

pub struct RawSpinRwLock(spin::RwLock<()>);

unsafe impl lock_api::RawRwLock for RawSpinRwLock {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: RawSpinRwLock = RawSpinRwLock(spin::RwLock::new(()));
    type GuardMarker = lock_api::GuardSend;

    fn lock_shared(&self) {
        core::mem::forget(self.0.read());
    }

    fn try_lock_shared(&self) -> bool {
        self.0.try_read().map(core::mem::forget).is_some()
    }

    unsafe fn unlock_shared(&self) {
        self.0.force_read_decrement();
    }

    fn lock_exclusive(&self) {
        core::mem::forget(self.0.write());
    }

    fn try_lock_exclusive(&self) -> bool {
        self.0.try_write().map(core::mem::forget).is_some()
    }

    unsafe fn unlock_exclusive(&self) {
        self.0.force_write_unlock();
    }
}
