//! The CUBIC curve (after TCP CUBIC): a throttle cuts the sending rate to β
//! of what it was; the rate then grows back along a cubic that reaches the
//! old maximum `K` seconds after the throttle, then probes above it.
//!
//! ```text
//! after a throttle:  rate = β × rate_before
//! K                  = ∛(last_max × (1 − β) / C)
//! after a success:   rate = C × (t − t_throttle − K)³ + last_max
//! ```

/// β: the fraction of the sending rate kept after a throttle.
pub(crate) const BETA: f64 = 0.7;
/// C: how fast the rate grows back after a throttle.
pub(crate) const SCALE: f64 = 0.4;

/// The rate after a throttle that found the client sending at `rate`.
pub(crate) fn after_throttle(rate: f64) -> f64 {
    rate * BETA
}

/// `K`: seconds after a throttle at which the curve is back at `last_max`.
pub(crate) fn recovery_time(last_max: f64) -> f64 {
    (last_max * (1.0 - BETA) / SCALE).cbrt()
}

/// The rate `since_throttle` seconds after a throttle at `last_max`.
pub(crate) fn after_success(last_max: f64, since_throttle: f64) -> f64 {
    SCALE * (since_throttle - recovery_time(last_max)).powi(3) + last_max
}

#[cfg(test)]
mod tests {
    use super::super::tests::close;
    use super::*;

    /// smithy-rs's `test_calculated_rate_with_successes` (ported there from
    /// aws-sdk-go-v2): the throttle was at t = 5 s with the client at 10/s;
    /// the rate is read at t = 5, 6, …, 11 s, i.e. 0 to 6 s after it, with
    /// nothing recorded in between.
    #[test]
    fn successes_after_a_throttle_follow_smithy_rs_vectors() {
        assert!(close(after_throttle(10.0), 7.0));
        let expected = [
            7.0,
            9.64893600966,
            10.000030849917364,
            10.453284520772092,
            13.408697022224185,
            21.26626835427364,
            36.425998516920465,
        ];
        for (since, want) in expected.into_iter().enumerate() {
            let got = after_success(10.0, since as f64);
            assert!(close(got, want), "{since} s after: {got}, want {want}");
        }
    }

    /// smithy-rs's `test_calculated_rate_with_throttles`: the same start, then
    /// throttles at t = 7 and 8 s (each cutting the last computed rate to β
    /// of it and restarting the curve there), then successes at 9 to 12 s.
    #[test]
    fn throttles_between_successes_follow_smithy_rs_vectors() {
        let (mut last_max, mut throttled_at, mut rate) = (10.0, 5.0, 0.0);
        let steps = [
            (false, 5.0, 7.0),
            (false, 6.0, 9.64893600966),
            (true, 7.0, 6.754255206761999),
            (true, 8.0, 4.727978644733399),
            (false, 9.0, 4.670125557970046),
            (false, 10.0, 4.770870456867401),
            (false, 11.0, 6.011819748005445),
            (false, 12.0, 10.792973431384178),
        ];
        for (throttled, t, want) in steps {
            if throttled {
                rate = after_throttle(rate);
                throttled_at = t;
                last_max = rate;
            } else {
                rate = after_success(last_max, t - throttled_at);
            }
            assert!(close(rate, want), "t = {t}: {rate}, want {want}");
        }
    }
}
