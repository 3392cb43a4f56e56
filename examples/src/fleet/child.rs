//! A client process: connects its share of the fleet, reports ready, waits
//! for the common start and runs its clients, then prints one line per client.
//!
//! The protocol with the coordinator, one line each way at a time:
//! `ready EPOCH_NS` (stdout; the wall-clock time this process's tokio timer
//! counts its milliseconds from), `go START_NS` (stdin; the common start, in
//! wall-clock nanoseconds), then a `client ...` line per client, with a
//! fleet breaker `fallbacks N` (times it fell back to its local breaker),
//! and `done`.

use super::clients::{connect_all, run_client};
use std::io::{BufRead, Write};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// What a client process needs to know.
pub(crate) struct ChildPlan {
    /// The server.
    pub(crate) server: SocketAddr,
    /// Its clients' indices in the fleet.
    pub(crate) clients: std::ops::Range<u32>,
    /// Connections its clients share.
    pub(crate) connections: u32,
    /// The policy every client follows.
    pub(crate) policy: Arc<retrykit_core::Policy>,
    /// The fleet's seed.
    pub(crate) seed: u64,
    /// How long after the start clients are stopped.
    pub(crate) horizon: Duration,
    /// At most this many calls per ms from this process (`--throttle`),
    /// shared evenly by its connections.
    pub(crate) throttle: Option<f64>,
}

/// Wall-clock nanoseconds since the Unix epoch of `at`, an instant near now.
pub(crate) fn wall_ns(at: Instant) -> u64 {
    let now = Instant::now();
    let wall = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let wall = if at <= now {
        wall.saturating_sub(now - at)
    } else {
        wall + (at - now)
    };
    u64::try_from(wall.as_nanos()).unwrap_or(u64::MAX)
}

/// The instant of wall-clock nanoseconds `ns`, assuming it is near now.
pub(crate) fn instant_of(ns: u64) -> Instant {
    let now = Instant::now();
    let wall = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let target = Duration::from_nanos(ns);
    if target >= wall {
        now + (target - wall)
    } else {
        now.checked_sub(wall - target).unwrap_or(now)
    }
}

/// Runs a client process to the end; errors go to stderr and the exit code.
pub(crate) fn run(plan: ChildPlan) -> std::io::Result<()> {
    // The timer counts its milliseconds from when the runtime is built: the
    // coordinator lines the server's ticks up with them.
    let epoch = Instant::now();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    // Each of the process's connections writes its share of the rate:
    // one request per connections/rate ms.
    let pace = plan
        .throttle
        .map(|per_ms| Duration::from_secs_f64(f64::from(plan.connections) / per_ms / 1e3));
    let lanes = runtime.block_on(connect_all(plan.server, plan.connections, pace))?;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "ready {}", wall_ns(epoch))?;
    stdout.flush()?;
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    let start = line
        .trim()
        .strip_prefix("go ")
        .and_then(|n| n.parse().ok())
        // The coordinator sends a start a few hundred ms ahead; anything
        // beyond a minute is a broken line, not a plan to wait for.
        .filter(|&n: &u64| n <= wall_ns(Instant::now()).saturating_add(60_000_000_000))
        .map(instant_of)
        .ok_or_else(|| std::io::Error::other(format!("expected `go START_NS`, got {line:?}")))?;
    let outcomes = runtime.block_on(async {
        let tasks: Vec<_> = plan
            .clients
            .clone()
            .map(|index| {
                let lane = lanes[index as usize % lanes.len()].clone();
                tokio::spawn(run_client(
                    plan.policy.clone(),
                    plan.seed,
                    index,
                    lane,
                    start,
                    plan.horizon,
                ))
            })
            .collect();
        let mut outcomes = Vec::with_capacity(tasks.len());
        for task in tasks {
            outcomes.push(task.await.map_err(std::io::Error::other)?);
        }
        Ok::<_, std::io::Error>(outcomes)
    })?;
    let mut out = std::io::BufWriter::new(stdout);
    for outcome in outcomes {
        writeln!(out, "{}", outcome.to_line())?;
    }
    // A fleet breaker says how often this process fell back to its local
    // breaker (Redis slower than its timeout): the fleet run was partly local.
    if let Some(status) = plan.policy.breaker().and_then(|b| b.fleet_status()) {
        writeln!(out, "fallbacks {}", status.fallbacks)?;
    }
    writeln!(out, "done")?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two readings of the clocks are a few µs apart; allow a millisecond.
    const SLACK_NS: u64 = 1_000_000;

    #[test]
    fn wall_clock_nanoseconds_and_instants_convert_both_ways() {
        let now = Instant::now();
        for at in [
            now,
            now + Duration::from_millis(300),
            now - Duration::from_millis(300),
        ] {
            let back = instant_of(wall_ns(at));
            let apart = if back > at { back - at } else { at - back };
            assert!(apart.as_nanos() < u128::from(SLACK_NS), "{apart:?}");
        }
        let later = wall_ns(now + Duration::from_secs(1)) - wall_ns(now);
        assert!(later.abs_diff(1_000_000_000) < SLACK_NS, "{later}");
    }

    #[test]
    fn a_wall_time_long_past_or_far_ahead_does_not_panic() {
        // The Unix epoch is decades ago: some instant before now, never a panic.
        assert!(instant_of(0) <= Instant::now());
        assert!(instant_of(u64::MAX) > Instant::now());
    }
}
