//! The relay: claims due events, publishes each with short retries, and
//! writes back the long backoff the core's stateful oracle decides. It makes
//! no retry decision of its own about events.
//!
//! When the `publish` policy's circuit breaker refuses a publish (too many
//! recent calls failed), nothing was sent and the event is not judged: it is
//! handed back, due when the breaker lets calls through again
//! ([`BreakerOpen::retry_in`](retrykit_core::breaker::BreakerOpen::retry_in)).
//! A refusal never dead-letters an event nor counts as a broker failure.

use super::broker::{BrokerError, FakeBroker};
use super::database::{RelayError, default_database_retry, retry_database};
use super::event::{Delivery, EventRow, EventState, duration_ms, now_ms};
use super::stats::PassStats;
use super::store::{OutboxStore, StoreError};
use retrykit_core::{Oracle, Policy, Verdict, registry, retry};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// How long a claim lasts unless [`Relay::lease`] says otherwise.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(30);

/// What one publish sent: the calls that reached the broker and its last
/// error (an attempt the breaker refused is never made, so is in neither).
#[derive(Default)]
struct Sent {
    calls: AtomicU32,
    last_error: Mutex<Option<BrokerError>>,
}

/// Publish attempts the `publish` policy's chaos failed in this process
/// (docs/chaos.md): none were sent.
pub static CHAOS_FAULTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Counts an injected fault that a retry follows (one that ends the
/// publish is counted by [`Relay::attempt`]).
fn count_chaos(event: &retrykit_core::RetryEvent<'_, BrokerError>) {
    if event.injected {
        CHAOS_FAULTS.fetch_add(1, Ordering::Relaxed);
    }
}

/// Publishes one event, with the `publish` policy's short retries (and its
/// circuit breaker, if it names one) around it; notes each call in `sent`.
#[retry(policy = "publish", on_retry = count_chaos)]
async fn publish(broker: &FakeBroker, event: &EventRow, sent: &Sent) -> Result<(), BrokerError> {
    sent.calls.fetch_add(1, Ordering::Relaxed);
    let answer = broker.publish(&event.event_id, &event.payload).await;
    if let Err(e) = &answer
        && let Ok(mut last) = sent.last_error.lock()
    {
        *last = Some(e.clone());
    }
    answer
}

/// What came of one scheduled attempt.
enum Outcome {
    /// The broker was called: write back what came of it.
    Attempted(Delivery),
    /// The circuit breaker refused the publish before any call was sent:
    /// hand the event back, due again at `until_ms`.
    HeldBack { until_ms: i64 },
}

/// The outbox relay, over any [`OutboxStore`].
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use examples::outbox::{FakeBroker, Relay, SqliteStore};
/// use retrykit_core::{Policy, Registry, registry};
/// registry::install(Registry::builder()
///     .policy("publish", Policy::default())
///     .policy("outbox", Policy::default())
///     .build());
/// let store = SqliteStore::open_in_memory().unwrap();
/// store.place_order("kettle").unwrap();
/// let broker = std::sync::Arc::new(FakeBroker::in_memory(Default::default()).unwrap());
/// let relay = Relay::new(store, broker);
/// assert_eq!(relay.pass().await.unwrap().published, 1);
/// # }
/// ```
pub struct Relay<S> {
    store: S,
    broker: Arc<FakeBroker>,
    batch: u32,
    name: String,
    lease: Duration,
    database_retry: Policy,
}

impl<S: OutboxStore> Relay<S> {
    /// A relay over `store` publishing to `broker`: 16 events per claim,
    /// leases of [`DEFAULT_LEASE`], a name unique to this process.
    ///
    /// ```
    /// let store = examples::outbox::SqliteStore::open_in_memory().unwrap();
    /// let broker = std::sync::Arc::new(examples::outbox::FakeBroker::in_memory(Default::default()).unwrap());
    /// let relay = examples::outbox::Relay::new(store, broker);
    /// assert!(relay.name().starts_with("relay-"));
    /// ```
    pub fn new(store: S, broker: Arc<FakeBroker>) -> Self {
        Relay {
            store,
            broker,
            batch: 16,
            name: format!("relay-{}-{:08x}", std::process::id(), unique_suffix()),
            lease: DEFAULT_LEASE,
            database_retry: default_database_retry(),
        }
    }

    /// Names the relay in leases and logs. Each running relay needs its own
    /// name: two processes with one name could write over each other's claims.
    ///
    /// ```
    /// # let store = examples::outbox::SqliteStore::open_in_memory().unwrap();
    /// # let broker = std::sync::Arc::new(examples::outbox::FakeBroker::in_memory(Default::default()).unwrap());
    /// let relay = examples::outbox::Relay::new(store, broker).named("relay-1");
    /// assert_eq!(relay.name(), "relay-1");
    /// ```
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// How long a claim holds its events. A relay that dies keeps them that
    /// long; a publish should fit in half of it (see [`lease_warning`](Self::lease_warning)).
    ///
    /// ```
    /// # let store = examples::outbox::SqliteStore::open_in_memory().unwrap();
    /// # let broker = std::sync::Arc::new(examples::outbox::FakeBroker::in_memory(Default::default()).unwrap());
    /// let relay = examples::outbox::Relay::new(store, broker).lease(std::time::Duration::from_secs(5));
    /// assert_eq!(relay.lease_length(), std::time::Duration::from_secs(5));
    /// ```
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    /// Events claimed at once (at least 1).
    ///
    /// ```
    /// # let store = examples::outbox::SqliteStore::open_in_memory().unwrap();
    /// # let broker = std::sync::Arc::new(examples::outbox::FakeBroker::in_memory(Default::default()).unwrap());
    /// let _ = examples::outbox::Relay::new(store, broker).batch(4);
    /// ```
    pub fn batch(mut self, events: u32) -> Self {
        self.batch = events.max(1);
        self
    }

    /// The relay's name.
    ///
    /// ```
    /// # let store = examples::outbox::SqliteStore::open_in_memory().unwrap();
    /// # let broker = std::sync::Arc::new(examples::outbox::FakeBroker::in_memory(Default::default()).unwrap());
    /// assert!(!examples::outbox::Relay::new(store, broker).name().is_empty());
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The lease length.
    ///
    /// ```
    /// # let store = examples::outbox::SqliteStore::open_in_memory().unwrap();
    /// # let broker = std::sync::Arc::new(examples::outbox::FakeBroker::in_memory(Default::default()).unwrap());
    /// let relay = examples::outbox::Relay::new(store, broker);
    /// assert_eq!(relay.lease_length(), examples::outbox::DEFAULT_LEASE);
    /// ```
    pub fn lease_length(&self) -> Duration {
        self.lease
    }

    /// The store, for progress and reports.
    ///
    /// ```
    /// let store = examples::outbox::SqliteStore::open_in_memory().unwrap();
    /// let broker = std::sync::Arc::new(examples::outbox::FakeBroker::in_memory(Default::default()).unwrap());
    /// let relay = examples::outbox::Relay::new(store, broker);
    /// assert_eq!(relay.store().counts(0).unwrap().total(), 0);
    /// ```
    pub fn store(&self) -> &S {
        &self.store
    }

    /// What would make the lease misbehave, said before the relay starts: a
    /// publish is started only while half its lease is left, so the
    /// `publish` policy's deadline must fit in that half, or a slow publish
    /// may outlive its lease and be made again by another relay.
    ///
    /// ```
    /// use examples::outbox::{FakeBroker, Relay, SqliteStore};
    /// use retrykit_core::{Policy, Registry, registry};
    /// use std::time::Duration;
    /// let publish = Policy::builder().deadline(Some(Duration::from_secs(10))).build().unwrap();
    /// registry::install(Registry::builder().policy("publish", publish).build());
    /// let broker = std::sync::Arc::new(FakeBroker::in_memory(Default::default()).unwrap());
    /// let relay = Relay::new(SqliteStore::open_in_memory().unwrap(), broker).lease(Duration::from_secs(4));
    /// assert!(relay.lease_warning().unwrap().contains("--lease 20s"));
    /// ```
    pub fn lease_warning(&self) -> Option<String> {
        let publish = registry::policy("publish")?;
        let half = self.lease / 2;
        match publish.deadline() {
            Some(deadline) if deadline <= half => None,
            Some(deadline) => Some(format!(
                "the lease ({lease:?}) is shorter than twice the `publish` policy's deadline \
                 ({deadline:?}): a slow publish may outlive its lease, and another relay would \
                 publish the event again; use --lease {fix}s or more",
                lease = self.lease,
                fix = (deadline * 2).as_secs_f64().ceil()
            )),
            None => Some(format!(
                "the `publish` policy has no deadline, so a publish may outlive its lease ({:?}) \
                 and another relay would publish the event again; give `publish` a deadline \
                 of at most half the lease",
                self.lease
            )),
        }
    }

    /// One pass: claims due events (up to the batch size) and publishes each,
    /// or gives it its next attempt time. The policies are looked up once
    /// per pass, so a reloaded config applies from the next pass on.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// # use retrykit_core::{Policy, Registry, registry};
    /// # registry::install(Registry::builder().policy("publish", Policy::default()).policy("outbox", Policy::default()).build());
    /// let store = examples::outbox::SqliteStore::open_in_memory().unwrap();
    /// let broker = std::sync::Arc::new(examples::outbox::FakeBroker::in_memory(Default::default()).unwrap());
    /// let relay = examples::outbox::Relay::new(store, broker);
    /// assert_eq!(relay.pass().await.unwrap().handled(), 0);
    /// # }
    /// ```
    pub async fn pass(&self) -> Result<PassStats, RelayError> {
        if registry::policy("publish").is_none() {
            return Err(RelayError::MissingPolicy("publish"));
        }
        let outbox_policy =
            registry::policy("outbox").ok_or(RelayError::MissingPolicy("outbox"))?;
        let mut stats = PassStats::default();
        let claimed = self
            .store
            .claim(&self.name, now_ms(), self.lease, self.batch)
            .await?;
        let mut claimed = claimed.into_iter();
        while let Some(event) = claimed.next() {
            if !self.time_to_publish(&event) {
                // Later events of the batch have even less time: hand them all back.
                for event in std::iter::once(event).chain(claimed.by_ref()) {
                    self.store.release(&event).await?;
                    stats.released += 1;
                }
                break;
            }
            let outcome = self.attempt(&event, &outbox_policy).await;
            let written = match &outcome {
                Outcome::Attempted(delivery) => {
                    stats.calls += delivery.calls;
                    self.write_back(&event, || self.store.record(&event, delivery))
                        .await?
                }
                Outcome::HeldBack { until_ms } => {
                    let postpone = || self.store.postpone(&event, *until_ms);
                    self.write_back(&event, postpone).await?
                }
            };
            if !written {
                stats.lease_lost += 1;
                eprintln!(
                    "warning: {}: the lease on {} ran out and another relay claimed it; \
                     its outcome was not written and it will be published again",
                    self.name, event.event_id
                );
                continue;
            }
            match outcome {
                Outcome::HeldBack { .. } => stats.held_back += 1,
                Outcome::Attempted(delivery) => match delivery.state {
                    EventState::Published => stats.published += 1,
                    EventState::Pending => stats.rescheduled += 1,
                    EventState::Dead => stats.dead += 1,
                },
            }
        }
        Ok(stats)
    }

    /// Whether half the event's lease is left: enough for a publish within
    /// the `publish` deadline (see [`lease_warning`](Self::lease_warning)).
    fn time_to_publish(&self, event: &EventRow) -> bool {
        let left = event.lease_until_ms.unwrap_or(0).saturating_sub(now_ms());
        left >= duration_ms(self.lease / 2)
    }

    /// One scheduled attempt: publish, then ask the oracle what follows.
    async fn attempt(&self, event: &EventRow, outbox_policy: &Policy) -> Outcome {
        let sent = Sent::default();
        let mut oracle = Oracle::resume(outbox_policy, event.oracle);
        // The deadline counts from the start of the first attempt.
        oracle.attempt(SystemTime::now());
        // No transaction or lock is held while publishing.
        let outcome = publish(&self.broker, event, &sent).await;
        let calls = sent.calls.load(Ordering::Relaxed);
        let (now, wall) = (now_ms(), SystemTime::now());
        let (err, not_before) = match outcome {
            Ok(()) => {
                oracle.success(wall);
                return Outcome::Attempted(Delivery::published(calls, oracle.state(), now));
            }
            Err(BrokerError::BreakerOpen(open)) => {
                let until_ms = now.saturating_add(duration_ms(open.retry_in()).max(1));
                match refused_after(&sent, calls) {
                    // Nothing was sent: not now, and nothing to judge.
                    None => return Outcome::HeldBack { until_ms },
                    // Calls were sent and failed, then the breaker opened:
                    // the broker's answer is judged, as without a breaker,
                    // and the event waits at least for the breaker.
                    Some(answered) => (answered, Some((open, until_ms))),
                }
            }
            Err(err) => {
                if matches!(err, BrokerError::Injected(_)) {
                    CHAOS_FAULTS.fetch_add(1, Ordering::Relaxed);
                }
                (err, None)
            }
        };
        // The engine's kernel decides: the class against the policy's
        // `retry_on`, the broker's hint up to `max_retry_after`, attempts,
        // deadline and budget.
        let refused = not_before
            .as_ref()
            .map_or_else(String::new, |(open, _)| format!("; then {open}"));
        let delivery = match oracle.failure_of(&err, wall) {
            Verdict::Wait(wait) => {
                let next = now.saturating_add(duration_ms(wait));
                let next = not_before.map_or(next, |(_, until_ms)| next.max(until_ms));
                Delivery {
                    state: EventState::Pending,
                    calls,
                    oracle: oracle.state(),
                    next_attempt_ms: next,
                    waited_ms: next - now,
                    error: Some(format!("{err}{refused}")),
                }
            }
            Verdict::GiveUp(ending) => Delivery {
                state: EventState::Dead,
                calls,
                oracle: event.oracle,
                next_attempt_ms: now,
                waited_ms: 0,
                error: Some(format!("{err} (gave up: {ending}){refused}")),
            },
        };
        Outcome::Attempted(delivery)
    }

    /// Writes an outcome back with `write` (`Ok(false)`: the lease was no
    /// longer this claim's), riding out a database that is briefly away (a
    /// restart, a lost connection) for as long as the lease lasts: after it,
    /// another relay may have claimed the event and the write is refused
    /// anyway.
    async fn write_back<F, Fut>(&self, event: &EventRow, mut write: F) -> Result<bool, StoreError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<bool, StoreError>>,
    {
        let left = event.lease_until_ms.unwrap_or(0).saturating_sub(now_ms());
        let left = Duration::from_millis(u64::try_from(left).unwrap_or(0));
        let until_lease_ends = match self
            .database_retry
            .to_builder()
            .deadline(Some(left))
            .build()
        {
            Ok(policy) if !left.is_zero() => policy,
            // The lease is over: one try, which the store refuses unless no
            // other relay has claimed the event since.
            _ => return write().await,
        };
        let what = "writing an outcome back";
        retry_database(&until_lease_ends, &self.name, what, write).await
    }

    /// Runs passes until no event is pending, calling `progress` after each
    /// pass; sleeps until the next event is due in between (never longer
    /// than `max_idle`). A database that goes away is waited for (with the
    /// relay's database retry policy, a warning for each retry); the relay
    /// stops with the error once that policy gives up.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// # use retrykit_core::{Policy, Registry, registry};
    /// # registry::install(Registry::builder().policy("publish", Policy::default()).policy("outbox", Policy::default()).build());
    /// let store = examples::outbox::SqliteStore::open_in_memory().unwrap();
    /// store.place_order("tea").unwrap();
    /// let broker = std::sync::Arc::new(examples::outbox::FakeBroker::in_memory(Default::default()).unwrap());
    /// let relay = examples::outbox::Relay::new(store, broker);
    /// relay.run_until_idle(std::time::Duration::from_millis(5), |_| {}).await.unwrap();
    /// assert_eq!(relay.store().counts(examples::outbox::now_ms()).unwrap().published, 1);
    /// # }
    /// ```
    pub async fn run_until_idle(
        &self,
        max_idle: Duration,
        mut progress: impl FnMut(&PassStats),
    ) -> Result<(), RelayError> {
        loop {
            let stats = self.with_database(|| self.pass(), "a pass").await?;
            progress(&stats);
            // Let the rest of the thread (a progress display) run between
            // passes, even when no publish had to wait.
            tokio::task::yield_now().await;
            let next = self
                .with_database(
                    || async { Ok::<_, RelayError>(self.store.next_due().await?) },
                    "a pass",
                )
                .await?;
            let Some(next) = next else {
                return Ok(());
            };
            let until =
                Duration::from_millis(u64::try_from(next.saturating_sub(now_ms())).unwrap_or(0));
            // Nothing claimed while events are pending: other relays hold
            // them. Poll gently rather than spin until their leases end.
            let until = if stats.claimed() == 0 {
                until.max(max_idle / 4)
            } else {
                until
            };
            tokio::time::sleep(until.min(max_idle)).await;
        }
    }

    /// Runs `op`, retried under the database retry policy while the
    /// database is unavailable.
    async fn with_database<T, F, Fut>(&self, op: F, what: &str) -> Result<T, RelayError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, RelayError>>,
    {
        retry_database(&self.database_retry, &self.name, what, op).await
    }
}

/// The broker's last answer when a publish the breaker ended had sent
/// `calls` first (failed, retried, then refused), or `None`; a call cut off
/// by `attempt_timeout` left none and stands as [`BrokerError::TimedOut`].
fn refused_after(sent: &Sent, calls: u32) -> Option<BrokerError> {
    if calls == 0 {
        return None;
    }
    let last = sent.last_error.lock().ok().and_then(|mut e| e.take());
    Some(last.unwrap_or(BrokerError::TimedOut))
}

/// A random number, so that relay names differ across hosts too.
fn unique_suffix() -> u32 {
    use rand::{Rng, SeedableRng};
    rand::rngs::SmallRng::from_os_rng().random()
}
