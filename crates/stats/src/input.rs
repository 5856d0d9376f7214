//! Input checks, and the error they give: a bad sample is reported with the
//! sample's name, the value's index and what was expected, never turned into NaN.

use std::fmt;

/// Why a statistic could not be computed from its input.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum StatsError {
    /// A sample has fewer values than the method needs.
    TooFewSamples {
        sample: &'static str,
        got: usize,
        need: usize,
    },
    /// A value the method cannot use (NaN, infinite, or not positive where a log is taken).
    BadValue {
        sample: &'static str,
        index: usize,
        value: f64,
        expected: &'static str,
    },
    /// A parameter outside its range.
    BadParameter {
        name: &'static str,
        value: f64,
        expected: &'static str,
    },
}

impl fmt::Display for StatsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StatsError::TooFewSamples { sample, got, need } => write!(
                f,
                "sample `{sample}` has {got} value(s), needs at least {need}"
            ),
            StatsError::BadValue {
                sample,
                index,
                value,
                expected,
            } => write!(
                f,
                "sample `{sample}` value #{index} is {value}, expected {expected}"
            ),
            StatsError::BadParameter {
                name,
                value,
                expected,
            } => write!(f, "parameter `{name}` is {value}, expected {expected}"),
        }
    }
}

impl std::error::Error for StatsError {}

/// Checks that `xs` has at least `need` values, none of them NaN or infinite.
pub(crate) fn finite(sample: &'static str, xs: &[f64], need: usize) -> Result<(), StatsError> {
    at_least(sample, xs.len(), need)?;
    match xs.iter().position(|x| !x.is_finite()) {
        Some(index) => Err(StatsError::BadValue {
            sample,
            index,
            value: xs[index],
            expected: "a finite number",
        }),
        None => Ok(()),
    }
}

/// Checks that a sample of `got` values has at least `need`.
pub(crate) fn at_least(sample: &'static str, got: usize, need: usize) -> Result<(), StatsError> {
    if got < need {
        Err(StatsError::TooFewSamples { sample, got, need })
    } else {
        Ok(())
    }
}

/// The natural logs of a non-empty sample of positive, finite values.
///
/// Timings are compared as ratios, so the tests work on logs: a shift of the
/// log is a ratio, and the log tames the right skew of timing samples.
pub(crate) fn logs(sample: &'static str, xs: &[f64]) -> Result<Vec<f64>, StatsError> {
    at_least(sample, xs.len(), 1)?;
    xs.iter()
        .enumerate()
        .map(|(index, &x)| {
            if x.is_finite() && x > 0.0 {
                Ok(x.ln())
            } else {
                Err(StatsError::BadValue {
                    sample,
                    index,
                    value: x,
                    expected: "a finite number > 0",
                })
            }
        })
        .collect()
}

/// `ln(1 + delta)`, the log-ratio boundary of "slower by more than `delta`".
pub(crate) fn log_margin(delta: f64) -> Result<f64, StatsError> {
    if delta.is_finite() && delta > -1.0 {
        Ok(delta.ln_1p())
    } else {
        Err(StatsError::BadParameter {
            name: "delta",
            value: delta,
            expected: "a finite number > -1",
        })
    }
}

/// Checks `lo < value < hi`.
pub(crate) fn in_open(
    name: &'static str,
    value: f64,
    lo: f64,
    hi: f64,
    expected: &'static str,
) -> Result<f64, StatsError> {
    if value > lo && value < hi {
        Ok(value)
    } else {
        Err(StatsError::BadParameter {
            name,
            value,
            expected,
        })
    }
}
