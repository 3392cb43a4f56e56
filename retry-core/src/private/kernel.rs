//! The engine's own decision kernel and loop state, for the code that must
//! decide exactly as the loop does without being the loop: `#[retry]`'s
//! expansion (which drives [`Run::round`] itself), `retry-policy show`, the
//! fleet simulator (retry-sim) and the benches. Users get the same decisions
//! through [`Retry`](crate::Retry) and [`Oracle`](crate::Oracle).
//!
//! ```
//! use retry_core::{Class, Jitter, Policy};
//! use retry_core::__private::kernel::{Decider, Failure, Step};
//! use std::time::{Duration, Instant};
//! let p = Policy::builder().jitter(Jitter::None).max_attempts(2).build().unwrap();
//! let mut d = Decider::new(None);
//! let t0 = Instant::now();
//! d.begin_attempt(&p, t0);
//! let fail = Failure { class: Class::TRANSIENT, hint: None, allowed: true };
//! assert_eq!(d.after_failure(&p, fail, t0), Step::Retry { wait: Duration::from_millis(100), hinted: false });
//! ```

use crate::policy::Policy;
use std::time::Duration;

pub use crate::call_policy::{CallPolicy, Lent, Site, SitePolicy};
pub use crate::decide::{Decider, Failure, Step};
pub use crate::problem::Problems;
pub use crate::retry::{Block, Retry, Run};
pub use crate::rng::split_mix;
pub use crate::round::Round;
pub use crate::schedule::Schedule;

/// The wait before retry `retry` after a previous wait `prev`, with jitter
/// drawn from this thread's generator as the retry loop draws it (for
/// benchmarks that time one decision).
///
/// ```
/// let p = retry_core::Policy::default();
/// let d = retry_core::__private::kernel::next_delay(&p, 2, p.base());
/// assert!(d <= p.cap());
/// ```
pub fn next_delay(policy: &Policy, retry: u32, prev: Duration) -> Duration {
    let prev = crate::backoff::nanos(prev);
    Duration::from_nanos(
        policy.delay_ns(retry, prev, || crate::rng::JitterRng::Thread.sample(retry)),
    )
}

/// A by-value argument's copy for one attempt of a `#[retry]` function. It
/// is not `Copy`, and the attempt's `async` block takes the value out with
/// [`into_inner`](Self::into_inner), a move: so the block captures the copy
/// itself. A `Copy` value read plainly would be captured by reference, and
/// the function's own state would hold the copy a second time.
///
/// ```
/// use retry_core::__private::kernel::Owned;
/// // The block outlives `copy`'s scope: it holds the copy, not a reference.
/// let attempt = {
///     let copy = Owned(7u64);
///     async { copy.into_inner() + 1 }
/// };
/// let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
/// let out = std::future::Future::poll(std::pin::pin!(attempt), &mut cx);
/// assert_eq!(out, std::task::Poll::Ready(8));
/// ```
#[derive(Debug)]
pub struct Owned<T>(pub T);

impl<T> Owned<T> {
    /// The value, moved out.
    ///
    /// ```
    /// assert_eq!(retry_core::__private::kernel::Owned("a").into_inner(), "a");
    /// ```
    #[inline]
    pub fn into_inner(self) -> T {
        self.0
    }
}
