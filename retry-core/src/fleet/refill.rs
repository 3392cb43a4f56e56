//! The refill thread: one per fleet budget, with its own single-threaded
//! tokio runtime, so a budget works from any caller (async or blocking, on
//! any runtime or none) and no call ever waits for Redis.

use super::link::{FleetState, Shared};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

/// The script's source: see `sync.lua` for what it does.
const SYNC: &str = include_str!("sync.lua");

/// A connection attempt may take longer than a round trip (a handshake of
/// its own), but no longer than this, so an unreachable store is noticed.
const CONNECT_TIMEOUT_FLOOR: Duration = Duration::from_millis(100);

pub(super) fn spawn(shared: Weak<Shared>) -> std::io::Result<()> {
    let name = shared
        .upgrade()
        .map(|s| format!("retry-fleet-{}", s.options.name()))
        .unwrap_or_default();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    std::thread::Builder::new()
        .name(name)
        .spawn(move || runtime.block_on(run(shared)))?;
    Ok(())
}

/// Round trips until the budget is dropped.
async fn run(weak: Weak<Shared>) {
    let Some(shared) = weak.upgrade() else { return };
    // Checked when the options were validated; a failure here is reported
    // like any unreachable store.
    let client = redis::Client::open(shared.options.store());
    let script = redis::Script::new(SYNC);
    let key = shared.options.key();
    let refresh = shared.options.refresh();
    let timeout = shared.options.timeout();
    let mut connection = None;
    let mut calls_last_round = 0u64;
    drop(shared);
    loop {
        let Some(shared) = weak.upgrade() else { return };
        let calls = shared.pending_calls.swap(0, Ordering::AcqRel);
        let wanted = lease_target(&shared, calls.max(calls_last_round))
            .saturating_sub(shared.lease.load(Ordering::Acquire));
        calls_last_round = calls;
        let outcome = match (&client, connection.take()) {
            (Ok(_), Some(conn)) => Ok(conn),
            (Ok(client), None) => connect(client, timeout).await,
            (Err(e), _) => Err(e.to_string()),
        };
        let outcome = match outcome {
            Ok(mut conn) => {
                let mut invocation = script.key(&key);
                invocation
                    .arg(calls)
                    .arg(wanted)
                    .arg(shared.ratio)
                    .arg(shared.min_per_sec * shared.window.as_secs_f64())
                    .arg(u64::try_from(shared.window.as_micros()).unwrap_or(u64::MAX));
                match tokio::time::timeout(
                    timeout,
                    invocation.invoke_async::<(u64, u64, u64)>(&mut conn),
                )
                .await
                {
                    Ok(Ok((granted, _, _))) => {
                        connection = Some(conn);
                        Ok(granted)
                    }
                    Ok(Err(e)) => Err(e.to_string()),
                    Err(_) => Err(format!("no answer within {timeout:?}")),
                }
            }
            Err(e) => Err(e),
        };
        match outcome {
            Ok(granted) => {
                shared.lease.fetch_add(granted, Ordering::AcqRel);
                shared.leased.fetch_add(granted, Ordering::Relaxed);
                shared.calls_sent.fetch_add(calls, Ordering::Relaxed);
                if shared.set_state(FleetState::Fleet) == FleetState::FailingOpen {
                    shared.recoveries.fetch_add(1, Ordering::Relaxed);
                    #[cfg(feature = "metrics")]
                    crate::metrics::fleet_failing_open(shared.options.name(), false);
                    say(&shared, "answers again: the fleet budget resumes");
                }
            }
            Err(error) => {
                // The calls stay pending for the next round trip; the lease
                // is kept too (it was granted), the local budget decides.
                shared.pending_calls.fetch_add(calls, Ordering::AcqRel);
                if shared.set_state(FleetState::FailingOpen) != FleetState::FailingOpen {
                    shared.fallbacks.fetch_add(1, Ordering::Relaxed);
                    #[cfg(feature = "metrics")]
                    crate::metrics::fleet_failing_open(shared.options.name(), true);
                    say(
                        &shared,
                        &format!(
                            "failed ({error}): failing open to this process's local budget \
                             until it answers (calls do not wait for it)"
                        ),
                    );
                }
            }
        }
        let wake = Arc::clone(&shared);
        drop(shared);
        let _ = tokio::time::timeout(refresh, wake.wake.notified()).await;
    }
}

async fn connect(
    client: &redis::Client,
    timeout: Duration,
) -> Result<redis::aio::MultiplexedConnection, String> {
    let limit = timeout.max(CONNECT_TIMEOUT_FLOOR);
    match tokio::time::timeout(limit, client.get_multiplexed_async_connection()).await {
        Ok(Ok(conn)) => Ok(conn),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!("no connection within {limit:?}")),
    }
}

/// The lease to hold: `clamp(ceil(ratio × calls per refresh + min_per_sec ×
/// refresh), 1, max_lease)` (the module doc's bound rests on it).
fn lease_target(shared: &Shared, calls_per_refresh: u64) -> u64 {
    let refresh = shared.options.refresh().as_secs_f64();
    let want = shared.ratio * calls_per_refresh as f64 + shared.min_per_sec * refresh;
    let cap = u64::from(shared.options.max_lease());
    // `as` saturates a huge or NaN float; the clamp then bounds it.
    (want.ceil() as u64).clamp(1, cap)
}

/// One line on stderr and, with the `tracing` feature, a warning event.
fn say(shared: &Shared, what: &str) {
    let message = format!(
        "retry: fleet budget `{}`: Redis at {} {what}",
        shared.options.name(),
        shared.options.store_shown()
    );
    say_warning!(
        message,
        budget = shared.options.name(),
        state = shared.state().as_str()
    );
}
