//! The tail scenario: a server whose latency has a heavy tail, and closed-loop
//! clients calling it under a policy, with and without hedging ("The Tail at
//! Scale", Dean and Barroso, 2013).
//!
//! The server ([`TailServer`]) answers every request: a share `slow_share`
//! of requests takes `slow`, the rest take `fast` spread uniformly over
//! ±50% (so the fast latencies have a p95 to hedge at). With a load
//! slowdown `k`, a request that starts while `n` others are in progress at
//! the server takes `1 + k·n` times as long. `concurrency` clients each make
//! one call at a time, `calls` in all. Each client hedges as the real loop
//! does: by retrykit-core's [`next_hedge`](retrykit_core::kernel::next_hedge),
//! with the delay from the policy's [`LatencyEstimate`](retrykit_core::hedge::LatencyEstimate)
//! (each call's first attempt recorded, from its start to its answer or to
//! the call's end), and the cap and budgets admitting each hedge. The first
//! answer ends the call and cancels the other attempts, which the server
//! then stops serving.

mod run;

use super::error::SimulateError;
use retrykit_core::Problems;
use retrykit_core::hedge::HedgeSettings;
use std::time::Duration;

/// The server's latency model, shared by the simulator and the `tail`
/// example's real server so that both serve the same distribution.
///
/// ```
/// use retrykit_sim::TailServer;
/// use std::time::Duration;
/// let s = TailServer { slow_share: 0.01, slow: Duration::from_secs(1), fast: Duration::from_millis(5), load_slowdown: 0.0 };
/// assert_eq!(s.latency(0.5, 0.5, 0), Duration::from_millis(5));
/// assert_eq!(s.latency(0.001, 0.5, 0), Duration::from_secs(1));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TailServer {
    /// The share of requests that are slow, from 0 to 1.
    pub slow_share: f64,
    /// A slow request's latency.
    pub slow: Duration,
    /// A fast request's mean latency (spread uniformly over ±50%).
    pub fast: Duration,
    /// How much each request already in progress slows a new one (0: none).
    pub load_slowdown: f64,
}

impl TailServer {
    /// The latency of a request given two uniform draws in `[0, 1)` (the
    /// first picks slow or fast, the second spreads a fast one) and the
    /// requests already in progress. Never above [`Tail::MAX_LATENCY`].
    pub fn latency(&self, pick: f64, spread: f64, in_progress: u64) -> Duration {
        let base = if pick < self.slow_share {
            self.slow.as_secs_f64()
        } else {
            self.fast.as_secs_f64() * (0.5 + spread.clamp(0.0, 1.0))
        };
        let slowed = base * (1.0 + self.load_slowdown * in_progress as f64);
        Duration::from_secs_f64(slowed.clamp(0.0, Tail::MAX_LATENCY.as_secs_f64()))
    }
}

/// A tail-latency scenario.
///
/// ```
/// use retrykit_sim::Tail;
/// let t = Tail::default();
/// assert_eq!((t.calls, t.server.slow_share), (20_000, 0.01));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Tail {
    /// Calls made in all.
    pub calls: u64,
    /// Clients calling at once, each one call at a time.
    pub concurrency: u32,
    /// The server.
    pub server: TailServer,
    /// Seeds the server's latencies.
    pub seed: u64,
    /// The timer both sides wait on, when modelled: a server's answer and a
    /// client's hedge then come at the timer's next step (tokio's timer
    /// rounds a wait up to the next millisecond). `None`: exact waits.
    pub timer: Option<crate::TimerModel>,
}

impl Default for Tail {
    /// The issue's example: 20,000 calls by 20 clients, 1% of requests at
    /// 1 s, the rest about 5 ms, no load slowdown, seed 0.
    fn default() -> Self {
        Tail {
            calls: 20_000,
            concurrency: 20,
            server: TailServer {
                slow_share: 0.01,
                slow: Duration::from_secs(1),
                fast: Duration::from_millis(5),
                load_slowdown: 0.0,
            },
            seed: 0,
            timer: None,
        }
    }
}

/// Call latencies and extra load of one run.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TailOutcome {
    /// Median call latency.
    pub p50: Duration,
    /// 99th-percentile call latency.
    pub p99: Duration,
    /// 99.9th-percentile call latency.
    pub p999: Duration,
    /// Requests sent beyond one per call, as a share of calls.
    pub extra_share: f64,
    /// Hedges sent.
    pub hedges: u64,
    /// Calls a hedge answered first.
    pub hedges_won: u64,
    /// Hedges the cap (`hedge_share`) or a budget refused.
    pub hedges_refused: u64,
}

/// The policy with and without hedging on the same server and seed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TailReport {
    /// The policy as it is (hedging when it has `hedge_after`).
    pub hedged: TailOutcome,
    /// The same policy with hedging removed.
    pub unhedged: TailOutcome,
    /// The policy's hedging settings, when it hedges.
    pub settings: Option<HedgeSettings>,
    /// Calls made in each run.
    pub calls: u64,
}

impl Tail {
    /// The most calls a run makes: a few seconds of work, 8 bytes each kept.
    pub const MAX_CALLS: u64 = 5_000_000;
    /// The most clients.
    pub const MAX_CONCURRENCY: u32 = 100_000;
    /// The longest latency the server model gives (load included).
    pub const MAX_LATENCY: Duration = Duration::from_secs(3600);
    /// The largest load slowdown.
    pub const MAX_LOAD_SLOWDOWN: f64 = 10.0;

    /// Every problem with the scenario's settings.
    pub(crate) fn check(&self) -> Result<(), SimulateError> {
        let mut p = Problems::default();
        let s = &self.server;
        p.require(
            (1..=Self::MAX_CALLS).contains(&self.calls),
            "calls",
            "must be from 1 to 5000000",
            format!("use --calls such as 20000 (got {})", self.calls),
        );
        p.require(
            (1..=Self::MAX_CONCURRENCY).contains(&self.concurrency),
            "concurrency",
            "must be from 1 to 100000",
            format!("use --concurrency such as 20 (got {})", self.concurrency),
        );
        p.require(
            s.slow_share.is_finite() && (0.0..=1.0).contains(&s.slow_share),
            "slow_share",
            "must be a share from 0 to 1",
            format!("use --slow-share such as 0.01 (got {})", s.slow_share),
        );
        for (field, d) in [("slow", s.slow), ("fast", s.fast)] {
            p.require(
                !d.is_zero() && d <= Self::MAX_LATENCY,
                field,
                "must be more than 0 and at most 1h",
                format!("use --{field} such as 5ms (got {d:?})"),
            );
        }
        p.require(
            s.load_slowdown.is_finite()
                && (0.0..=Self::MAX_LOAD_SLOWDOWN).contains(&s.load_slowdown),
            "load_slowdown",
            "must be a number from 0 to 10",
            format!("use --load-slowdown such as 0.01 (got {})", s.load_slowdown),
        );
        if let Some(timer) = self.timer {
            p.require(
                !timer.resolution.is_zero() && timer.resolution <= Duration::from_secs(1),
                "timer.resolution",
                "must be more than 0 and at most 1s",
                format!(
                    "use --timer-resolution 1ms, tokio's (got {:?})",
                    timer.resolution
                ),
            );
            p.require(
                (0.0..=crate::TimerModel::MAX_SKIPPED).contains(&timer.skipped),
                "timer.skipped",
                "must be a share from 0 to 0.9",
                format!("use --timer-skipped such as 0.25 (got {})", timer.skipped),
            );
        }
        SimulateError::check("tail", p.into_vec())
    }
}

#[cfg(test)]
mod tests;
