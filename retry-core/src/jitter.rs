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
        let u = u.clamp(0.0, 1.0);
        let dn = nanos_f64(d);
        let nanos = match *self {
            Jitter::None | Jitter::Decorrelated => return d,
            Jitter::Full => dn * u,
            Jitter::Equal => dn / 2.0 + dn / 2.0 * u,
            Jitter::Proportional(r) => dn * (1.0 - r) + 2.0 * r * dn * u,
        };
        from_nanos_saturating(nanos)
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
        let u = u.clamp(0.0, 1.0);
        let lo = nanos_f64(base);
        let hi = (nanos_f64(prev) * 3.0).min(nanos_f64(cap)).max(lo);
        from_nanos_saturating(lo + (hi - lo) * u)
    }
}

fn from_nanos_saturating(nanos: f64) -> Duration {
    // `as` saturates (and maps NaN to 0); callers clamp into [min_delay, cap].
    Duration::from_nanos(nanos.max(0.0).round() as u64)
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
