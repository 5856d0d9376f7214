//! A test-only suite that misbehaves on purpose, differently per
//! architecture, so the integration tests can show that the matrix reports
//! each failure with its cause and still runs every other target:
//! - aarch64: crashes with SIGSEGV after a first valid record;
//! - powerpc64 (big-endian): hangs until the runner's timeout kills it;
//! - mips (32-bit): prints a line that is not the result protocol;
//! - everything else: a well-formed run with one passing check.
//!
//! It is never part of the default suite list.

use harness::json::{obj, J};
use harness::{Args, Out};

fn main() -> std::process::ExitCode {
    let args = Args::from_env(&["behave"]);
    if args.list {
        println!("behave");
        return std::process::ExitCode::SUCCESS;
    }
    let out = Out::new("faulty");
    out.env(&args, J::Obj(Vec::new()));
    let case = obj([("threads", 1u32.into())]);
    if cfg!(target_arch = "aarch64") {
        // SAFETY: none; this is the point. A volatile write to address 0 is
        // not optimised away and faults on every Linux.
        unsafe { std::ptr::write_volatile(std::ptr::null_mut::<u32>(), 1) };
    } else if cfg!(all(target_arch = "powerpc64", target_endian = "big")) {
        loop {
            std::thread::sleep(std::time::Duration::from_secs(1));
        }
    } else if cfg!(target_arch = "mips") {
        println!("hello from mips, this is not JSON");
    }
    let value = harness::measure::per_op(1000, 3, |i| {
        std::hint::black_box(i);
    });
    let metric = harness::out::Metric::new(
        "ticks_per_op",
        harness::timer::UNIT,
        harness::out::Better::Lower,
    );
    out.sample("behave", &case, &metric, 0, value.per_op);
    out.check_eq("behave", &case, "sanity", 1, 1);
    out.finish()
}
