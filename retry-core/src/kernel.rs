//! The decision kernel, stepped by hand: for simulators and tools that must
//! decide exactly as the retry loop does without being the loop (the fleet
//! simulator, `retry-policy show`). [`Decider`] is the loop's own decision
//! state; [`Schedule`] is a policy's computed waits; [`split_mix`] is the
//! generator seeded jitter draws from. Applications retry through
//! [`Retry`](crate::Retry) and `#[retry]`, or schedule retries themselves
//! with the persistable [`Oracle`](crate::Oracle).

pub use crate::decide::hedge::{Admission, HedgeStep, HedgeStop, HedgeView, is_fatal, next_hedge};
pub use crate::decide::{Decider, Failure, Step};
pub use crate::rng::split_mix;
pub use crate::schedule::Schedule;

use crate::policy::Policy;
use std::time::Duration;

/// The computed wait before retry `retry` (0 for the wait after the first
/// failure) when the previous computed wait was `prev`: jittered, clamped,
/// with the jitter drawn from this thread's generator as the loop draws it.
/// No hint, deadline or budget applies (that is [`Decider`]'s part).
///
/// ```
/// use retrykit_core::{Jitter, Policy};
/// use std::time::Duration;
/// let p = Policy::builder().jitter(Jitter::None).build().unwrap();
/// assert_eq!(retrykit_core::kernel::next_delay(&p, 2, Duration::ZERO), Duration::from_millis(400));
/// ```
pub fn next_delay(policy: &Policy, retry: u32, prev: Duration) -> Duration {
    let prev = crate::backoff::nanos(prev);
    Duration::from_nanos(policy.delay_ns(retry, prev, crate::rng::thread_sample))
}
