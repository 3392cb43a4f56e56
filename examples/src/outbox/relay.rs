//! The relay: publishes due events with short retries, and schedules the
//! long backoff in the table with the core's stateful oracle.

use super::broker::{BrokerError, FakeBroker};
use super::store::{EventRow, EventState, Store, now_ms};
use retry_core::{Oracle, Verdict, registry, retry};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, SystemTime};

/// What one pass over the due events did.
///
/// ```
/// let s = examples::outbox::PassStats::default();
/// assert_eq!(s.handled(), 0);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PassStats {
    /// Events published.
    pub published: u32,
    /// Events that failed and were given a next attempt time.
    pub rescheduled: u32,
    /// Events dead-lettered.
    pub dead: u32,
    /// Publish calls made, short retries included.
    pub calls: u32,
}

impl PassStats {
    /// Events handled in the pass.
    ///
    /// ```
    /// let s = examples::outbox::PassStats { published: 1, rescheduled: 2, dead: 3, calls: 9 };
    /// assert_eq!(s.handled(), 6);
    /// ```
    pub const fn handled(&self) -> u32 {
        self.published + self.rescheduled + self.dead
    }
}

/// Publishes one event, with the `publish` policy's short retries around
/// it; counts every call into `calls`.
#[retry(policy = "publish")]
async fn publish(
    broker: &FakeBroker,
    event: &EventRow,
    calls: &AtomicU32,
) -> Result<(), BrokerError> {
    calls.fetch_add(1, Ordering::Relaxed);
    broker.publish(&event.event_id, &event.payload).await
}

/// The outbox relay.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use examples::outbox::{FakeBroker, Relay, Store};
/// use retry_core::{Policy, Registry, registry};
/// registry::install(Registry::builder()
///     .policy("publish", Policy::default())
///     .policy("outbox", Policy::default())
///     .build());
/// let store = Store::open_in_memory().unwrap();
/// store.place_order("kettle").unwrap();
/// let broker = std::sync::Arc::new(FakeBroker::in_memory(Default::default()).unwrap());
/// let relay = Relay::new(store, broker);
/// assert_eq!(relay.pass().await.unwrap().published, 1);
/// # }
/// ```
pub struct Relay {
    store: Store,
    broker: Arc<FakeBroker>,
    batch: u32,
}

impl Relay {
    /// A relay over `store` publishing to `broker`, 64 events per pass.
    ///
    /// ```
    /// let store = examples::outbox::Store::open_in_memory().unwrap();
    /// let broker = std::sync::Arc::new(examples::outbox::FakeBroker::in_memory(Default::default()).unwrap());
    /// let _ = examples::outbox::Relay::new(store, broker);
    /// ```
    pub fn new(store: Store, broker: Arc<FakeBroker>) -> Self {
        Relay {
            store,
            broker,
            batch: 64,
        }
    }

    /// The store, for progress and reports.
    ///
    /// ```
    /// let store = examples::outbox::Store::open_in_memory().unwrap();
    /// let broker = std::sync::Arc::new(examples::outbox::FakeBroker::in_memory(Default::default()).unwrap());
    /// let relay = examples::outbox::Relay::new(store, broker);
    /// assert_eq!(relay.store().counts(0).unwrap().total(), 0);
    /// ```
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// One pass: every due event (up to the batch size) is published or
    /// given its next attempt time. The policies are looked up once per pass,
    /// so a reloaded config applies from the next pass on.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// # use retry_core::{Policy, Registry, registry};
    /// # registry::install(Registry::builder().policy("publish", Policy::default()).policy("outbox", Policy::default()).build());
    /// let store = examples::outbox::Store::open_in_memory().unwrap();
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
        for event in self.store.due(now_ms(), self.batch)? {
            let calls = AtomicU32::new(0);
            let mut oracle = Oracle::resume(&outbox_policy, event.oracle);
            // The deadline counts from the start of the first attempt.
            oracle.attempt(SystemTime::now());
            // No transaction or lock is held while publishing.
            let outcome = publish(&self.broker, &event, &calls).await;
            let calls = calls.load(Ordering::Relaxed);
            stats.calls += calls;
            let (now, wall) = (now_ms(), SystemTime::now());
            match outcome {
                Ok(()) => {
                    oracle.success(wall);
                    let state = oracle.state();
                    let store = &self.store;
                    store.record(&event, EventState::Published, calls, state, now, 0, None)?;
                    stats.published += 1;
                }
                Err(err) => {
                    // The engine's kernel decides: the class against the
                    // policy's `retry_on`, the broker's hint up to
                    // `max_retry_after`, attempts, deadline and budget.
                    let verdict = oracle.failure_of(&err, wall);
                    let message = err.to_string();
                    match verdict {
                        Verdict::Wait(wait) => {
                            let wait_ms = i64::try_from(wait.as_millis()).unwrap_or(i64::MAX);
                            self.store.record(
                                &event,
                                EventState::Pending,
                                calls,
                                oracle.state(),
                                now.saturating_add(wait_ms),
                                wait_ms,
                                Some(&message),
                            )?;
                            stats.rescheduled += 1;
                        }
                        Verdict::GiveUp(ending) => {
                            let state = event.oracle;
                            let store = &self.store;
                            let message = format!("{message} (gave up: {ending})");
                            store.record(
                                &event,
                                EventState::Dead,
                                calls,
                                state,
                                now,
                                0,
                                Some(&message),
                            )?;
                            stats.dead += 1;
                        }
                    }
                }
            }
        }
        Ok(stats)
    }

    /// Runs passes until no event is pending, calling `progress` after each
    /// pass; sleeps until the next event is due in between (never longer
    /// than `max_idle`).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// # use retry_core::{Policy, Registry, registry};
    /// # registry::install(Registry::builder().policy("publish", Policy::default()).policy("outbox", Policy::default()).build());
    /// let store = examples::outbox::Store::open_in_memory().unwrap();
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
            let stats = self.pass().await?;
            progress(&stats);
            let Some(next) = self.store.next_due()? else {
                return Ok(());
            };
            let until = u64::try_from(next.saturating_sub(now_ms())).unwrap_or(0);
            tokio::time::sleep(Duration::from_millis(until).min(max_idle)).await;
        }
    }
}

/// Why the relay stopped.
///
/// ```
/// let e = examples::outbox::RelayError::MissingPolicy("outbox");
/// assert!(e.to_string().contains("outbox"));
/// ```
#[derive(Debug)]
pub enum RelayError {
    /// The registry has no policy of that name.
    MissingPolicy(&'static str),
    /// The database failed.
    Db(rusqlite::Error),
}

impl std::fmt::Display for RelayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RelayError::MissingPolicy(name) => write!(
                f,
                "no retry policy named `{name}` is loaded; add [policies.{name}] to retry.toml"
            ),
            RelayError::Db(e) => write!(f, "outbox database: {e}"),
        }
    }
}

impl std::error::Error for RelayError {}

impl From<rusqlite::Error> for RelayError {
    fn from(e: rusqlite::Error) -> Self {
        RelayError::Db(e)
    }
}
