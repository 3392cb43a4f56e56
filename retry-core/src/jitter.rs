//! Jitter modes: how a wait is randomised so that clients which failed
//! together do not retry together.
//!
//! Every mode draws from one uniform sample `u ∈ [0, 1)`; the policy clamps
//! the result into `[min_delay, cap]` *after* jitter, so no mode can push a
//! wait past the cap.

use crate::backoff::nanos_f64;
use std::time::Duration;

/// How a computed wait `d` is randomised.
///
/// ```
/// use retry_core::Jitter;
/// use std::time::Duration;
/// let d = Duration::from_millis(100);
/// assert_eq!(Jitter::None.apply_to_envelope(d, 0.7), d);
/// assert_eq!(Jitter::Full.apply_to_envelope(d, 0.5), Duration::from_millis(50));
/// assert_eq!(Jitter::Equal.apply_to_envelope(d, 0.0), Duration::from_millis(50));
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
    ///
    /// ```
    /// assert_eq!(retry_core::Jitter::Proportional(0.2).name(), "proportional");
    /// ```
    pub const fn name(&self) -> &'static str {
        match self {
            Jitter::None => "none",
            Jitter::Full => "full",
            Jitter::Equal => "equal",
            Jitter::Decorrelated => "decorrelated",
            Jitter::Proportional(_) => "proportional",
        }
    }

    /// Applies an envelope-based mode to `d` with the uniform sample `u ∈ [0, 1)`.
    /// `Decorrelated` does not use the envelope and returns `d` unchanged here;
    /// see [`decorrelated`](Self::decorrelated).
    ///
    /// ```
    /// use retry_core::Jitter;
    /// use std::time::Duration;
    /// let d = Duration::from_secs(1);
    /// assert_eq!(Jitter::Proportional(0.5).apply_to_envelope(d, 0.0), Duration::from_millis(500));
    /// ```
    pub fn apply_to_envelope(&self, d: Duration, u: f64) -> Duration {
        match self {
            Jitter::None | Jitter::Decorrelated => d,
            mode => from_nanos_saturating(mode.spread(nanos_f64(d), u.clamp(0.0, 1.0))),
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

    /// Decorrelated jitter: `U[base, min(cap, 3·prev)]`.
    ///
    /// Clamping the *range* rather than the *result* is what keeps it from
    /// sticking at the cap: once `3·prev ≥ cap` it draws from `[base, cap]`.
    ///
    /// ```
    /// use retry_core::Jitter;
    /// use std::time::Duration;
    /// let (base, cap) = (Duration::from_millis(10), Duration::from_millis(100));
    /// // prev already at the cap: still anywhere in [base, cap].
    /// assert_eq!(Jitter::decorrelated(base, cap, cap, 0.0), base);
    /// assert_eq!(Jitter::decorrelated(base, cap, cap, 0.5), Duration::from_millis(55));
    /// ```
    pub fn decorrelated(base: Duration, cap: Duration, prev: Duration, u: f64) -> Duration {
        let (lo, cap, prev) = (nanos_f64(base), nanos_f64(cap), nanos_f64(prev));
        from_nanos_saturating(Self::decorrelated_ns(lo, cap, prev, u.clamp(0.0, 1.0)))
    }

    /// [`decorrelated`](Self::decorrelated) in nanoseconds.
    pub(crate) fn decorrelated_ns(lo: f64, cap: f64, prev: f64, u: f64) -> f64 {
        let hi = (prev * 3.0).min(cap).max(lo);
        lo + (hi - lo) * u
    }
}

fn from_nanos_saturating(nanos: f64) -> Duration {
    // Saturating (NaN to 0); callers clamp into [min_delay, cap].
    Duration::from_nanos(crate::backoff::round_nanos(nanos))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelope_modes_hit_their_range_ends() {
        let d = Duration::from_millis(200);
        assert_eq!(Jitter::Full.apply_to_envelope(d, 0.0), Duration::ZERO);
        assert_eq!(Jitter::Full.apply_to_envelope(d, 1.0), d);
        assert_eq!(Jitter::Equal.apply_to_envelope(d, 1.0), d);
        assert_eq!(
            Jitter::Proportional(0.25).apply_to_envelope(d, 1.0),
            Duration::from_millis(250)
        );
        assert_eq!(
            Jitter::Proportional(0.0).apply_to_envelope(d, 0.9),
            Duration::from_millis(200)
        );
    }

    #[test]
    fn decorrelated_grows_from_base_while_below_cap() {
        let base = Duration::from_millis(10);
        let cap = Duration::from_secs(10);
        let d = Jitter::decorrelated(base, cap, base, 1.0);
        assert_eq!(d, Duration::from_millis(30));
    }
}
