//! The range of every number in targets.yaml, checked while it is read so
//! that serde_norway places the error at the value: `file:line:column`, the
//! field's path (`targets[3].timeout_secs`), the value and the range. Where
//! a number has a command-line twin the range is the twin's (`--timeout`).
//!
//! A number inside its range cannot overflow what is computed from it: the
//! longest timeout (a day) plus any margin, times the suites, in seconds,
//! minutes or a [`std::time::Duration`], is far below `u64::MAX`.

use serde::de::{self, Deserializer, Unexpected, Visitor};
use serde::Deserialize;
use std::fmt;

/// The longest a suite run may take, in seconds: `timeout_secs` in
/// targets.yaml and `--timeout` on the command line. A day.
pub const MAX_TIMEOUT_SECS: u64 = 86_400;

/// What a number of targets.yaml may be.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Range {
    /// A whole number from `min` to `max`, both included.
    Whole {
        min: u64,
        max: u64,
        what: &'static str,
    },
    /// A finite fraction, at least `min` and below `below`.
    Fraction {
        min: f64,
        below: f64,
        what: &'static str,
    },
}

/// `timeout_secs`, in `defaults` and per target.
pub const TIMEOUT_SECS: Range = Range::Whole {
    min: 1,
    max: MAX_TIMEOUT_SECS,
    what: "seconds (the range of --timeout)",
};

/// `ssh.port`.
pub const PORT: Range = Range::Whole {
    min: 1,
    max: u16::MAX as u64,
    what: "a TCP port",
};

/// `insns_tolerance`: how far `insns_per_op` may move, 0.01 = 1%. A
/// tolerance of 100% or more would let any count pass.
pub const INSNS_TOLERANCE: Range = Range::Fraction {
    min: 0.0,
    below: 1.0,
    what: "a fraction (0.01 = 1%)",
};

impl fmt::Display for Range {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Range::Whole { min, max, what } => write!(f, "{what} from {min} to {max}"),
            Range::Fraction { min, below, what } => {
                write!(f, "{what} from {min} up to but not including {below}")
            }
        }
    }
}

impl Range {
    /// Whether `v` is in the range (a NaN or an infinity never is).
    pub fn contains(&self, v: f64) -> bool {
        match *self {
            Range::Whole { min, max, .. } => v.fract() == 0.0 && v >= min as f64 && v <= max as f64,
            Range::Fraction { min, below, .. } => v.is_finite() && v >= min && v < below,
        }
    }
}

impl<'de> Visitor<'de> for Range {
    type Value = f64;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<f64, E> {
        // Whole ranges end far below 2^53, so a larger v is out whatever
        // the rounding.
        if self.contains(v as f64) {
            Ok(v as f64)
        } else {
            Err(E::invalid_value(Unexpected::Unsigned(v), &self))
        }
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<f64, E> {
        match u64::try_from(v) {
            Ok(u) => self.visit_u64(u),
            Err(_) => Err(E::invalid_value(Unexpected::Signed(v), &self)),
        }
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<f64, E> {
        match self {
            Range::Fraction { .. } if self.contains(v) => Ok(v),
            Range::Fraction { .. } => Err(E::invalid_value(Unexpected::Float(v), &self)),
            Range::Whole { .. } => Err(E::invalid_type(Unexpected::Float(v), &self)),
        }
    }
}

/// A whole number of `range`, read where it stands.
fn whole<'de, D: Deserializer<'de>>(d: D, range: Range) -> Result<u64, D::Error> {
    // In range, so whole and below 2^53: the conversion is exact.
    d.deserialize_u64(range).map(|v| v as u64)
}

pub fn timeout_secs<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    whole(d, TIMEOUT_SECS)
}

/// An optional `timeout_secs`: absent or `null` is `None`.
pub fn timeout_secs_some<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    struct Timeout(u64);
    impl<'de> Deserialize<'de> for Timeout {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            timeout_secs(d).map(Timeout)
        }
    }
    Ok(Option::<Timeout>::deserialize(d)?.map(|t| t.0))
}

pub fn port<'de, D: Deserializer<'de>>(d: D) -> Result<u16, D::Error> {
    // In PORT's range, so it fits.
    whole(d, PORT).map(|p| p as u16)
}

pub fn insns_tolerance<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    d.deserialize_f64(INSNS_TOLERANCE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_hold_their_ends_and_refuse_what_is_past_them() {
        assert!(TIMEOUT_SECS.contains(1.0) && TIMEOUT_SECS.contains(86_400.0));
        assert!(!TIMEOUT_SECS.contains(0.0) && !TIMEOUT_SECS.contains(86_401.0));
        assert!(!TIMEOUT_SECS.contains(1.5) && !TIMEOUT_SECS.contains(u64::MAX as f64));
        assert!(PORT.contains(65_535.0) && !PORT.contains(65_536.0) && !PORT.contains(0.0));
        assert!(INSNS_TOLERANCE.contains(0.0) && INSNS_TOLERANCE.contains(0.999));
        for bad in [1.0, -0.01, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert!(!INSNS_TOLERANCE.contains(bad), "{bad}");
        }
        assert_eq!(
            TIMEOUT_SECS.to_string(),
            "seconds (the range of --timeout) from 1 to 86400"
        );
    }

    #[test]
    fn the_longest_timeout_leaves_room_for_what_is_computed_from_it() {
        // ssh adds a margin to it, CI multiplies it by the suites: both
        // stay far from overflowing, in seconds and as a Duration.
        let most = std::time::Duration::from_secs(MAX_TIMEOUT_SECS);
        assert!(most
            .checked_add(std::time::Duration::from_secs(30))
            .is_some());
        assert!(MAX_TIMEOUT_SECS.checked_mul(1_000_000).is_some());
    }
}
