//! The decision kernel, stepped by hand: for simulators and tools that must
//! decide exactly as the retry loop does without being the loop (the fleet
//! simulator, `retry-policy show`). [`Decider`] is the loop's own decision
//! state; [`Schedule`] is a policy's computed waits; [`split_mix`] is the
//! generator seeded jitter draws from. Applications retry through
//! [`Retry`](crate::Retry) and `#[retry]`, or schedule retries themselves
//! with the persistable [`Oracle`](crate::Oracle).
//!
//! ```
//! use retry_core::{Class, Jitter, Policy};
//! use retry_core::kernel::{Decider, Failure, Step};
//! use std::time::{Duration, Instant};
//! let p = Policy::builder().jitter(Jitter::None).max_attempts(2).build().unwrap();
//! let mut d = Decider::new(None);
//! let t0 = Instant::now();
//! d.begin_attempt(&p, t0);
//! let fail = Failure { class: Class::TRANSIENT, hint: None, allowed: true };
//! assert_eq!(d.after_failure(&p, fail, t0), Step::Retry { wait: Duration::from_millis(100), hinted: false });
//! ```

pub use crate::decide::{Decider, Failure, Step};
pub use crate::rng::split_mix;
pub use crate::schedule::Schedule;
