//! Jitter modes: how a wait is randomised so that clients which failed
//! together do not retry together.

/// How a computed wait `d` is randomised, from one uniform sample
/// `u ∈ [0, 1)`. The policy clamps the result into `[min_delay, cap]`.
///
/// # Examples
///
/// ```
/// use retrykit_core::{Jitter, Policy};
/// use std::time::Duration;
/// // The first wait, whose envelope is 100 ms, for a uniform sample `u`.
/// let first = |j: Jitter, u: f64| Policy::builder().jitter(j).build().unwrap().delay(0, Duration::ZERO, u);
/// assert_eq!(first(Jitter::None, 0.7), Duration::from_millis(100));
/// assert_eq!(first(Jitter::Full, 0.5), Duration::from_millis(50));
/// assert_eq!(first(Jitter::Equal, 0.0), Duration::from_millis(50));
/// assert_eq!(Jitter::Proportional(0.2).name(), "proportional");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Jitter {
    /// No randomness: every client waits exactly the envelope.
    None,
    /// `U[0, d]`: the widest spread, as in the AWS "full jitter" study.
    #[default]
    Full,
    /// `d/2 + U[0, d/2]`: never less than half the envelope.
    Equal,
    /// `U[base, 3·prev]` with the upper end clamped to the cap *before*
    /// drawing, so it keeps varying once it reaches the cap.
    Decorrelated,
    /// `U[d(1−r), d(1+r)]` with `0 ≤ r ≤ 1`.
    Proportional(f64),
}

impl Jitter {
    /// The mode's name as written in configuration files.
    pub const fn name(&self) -> &'static str {
        match self {
            Jitter::None => "none",
            Jitter::Full => "full",
            Jitter::Equal => "equal",
            Jitter::Decorrelated => "decorrelated",
            Jitter::Proportional(_) => "proportional",
        }
    }

    /// The envelope modes' formula, in nanoseconds: where sample `u` puts
    /// a wait whose envelope is `dn` (`None` and `Decorrelated` keep `dn`).
    pub(crate) fn spread(&self, dn: f64, u: f64) -> f64 {
        match *self {
            Jitter::None | Jitter::Decorrelated => dn,
            Jitter::Full => dn * u,
            Jitter::Equal => dn / 2.0 + dn / 2.0 * u,
            Jitter::Proportional(r) => dn * (1.0 - r) + 2.0 * r * dn * u,
        }
    }

    /// Decorrelated jitter in nanoseconds: `U[base, min(cap, 3·prev)]`
    /// (the range is clamped, so it never sticks at the cap).
    pub(crate) fn decorrelated_ns(lo: f64, cap: f64, prev: f64, u: f64) -> f64 {
        let hi = (prev * 3.0).min(cap).max(lo);
        lo + (hi - lo) * u
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelope_modes_hit_their_range_ends() {
        let d = 200e6; // 200 ms in nanoseconds
        assert_eq!(Jitter::Full.spread(d, 0.0), 0.0);
        assert_eq!(Jitter::Full.spread(d, 1.0), d);
        assert_eq!(Jitter::Equal.spread(d, 1.0), d);
        assert_eq!(Jitter::Proportional(0.25).spread(d, 1.0), 250e6);
        assert_eq!(Jitter::Proportional(0.0).spread(d, 0.9), 200e6);
    }

    #[test]
    fn decorrelated_grows_from_base_while_below_cap_and_draws_below_it_after() {
        let (base, cap) = (10e6, 10e9);
        assert_eq!(Jitter::decorrelated_ns(base, cap, base, 1.0), 30e6);
        // prev already at the cap: still anywhere in [base, cap].
        let cap = 100e6;
        assert_eq!(Jitter::decorrelated_ns(base, cap, cap, 0.0), base);
        assert_eq!(Jitter::decorrelated_ns(base, cap, cap, 0.5), 55e6);
    }
}
