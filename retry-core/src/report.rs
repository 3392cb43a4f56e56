//! How a call ended, and what it cost.

use std::time::Duration;

/// Why the retry loop stopped.
///
/// # Examples
///
/// ```
/// assert_eq!(retrykit_core::Ending::Deadline.to_string(), "deadline");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Ending {
    /// An attempt succeeded.
    Success,
    /// `max_attempts` calls were made and the last one failed.
    Exhausted,
    /// The next wait (computed or hinted) would have reached the deadline.
    Deadline,
    /// The error classified itself as permanent.
    Permanent,
    /// The error's class is outside the policy's `retry_on`, or the call
    /// site's `retry_if` refused it.
    NotRetryable,
    /// The shared retry budget refused the retry.
    BudgetEmpty,
    /// The policy's adaptive budget (client-side rate limiting) would have
    /// made the next attempt wait past the deadline.
    RateLimited,
    /// The failure was retryable, but the request's body could not be sent
    /// again: larger than `max_replay_body`, or a stream.
    BodyNotReplayable,
    /// The failure was retryable, but the request's method is not
    /// idempotent (no `Idempotency-Key`, not in `retry_methods`).
    NotIdempotent,
    /// The circuit breaker refused an attempt (open, half-open with its
    /// probes out, or releasing with no place free) and would not let one
    /// through within the deadline or the policy's total wait.
    BreakerOpen,
    /// The failure was retryable, but its gRPC response had begun streaming
    /// (gRFC A6's "committed" RPC).
    Committed,
    /// A concurrency limit gave no permit in time: its queue was full, or
    /// its `max_wait` or the deadline ran out. Nothing was sent for it.
    LimitFull,
}

impl Ending {
    /// A short name, as used in tracing fields and reports.
    pub const fn as_str(&self) -> &'static str {
        match self {
            Ending::Success => "success",
            Ending::Exhausted => "attempts_exhausted",
            Ending::Deadline => "deadline",
            Ending::Permanent => "permanent",
            Ending::NotRetryable => "not_retryable",
            Ending::BudgetEmpty => "budget_empty",
            Ending::RateLimited => "rate_limited",
            Ending::BodyNotReplayable => "body_not_replayable",
            Ending::NotIdempotent => "not_idempotent",
            Ending::BreakerOpen => "breaker_open",
            Ending::Committed => "committed",
            Ending::LimitFull => "limit_full",
        }
    }
}

crate::problem::display_as_str!(Ending);

/// What one call through the retry loop did (`Retry::call_with_report`, an
/// `on_give_up` hook). A test of a hook builds one with [`Report::new`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Report {
    /// How the call ended.
    pub ending: Ending,
    /// Calls made, the first included (hedges included).
    pub attempts: u32,
    /// Hedges sent: attempts begun while another was still in flight.
    /// Counted in `attempts`.
    pub hedges: u32,
    /// The attempt (1-based) whose result the call returned: the last one,
    /// unless a hedge race was won by an earlier one.
    pub winner: u32,
    /// Why a call whose policy hedges sent none: the request could not be
    /// sent twice (`NotIdempotent`, `BodyNotReplayable`).
    pub unhedged: Option<Ending>,
    /// Attempts the policy's circuit breaker refused: counted in
    /// `attempts`, but never sent.
    pub refused: u32,
    /// Total time spent waiting between attempts.
    pub waited: Duration,
    /// Time from the start of the first attempt to the end, on the loop's
    /// clock.
    pub elapsed: Duration,
    /// Whether a fleet budget of the policy could not reach its store when
    /// the call ended, so the local budget decided.
    pub budget_failing_open: bool,
    /// Attempts the policy's chaos faulted or delayed (docs/chaos.md):
    /// counted in `attempts`.
    pub injected: u32,
}

impl Report {
    /// A call that ended with `ending` after `attempts` calls, the last of
    /// them the winner, and nothing else.
    ///
    /// ```
    /// use retrykit_core::{Ending, Report};
    /// let r = Report::new(Ending::Success, 2);
    /// assert_eq!((r.ending, r.attempts, r.winner, r.refused), (Ending::Success, 2, 2, 0));
    /// assert!(r.waited.is_zero() && r.elapsed.is_zero() && r.unhedged.is_none());
    /// ```
    pub const fn new(ending: Ending, attempts: u32) -> Report {
        Report {
            ending,
            attempts,
            hedges: 0,
            winner: attempts,
            unhedged: None,
            refused: 0,
            waited: Duration::ZERO,
            elapsed: Duration::ZERO,
            budget_failing_open: false,
            injected: 0,
        }
    }

    /// Whether the call ended in success.
    ///
    /// ```
    /// # use retrykit_core::{Ending, Report};
    /// assert!(!Report::new(Ending::Permanent, 1).succeeded());
    /// assert!(Report::new(Ending::Success, 1).succeeded());
    /// ```
    pub const fn succeeded(&self) -> bool {
        matches!(self.ending, Ending::Success)
    }

    /// The report with `budget_failing_open` read from `policy`'s budgets.
    pub(crate) fn budget_state(mut self, policy: &crate::Policy) -> Report {
        self.budget_failing_open = policy.budgets.failing_open();
        self
    }
}
