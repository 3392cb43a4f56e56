//! The fleet's clients: each one a tokio task that calls the server through
//! the engine's own loop ([`Retry::call_with_report`]) under the named
//! policy, seeded as the simulator seeds the same client, so that the real
//! client and its simulated twin draw the same jitter.
//!
//! A client process opens its connections first (each shared by several
//! clients: see [`Lane`]), says it is ready, and then every client makes its
//! first call at the common start instant the coordinator sends.

use super::wire::Lane;
use crate::http::HttpError;
use retrykit_core::breaker::BreakerOpen;
use retrykit_core::{
    CarriesBreakerOpen, Class, Classify, Ending, Hooks, Policy, Retry, RetryEvent,
};
use retrykit_sim::client_seed;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

/// Connections opened at once while the fleet gets ready: well under the
/// server's accept backlog.
const CONNECTING_AT_ONCE: usize = 256;

/// How one client's call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ClientOutcome {
    /// The client's index in the fleet (its jitter seed's index).
    pub(crate) index: u32,
    /// How its call ended.
    pub(crate) finish: Finish,
    /// When, in µs after the common start.
    pub(crate) after_us: u64,
    /// Calls it made, the first included.
    pub(crate) attempts: u32,
}

/// How a client's call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Finish {
    /// A call got 200.
    Succeeded,
    /// The policy gave up.
    GaveUp,
    /// The run's time limit cut it short.
    Unfinished,
}

impl Finish {
    /// Its name on the wire between processes.
    pub(crate) const fn as_str(self) -> &'static str {
        match self {
            Finish::Succeeded => "succeeded",
            Finish::GaveUp => "gave_up",
            Finish::Unfinished => "unfinished",
        }
    }
}

impl ClientOutcome {
    /// The line a client process prints for it.
    pub(crate) fn to_line(self) -> String {
        format!(
            "client {} {} {} {}",
            self.index,
            self.finish.as_str(),
            self.after_us,
            self.attempts
        )
    }

    /// Reads a line printed by [`to_line`](Self::to_line).
    pub(crate) fn parse(line: &str) -> Option<Self> {
        let mut words = line.strip_prefix("client ")?.split(' ');
        let index = words.next()?.parse().ok()?;
        let finish = match words.next()? {
            "succeeded" => Finish::Succeeded,
            "gave_up" => Finish::GaveUp,
            "unfinished" => Finish::Unfinished,
            _ => return None,
        };
        let after_us = words.next()?.parse().ok()?;
        let attempts = words.next()?.parse().ok()?;
        words.next().is_none().then_some(ClientOutcome {
            index,
            finish,
            after_us,
            attempts,
        })
    }
}

/// Opens `count` lanes to `addr`, at most [`CONNECTING_AT_ONCE`] at a
/// time, each writing at most one request per `pace` when given.
pub(crate) async fn connect_all(
    addr: SocketAddr,
    count: u32,
    pace: Option<Duration>,
) -> std::io::Result<Vec<Lane>> {
    let gate = Arc::new(Semaphore::new(CONNECTING_AT_ONCE));
    let mut pending = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let gate = gate.clone();
        pending.push(tokio::spawn(async move {
            let _permit = gate.acquire_owned().await;
            Lane::open(addr, pace).await
        }));
    }
    let mut connections = Vec::with_capacity(count as usize);
    for task in pending {
        connections.push(task.await.map_err(std::io::Error::other)??);
    }
    Ok(connections)
}

/// A client's failed attempt: the server's answer, or a refusal by the
/// policy's circuit breaker (nothing was sent). `HttpError` alone cannot
/// stand for a refusal, and then the engine sends the attempt anyway.
#[derive(Debug)]
pub(crate) enum CallError {
    /// The server answered with an error, or the connection failed.
    Http(HttpError),
    /// The breaker refused the attempt.
    Refused(BreakerOpen),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Http(e) => e.fmt(f),
            CallError::Refused(open) => open.fmt(f),
        }
    }
}

impl std::error::Error for CallError {}

impl Classify for CallError {
    fn class(&self) -> Class {
        match self {
            CallError::Http(e) => e.class(),
            // Never sent, so never counted: the loop waits for the breaker.
            CallError::Refused(_) => Class::TRANSIENT,
        }
    }

    fn retry_after(&self) -> Option<Duration> {
        match self {
            CallError::Http(e) => e.retry_after(),
            CallError::Refused(_) => None,
        }
    }

    fn from_breaker_open(open: BreakerOpen) -> Option<Self> {
        Some(CallError::Refused(open))
    }
}

impl CarriesBreakerOpen for CallError {}

/// When one client's next call is due: the loop's `on_retry` hook turns
/// each retry's wait into this instant, which the next call carries so the
/// server can tell a late timer.
struct DueInstant {
    origin: Instant,
    due_us: AtomicU64,
}

impl DueInstant {
    fn on_retry(&self, event: &RetryEvent<'_, CallError>) {
        let due = Instant::now() + event.wait;
        let us = due.saturating_duration_since(self.origin).as_micros();
        self.due_us
            .store(u64::try_from(us).unwrap_or(u64::MAX), Ordering::Relaxed);
    }
}

/// One client's whole call: waits for the start, then calls until the
/// policy says stop or `limit` after the start passes.
pub(crate) async fn run_client(
    policy: Arc<Policy>,
    seed: u64,
    index: u32,
    lane: Lane,
    origin: Instant,
    limit: Duration,
) -> ClientOutcome {
    tokio::time::sleep_until(origin.into()).await;
    let due = DueInstant {
        origin,
        due_us: AtomicU64::new(0),
    };
    let attempts = AtomicU32::new(0);
    let call = Retry::new(&policy)
        .seed(client_seed(seed, u64::from(index)))
        .hooks(Hooks::new().on_retry(|e: &RetryEvent<'_, CallError>| due.on_retry(e)))
        .call_with_report(|| {
            let attempt = attempts.fetch_add(1, Ordering::Relaxed) + 1;
            let due_us = due.due_us.load(Ordering::Relaxed);
            let lane = &lane;
            async move { lane.call(attempt, due_us).await.map_err(CallError::Http) }
        });
    let finish = match tokio::time::timeout_at((origin + limit).into(), call).await {
        Ok((_, report)) if report.ending == Ending::Success => Finish::Succeeded,
        Ok(_) => Finish::GaveUp,
        Err(_) => Finish::Unfinished,
    };
    let after = Instant::now().saturating_duration_since(origin).as_micros();
    ClientOutcome {
        index,
        finish,
        after_us: u64::try_from(after).unwrap_or(u64::MAX),
        attempts: attempts.load(Ordering::Relaxed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::server::{FleetServer, Service};

    #[test]
    fn an_outcome_survives_its_line_and_a_bad_line_is_refused() {
        for finish in [Finish::Succeeded, Finish::GaveUp, Finish::Unfinished] {
            let o = ClientOutcome {
                index: 3,
                finish,
                after_us: 1500,
                attempts: 2,
            };
            assert_eq!(ClientOutcome::parse(&o.to_line()), Some(o));
        }
        assert_eq!(Finish::GaveUp.as_str(), "gave_up");
        for bad in [
            "client 3 gave_up 1500",
            "client 3 gave_up 1500 2 9",
            "client 3 lost 1500 2",
            "client -3 gave_up 1500 2",
            "done",
        ] {
            assert_eq!(ClientOutcome::parse(bad), None, "{bad}");
        }
    }

    /// A policy that retries at once, a millisecond apart, three calls in all.
    fn three_quick_calls() -> Arc<Policy> {
        let policy = Policy::builder()
            .backoff(retrykit_core::Backoff::Constant)
            .base(Duration::from_millis(1))
            .cap(Duration::from_millis(1))
            .jitter(retrykit_core::Jitter::None)
            .max_attempts(3)
            .build()
            .unwrap();
        Arc::new(policy)
    }

    #[tokio::test]
    async fn clients_retry_through_shared_lanes_until_the_policy_gives_up() {
        // One call per one-minute tick: the first client through gets it,
        // the other is throttled on every call and gives up after three.
        let service = Service {
            tick: Duration::from_secs(60),
            outage: Duration::ZERO,
            capacity: 1,
            ticks: 1,
            clients: 2,
        };
        let server = FleetServer::bind(service, Duration::from_millis(1))
            .await
            .unwrap();
        let lanes = connect_all(server.addr(), 2, None).await.unwrap();
        assert_eq!(lanes.len(), 2);
        let origin = Instant::now();
        server.start(origin);
        let policy = three_quick_calls();
        let limit = Duration::from_secs(10);
        let first = run_client(policy.clone(), 0, 0, lanes[0].clone(), origin, limit).await;
        let second = run_client(policy, 0, 1, lanes[1].clone(), origin, limit).await;
        assert_eq!(
            (first.index, first.finish, first.attempts),
            (0, Finish::Succeeded, 1)
        );
        assert_eq!(
            (second.index, second.finish, second.attempts),
            (1, Finish::GaveUp, 3)
        );
        assert!(second.after_us >= 2_000, "two 1 ms waits: {second:?}");
        let counts = server.counts();
        assert_eq!((counts.first_calls, counts.retries), (vec![2], vec![2]));
    }

    /// A server down for a minute, started now, and one lane to it.
    async fn down_for_a_minute() -> (FleetServer, Lane, Instant) {
        let service = Service {
            tick: Duration::from_secs(60),
            outage: Duration::from_secs(60),
            capacity: 1,
            ticks: 1,
            clients: 2,
        };
        let server = FleetServer::bind(service, Duration::from_millis(1))
            .await
            .unwrap();
        let lane = Lane::open(server.addr(), None).await.unwrap();
        let origin = Instant::now();
        server.start(origin);
        (server, lane, origin)
    }

    /// With `HttpError` alone the engine sent refused attempts anyway.
    #[tokio::test]
    async fn an_open_breaker_keeps_a_client_s_attempt_from_the_server() {
        let (server, lane, origin) = down_for_a_minute().await;
        let minute = Duration::from_secs(60);
        let breaker = retrykit_core::breaker::CircuitBreaker::builder()
            .min_calls(1)
            .open_for(minute)
            .max_open_for(minute)
            .build()
            .unwrap();
        let policy = three_quick_calls()
            .to_builder()
            .deadline(Some(Duration::from_secs(5)))
            .breaker(Some(Arc::new(breaker)))
            .build()
            .unwrap();
        let policy = Arc::new(policy);
        let limit = Duration::from_secs(10);
        // The first client's failed call opens the breaker for a minute;
        // its retries and the second client's call end at once, never sent.
        let first = run_client(policy.clone(), 0, 0, lane.clone(), origin, limit).await;
        let second = run_client(policy, 0, 1, lane, origin, limit).await;
        assert_eq!(
            (first.finish, first.attempts),
            (Finish::GaveUp, 1),
            "{first:?}"
        );
        assert_eq!(
            (second.finish, second.attempts),
            (Finish::GaveUp, 0),
            "{second:?}"
        );
        let counts = server.counts();
        assert_eq!((counts.first_calls, counts.retries), (vec![1], vec![0]));
    }

    #[tokio::test]
    async fn a_client_still_retrying_at_the_limit_is_unfinished() {
        let (_server, lane, origin) = down_for_a_minute().await;
        let endless = Policy::builder()
            .base(Duration::from_millis(1))
            .cap(Duration::from_millis(1))
            .max_attempts(0)
            .deadline(Some(Duration::from_secs(60)))
            .build()
            .unwrap();
        let limit = Duration::from_millis(5);
        let o = run_client(Arc::new(endless), 0, 0, lane, origin, limit).await;
        assert_eq!(o.finish, Finish::Unfinished, "{o:?}");
        assert!(o.attempts >= 1 && o.after_us >= 5_000, "{o:?}");
    }
}
