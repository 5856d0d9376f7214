//! Fairness: how evenly a lock served the threads that wanted it, as
//! lockhammer reports it.

/// Per-thread acquisitions in one window: the least, the mean and the
/// most, and `lasom`, their standard deviation over the mean (the
/// population's, lockhammer's `lock_acquires_stddev_over_mean`): 0 when
/// every thread got the same share, 1 when one thread of two got them all.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    pub min: f64,
    pub mean: f64,
    pub max: f64,
    pub lasom: f64,
}

impl Spread {
    /// `None` without threads or without acquisitions.
    pub fn of(per_thread: &[f64]) -> Option<Spread> {
        let n = per_thread.len() as f64;
        let mean = per_thread.iter().sum::<f64>() / n;
        if per_thread.is_empty() || mean <= 0.0 {
            return None;
        }
        let var = per_thread.iter().map(|a| (a - mean).powi(2)).sum::<f64>() / n;
        Some(Spread {
            min: per_thread.iter().copied().fold(f64::INFINITY, f64::min),
            mean,
            max: per_thread.iter().copied().fold(0.0, f64::max),
            lasom: var.sqrt() / mean,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spread_is_lockhammers() {
        assert_eq!(Spread::of(&[]), None);
        assert_eq!(Spread::of(&[0.0, 0.0]), None);
        let even = Spread::of(&[5.0, 5.0, 5.0]).unwrap();
        assert_eq!(
            (even.min, even.mean, even.max, even.lasom),
            (5.0, 5.0, 5.0, 0.0)
        );
        // Mean 2, population standard deviation 1.
        let s = Spread::of(&[1.0, 3.0]).unwrap();
        assert_eq!((s.min, s.mean, s.max, s.lasom), (1.0, 2.0, 3.0, 0.5));
        assert_eq!(Spread::of(&[0.0, 8.0]).unwrap().lasom, 1.0);
    }
}
