//! An in-process fake broker that fails, throttles with hints, rejects, and
//! has outages, each at a configured rate. What it accepts is written to its
//! own SQLite file before it answers, so deliveries survive a relay crash
//! and duplicates can be counted by event id. So is each call that arrives
//! during an outage: the demo's summary counts them, in every relay process.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use retrykit_core::Classify;
use retrykit_core::breaker::BreakerOpen;
use retrykit_core::chaos::InjectedFault;
use rusqlite::{Connection, params};
use std::fmt;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How the fake broker misbehaves.
///
/// ```
/// let s = examples::outbox::BrokerSettings::default();
/// assert_eq!(s.failure_rate, 0.0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BrokerSettings {
    /// Fraction of calls that fail with a transient error.
    pub failure_rate: f64,
    /// Fraction of calls that are throttled with a Retry-After hint.
    pub throttle_rate: f64,
    /// The hint a throttled call carries.
    pub throttle_hint: Duration,
    /// Fraction of calls rejected permanently (a poison message).
    pub reject_rate: f64,
    /// An outage: (start after the broker was created, length).
    pub outage: Option<(Duration, Duration)>,
    /// Seeds the broker's dice.
    pub seed: u64,
    /// How long each call takes before it answers (tokio's clock, so a
    /// paused test clock skips it). A call cut off by `attempt_timeout`
    /// during this time is not delivered.
    pub latency: Duration,
    /// How long the answer takes to come back once the broker has logged the
    /// delivery. A relay that dies (or a call cut off) in this window has
    /// delivered an event it never hears about: it is published again, a
    /// duplicate, as with any at-least-once broker.
    pub ack_latency: Duration,
}

impl Default for BrokerSettings {
    fn default() -> Self {
        BrokerSettings {
            failure_rate: 0.0,
            throttle_rate: 0.0,
            throttle_hint: Duration::from_millis(200),
            reject_rate: 0.0,
            outage: None,
            seed: 0,
            latency: Duration::ZERO,
            ack_latency: Duration::ZERO,
        }
    }
}

/// Why a publish failed.
///
/// ```
/// use retrykit_core::{Class, Classify};
/// use examples::outbox::BrokerError;
/// assert_eq!(BrokerError::Rejected("bad".into()).class(), Class::Permanent);
/// assert_eq!(BrokerError::TimedOut.class(), Class::TIMEOUT);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Classify)]
pub enum BrokerError {
    /// The broker is down or dropped the connection (transient).
    #[classify(transient)]
    Unavailable(String),
    /// The broker asked the client to slow down for this long (throttled,
    /// with the hint).
    #[classify(class = "throttled", retry_after = retry_after)]
    Throttled {
        /// The broker's Retry-After.
        retry_after: Duration,
    },
    /// The broker will never accept this message (permanent).
    #[classify(permanent)]
    Rejected(String),
    /// The publish ran past the policy's `attempt_timeout` and was cut off.
    /// What the engine builds for a timed-out attempt: without it the
    /// timeout could not be enforced. Retried like a dropped connection
    /// (the class `timeout` is always retryable).
    #[classify(timeout)]
    TimedOut,
    /// The `publish` policy's circuit breaker refused the call: nothing was
    /// sent. What the engine builds for a refused attempt; the relay leaves
    /// the event for a later pass, after [`BreakerOpen::retry_in`]. Permanent,
    /// so that no outer retry hammers an open breaker.
    #[classify(breaker_open)]
    BreakerOpen(BreakerOpen),
    /// The `publish` policy's chaos failed the call in its place: nothing
    /// was sent (docs/chaos.md). Of the fault's class, so it is retried,
    /// counted by the breaker and rescheduled as a real failure would be.
    #[classify(chaos)]
    Injected(InjectedFault),
}

impl fmt::Display for BrokerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BrokerError::Unavailable(why) => write!(f, "broker unavailable: {why}"),
            BrokerError::Throttled { retry_after } => {
                write!(f, "throttled, retry after {retry_after:?}")
            }
            BrokerError::Rejected(why) => write!(f, "rejected: {why}"),
            BrokerError::TimedOut => f.write_str("publish timed out (attempt_timeout)"),
            BrokerError::BreakerOpen(open) => write!(f, "not sent: {open}"),
            BrokerError::Injected(fault) => write!(f, "not sent: {fault}"),
        }
    }
}

impl std::error::Error for BrokerError {}

/// The fake broker.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use examples::outbox::{BrokerSettings, FakeBroker};
/// let broker = FakeBroker::in_memory(BrokerSettings::default()).unwrap();
/// broker.publish("e-1", "{}").await.unwrap();
/// assert_eq!(broker.deliveries().unwrap(), ["e-1"]);
/// # }
/// ```
pub struct FakeBroker {
    settings: BrokerSettings,
    dice: Mutex<SmallRng>,
    started: Instant,
    log: Mutex<Connection>,
}

impl FakeBroker {
    /// A broker whose deliveries are kept in the SQLite file at `path`.
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// let broker = examples::outbox::FakeBroker::open(&dir.path().join("broker.db"), Default::default()).unwrap();
    /// assert!(broker.deliveries().unwrap().is_empty());
    /// ```
    pub fn open(path: &Path, settings: BrokerSettings) -> rusqlite::Result<Self> {
        let conn = Connection::open(path)?;
        conn.busy_timeout(Duration::from_secs(5))?;
        Self::with_connection(conn, settings)
    }

    /// A broker that keeps deliveries in memory.
    ///
    /// ```
    /// let _ = examples::outbox::FakeBroker::in_memory(Default::default()).unwrap();
    /// ```
    pub fn in_memory(settings: BrokerSettings) -> rusqlite::Result<Self> {
        Self::with_connection(Connection::open_in_memory()?, settings)
    }

    fn with_connection(conn: Connection, settings: BrokerSettings) -> rusqlite::Result<Self> {
        // WAL and NORMAL: relays in several processes append side by side,
        // and a delivery survives the crash of the process that logged it.
        conn.execute_batch(
            "PRAGMA journal_mode = WAL;
             PRAGMA synchronous = NORMAL;
             CREATE TABLE IF NOT EXISTS deliveries (
                 seq INTEGER PRIMARY KEY AUTOINCREMENT,
                 event_id TEXT NOT NULL,
                 payload TEXT NOT NULL
             );
             CREATE TABLE IF NOT EXISTS outage_calls (
                 one INTEGER PRIMARY KEY CHECK (one = 1),
                 calls INTEGER NOT NULL
             );",
        )?;
        Ok(FakeBroker {
            settings,
            dice: Mutex::new(SmallRng::seed_from_u64(settings.seed)),
            started: Instant::now(),
            log: Mutex::new(conn),
        })
    }

    /// Publishes one message, or fails the way the settings say.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use examples::outbox::{BrokerError, BrokerSettings, FakeBroker};
    /// let broker = FakeBroker::in_memory(BrokerSettings { reject_rate: 1.0, ..Default::default() }).unwrap();
    /// assert!(matches!(broker.publish("e", "{}").await, Err(BrokerError::Rejected(_))));
    /// # }
    /// ```
    pub async fn publish(&self, event_id: &str, payload: &str) -> Result<(), BrokerError> {
        let s = &self.settings;
        if !s.latency.is_zero() {
            tokio::time::sleep(s.latency).await;
        }
        if let Some((start, len)) = s.outage {
            let t = self.started.elapsed();
            if t >= start && t < start.saturating_add(len) {
                // Counted before it answers, as a delivery is logged.
                self.log_outage_call()?;
                return Err(BrokerError::Unavailable("outage".into()));
            }
        }
        let roll: f64 = self.dice.lock().map_or(0.5, |mut r| r.random());
        if roll < s.reject_rate {
            return Err(BrokerError::Rejected(format!("{event_id} is malformed")));
        }
        if roll < s.reject_rate + s.throttle_rate {
            return Err(BrokerError::Throttled {
                retry_after: s.throttle_hint,
            });
        }
        if roll < s.reject_rate + s.throttle_rate + s.failure_rate {
            return Err(BrokerError::Unavailable("connection reset".into()));
        }
        self.log_delivery(event_id, payload)?;
        if !s.ack_latency.is_zero() {
            tokio::time::sleep(s.ack_latency).await;
        }
        Ok(())
    }

    /// Writes the delivery to the broker's log: from here on it is delivered.
    fn log_delivery(&self, event_id: &str, payload: &str) -> Result<(), BrokerError> {
        self.write_log(
            "INSERT INTO deliveries (event_id, payload) VALUES (?1, ?2)",
            params![event_id, payload],
        )
    }

    /// Counts one call that arrived during the outage in the broker's log.
    fn log_outage_call(&self) -> Result<(), BrokerError> {
        self.write_log(
            "INSERT INTO outage_calls (one, calls) VALUES (1, 1)
             ON CONFLICT (one) DO UPDATE SET calls = calls + 1",
            [],
        )
    }

    /// Runs one statement on the broker's log; a failure is the broker's.
    fn write_log(&self, sql: &str, params: impl rusqlite::Params) -> Result<(), BrokerError> {
        let log = self
            .log
            .lock()
            .map_err(|_| BrokerError::Unavailable("broker log poisoned".into()))?;
        log.execute(sql, params)
            .map_err(|e| BrokerError::Unavailable(e.to_string()))?;
        Ok(())
    }

    /// The calls that arrived while the broker was down (its outage), by
    /// every process sharing its log.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use examples::outbox::{BrokerSettings, FakeBroker};
    /// use std::time::Duration;
    /// let down = BrokerSettings { outage: Some((Duration::ZERO, Duration::from_secs(60))), ..Default::default() };
    /// let broker = FakeBroker::in_memory(down).unwrap();
    /// assert!(broker.publish("e-1", "{}").await.is_err());
    /// assert!(broker.publish("e-1", "{}").await.is_err());
    /// assert_eq!(broker.outage_calls().unwrap(), 2);
    /// # }
    /// ```
    pub fn outage_calls(&self) -> rusqlite::Result<u64> {
        let log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        log.query_row(
            "SELECT COALESCE(SUM(calls), 0) FROM outage_calls",
            [],
            |r| r.get(0),
        )
    }

    /// Every delivered event id, in delivery order (duplicates included).
    ///
    /// ```
    /// let b = examples::outbox::FakeBroker::in_memory(Default::default()).unwrap();
    /// assert!(b.deliveries().unwrap().is_empty());
    /// ```
    pub fn deliveries(&self) -> rusqlite::Result<Vec<String>> {
        let log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        let mut stmt = log.prepare("SELECT event_id FROM deliveries ORDER BY seq")?;
        stmt.query_map([], |r| r.get(0))?.collect()
    }
}
