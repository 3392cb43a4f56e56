//! The round-trip thread: one per fleet link (a budget's or a breaker's),
//! with its own single-threaded tokio runtime, so a fleet control works
//! from any caller (async or blocking, on any runtime or none) and no call
//! ever waits for Redis. What a round sends and what it does with the
//! answer is the link's [`Round`]; connecting, timing out, failing open and
//! resuming (and saying so) are the same for every link and live here.

use super::link::{FleetState, Health};
use std::sync::{Arc, Weak};
use std::time::Duration;

/// A connection attempt may take longer than a round trip (a handshake of
/// its own), but no longer than this, so an unreachable store is noticed.
const CONNECT_TIMEOUT_FLOOR: Duration = Duration::from_millis(100);

/// One kind of fleet link: the script it runs every `refresh` and what it
/// does with the answer.
pub(crate) trait Round: Send + Sync + 'static {
    /// What a round took from the host's pending counts, given back to
    /// [`Round::unanswered`] when the round fails.
    type Taken: Send;
    /// The script's reply.
    type Reply: redis::FromRedisValue + Send;
    /// The Lua script's source.
    const SCRIPT: &'static str;
    /// What the link shares, for messages: "budget" or "breaker".
    const WHAT: &'static str;

    /// The link's health.
    fn health(&self) -> &Health;
    /// The Redis key the script runs on.
    fn key(&self) -> String;
    /// Takes the host's pending counts and adds the script's arguments.
    fn take(&self, invocation: &mut redis::ScriptInvocation<'_>) -> Self::Taken;
    /// Applies Redis's answer to the round.
    fn answered(&self, taken: Self::Taken, reply: Self::Reply);
    /// The round failed: what it took is given back or dropped.
    fn unanswered(&self, taken: Self::Taken);
    /// Says `message` (the link fell back when `failing`, else resumed),
    /// with the link's tracing fields and metrics.
    fn said(&self, failing: bool, message: &str);
}

/// Starts the round-trip thread of `shared`; it stops once `shared` is dropped.
pub(crate) fn spawn<R: Round>(shared: &Arc<R>) -> std::io::Result<()> {
    let name = format!("retry-fleet-{}", shared.health().options.name());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let weak = Arc::downgrade(shared);
    std::thread::Builder::new()
        .name(name)
        .spawn(move || runtime.block_on(run(weak)))?;
    Ok(())
}

/// The error of a link whose thread could not start, naming the key `store`.
pub(crate) fn unstarted(
    kind: crate::PolicyErrorKind,
    name: Option<&str>,
    store: retrykit_schema::keys::Key,
    error: &std::io::Error,
) -> crate::PolicyError {
    let fix = format!("the thread could not start ({error}): free some resources");
    let rule = "needs a background thread to reach the store";
    let problem = crate::Problem::new(store.name(), rule, fix);
    crate::PolicyError::new(kind, name, vec![problem])
}

/// Round trips until the link is dropped.
async fn run<R: Round>(weak: Weak<R>) {
    let Some(shared) = weak.upgrade() else { return };
    let options = &shared.health().options;
    // Checked when the options were validated; a failure here is reported
    // like any unreachable store.
    let client = redis::Client::open(options.store());
    let script = redis::Script::new(R::SCRIPT);
    let key = shared.key();
    let (refresh, timeout) = (options.refresh(), options.timeout());
    let mut connection = None;
    drop(shared);
    loop {
        let Some(shared) = weak.upgrade() else { return };
        let mut invocation = script.key(&key);
        let taken = shared.take(&mut invocation);
        let outcome = match (&client, connection.take()) {
            (Ok(_), Some(conn)) => Ok(conn),
            (Ok(client), None) => connect(client, timeout).await,
            (Err(e), _) => Err(e.to_string()),
        };
        let outcome = match outcome {
            Ok(mut conn) => {
                match tokio::time::timeout(timeout, invocation.invoke_async::<R::Reply>(&mut conn))
                    .await
                {
                    Ok(Ok(reply)) => {
                        connection = Some(conn);
                        Ok(reply)
                    }
                    Ok(Err(e)) => Err(e.to_string()),
                    Err(_) => Err(format!(
                        "no answer within {}",
                        retrykit_schema::duration::round_duration(timeout)
                    )),
                }
            }
            Err(e) => Err(e),
        };
        let health = shared.health();
        match outcome {
            Ok(reply) => {
                shared.answered(taken, reply);
                if health.set_state(FleetState::Fleet) == FleetState::FailingOpen {
                    say(
                        &*shared,
                        false,
                        &format!("answers again: the fleet {} resumes", R::WHAT),
                    );
                }
            }
            Err(error) => {
                shared.unanswered(taken);
                if health.set_state(FleetState::FailingOpen) != FleetState::FailingOpen {
                    say(
                        &*shared,
                        true,
                        &format!(
                            "failed ({error}): failing open to this process's local {} \
                             until it answers (calls do not wait for it)",
                            R::WHAT
                        ),
                    );
                }
            }
        }
        let wake = Arc::clone(&shared);
        drop(shared);
        let _ = tokio::time::timeout(refresh, wake.health().wake.notified()).await;
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
        Err(_) => Err(format!(
            "no connection within {}",
            retrykit_schema::duration::round_duration(limit)
        )),
    }
}

/// One line on stderr and, with the `tracing` feature, a warning event.
fn say<R: Round>(shared: &R, failing: bool, what: &str) {
    let options = &shared.health().options;
    let message = format!(
        "retry: fleet {} `{}`: Redis at {} {what}",
        R::WHAT,
        options.name(),
        options.store_shown()
    );
    shared.said(failing, &message);
}
