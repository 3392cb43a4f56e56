//! A breaker's settings, their defaults (seatbelt's and Polly's: 10% of at
//! least 100 attempts over 30 s opens it for 5 s) and their rules.

use super::CircuitBreaker;
use crate::problem::{PolicyError, PolicyErrorKind, Problems};
use crate::window::Window;
use retrykit_schema::classes::{THROTTLED, TIMEOUT, TRANSIENT};
use retrykit_schema::keys::Key;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

/// What a breaker is built with.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Settings {
    pub(super) failure_ratio: f64,
    pub(super) min_calls: u32,
    pub(super) window: Duration,
    pub(super) open_for: Duration,
    pub(super) max_open_for: Duration,
    pub(super) open_jitter: f64,
    pub(super) probes: u32,
    pub(super) slow_call: Option<Duration>,
    pub(super) trip_on: Arc<[Box<str>]>,
    pub(super) probe_every: Duration,
    pub(super) release_ramp: Duration,
    /// `None`: `trip_on` less throttled.
    pub(super) release_trip_on: Option<Arc<[Box<str>]>>,
}

impl Settings {
    /// The opening rule: at least `min_calls` attempts, and a share of
    /// failures at least `failure_ratio`.
    pub(super) fn trips(&self, attempts: u64, failures: u64) -> bool {
        attempts >= u64::from(self.min_calls)
            && failures as f64 >= self.failure_ratio * attempts as f64
    }
}

/// The most probes half-open may let through.
const MAX_PROBES: u32 = 10_000;

/// Builds a [`CircuitBreaker`], validating its settings.
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until `.build()`"]
pub struct BreakerBuilder {
    settings: Settings,
    name: Option<Arc<str>>,
    seed: Option<u64>,
    /// Set by [`BreakerBuilder::simulated`]: the clock's origin, and quiet.
    simulated: Option<Instant>,
    /// The store a built breaker is shared through (a fleet breaker's copy).
    #[cfg(feature = "redis")]
    fleet: Option<crate::fleet::FleetOptions>,
}

impl CircuitBreaker {
    /// A builder with the defaults: it opens when 10% of at least 100
    /// attempts over 30 s failed, for 5 s (doubling on each trip in a row up
    /// to 30 s, each period cut by up to 20% at random), then lets 1 probe
    /// through; transient, timeout and throttled errors count as failures.
    ///
    /// ```
    /// let b = retrykit_core::breaker::CircuitBreaker::builder().build().unwrap();
    /// assert_eq!((b.failure_ratio(), b.min_calls(), b.probes()), (0.1, 100, 1));
    /// ```
    pub fn builder() -> BreakerBuilder {
        BreakerBuilder {
            settings: Settings {
                failure_ratio: 0.1,
                min_calls: 100,
                window: Duration::from_secs(30),
                open_for: Duration::from_secs(5),
                max_open_for: Duration::from_secs(30),
                open_jitter: 0.2,
                probes: 1,
                slow_call: None,
                probe_every: Duration::from_millis(1250),
                release_ramp: Duration::from_millis(20),
                release_trip_on: None,
                trip_on: [TRANSIENT, TIMEOUT, THROTTLED]
                    .into_iter()
                    .map(Box::from)
                    .collect(),
            },
            name: None,
            seed: None,
            simulated: None,
            #[cfg(feature = "redis")]
            fleet: None,
        }
    }

    /// A builder holding this breaker's settings, name, seed and (feature
    /// `redis`) fleet options, to build another like it with its own state
    /// and link; [`fleet(None)`](BreakerBuilder::fleet) or
    /// [`simulated`](BreakerBuilder::simulated) makes the copy local.
    ///
    /// ```
    /// use retrykit_core::breaker::CircuitBreaker;
    /// let a = CircuitBreaker::builder().name("db").probes(3).build().unwrap();
    /// let b = a.to_builder().build().unwrap();
    /// assert!(a.same_settings(&b));
    /// assert!(!a.same_settings(&a.to_builder().probes(2).build().unwrap()));
    /// ```
    pub fn to_builder(&self) -> BreakerBuilder {
        BreakerBuilder {
            settings: self.settings.clone(),
            name: self.name.clone(),
            seed: self.seed,
            simulated: None,
            #[cfg(feature = "redis")]
            fleet: self.fleet_options().cloned(),
        }
    }

    /// The share of counted attempts that failed at which it opens.
    pub fn failure_ratio(&self) -> f64 {
        self.settings.failure_ratio
    }

    /// The fewest attempts in the window before it judges.
    pub fn min_calls(&self) -> u32 {
        self.settings.min_calls
    }

    /// The window the failure ratio is measured over.
    pub fn window(&self) -> Duration {
        self.settings.window
    }

    /// How long it stays open after its first trip.
    pub fn open_for(&self) -> Duration {
        self.settings.open_for
    }

    /// The longest open period.
    pub fn max_open_for(&self) -> Duration {
        self.settings.max_open_for
    }

    /// The largest random share cut from each open period.
    pub fn open_jitter(&self) -> f64 {
        self.settings.open_jitter
    }

    /// The attempts half-open lets through.
    pub fn probes(&self) -> u32 {
        self.settings.probes
    }

    /// The time at which an attempt counts as a failure however it ended.
    pub fn slow_call(&self) -> Option<Duration> {
        self.settings.slow_call
    }

    /// The longest open period: a probe goes at least this often.
    pub fn probe_every(&self) -> Duration {
        self.settings.probe_every
    }

    /// The release's ramp step: its rate doubles every step while the
    /// attempts it lets through succeed.
    pub fn release_ramp(&self) -> Duration {
        self.settings.release_ramp
    }

    /// The error classes that count as failures during a release: the
    /// `release_trip_on` set, else `trip_on` less throttled.
    pub fn release_trip_on(&self) -> Vec<Box<str>> {
        match &self.settings.release_trip_on {
            Some(classes) => classes.to_vec(),
            None => self
                .settings
                .trip_on
                .iter()
                .filter(|c| &***c != THROTTLED)
                .cloned()
                .collect(),
        }
    }

    /// The error classes that count as failures.
    pub fn trip_on(&self) -> &[Box<str>] {
        &self.settings.trip_on
    }

    /// Whether `other` was built with the same settings and name (so a
    /// reload may keep this breaker, and its state).
    pub fn same_settings(&self, other: &CircuitBreaker) -> bool {
        #[cfg(feature = "redis")]
        if self.fleet_options() != other.fleet_options() {
            return false;
        }
        self.settings == other.settings && self.name == other.name
    }
}

impl BreakerBuilder {
    /// The breaker's name, for its messages, metrics and errors.
    pub fn name(mut self, name: impl Into<Arc<str>>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The share of counted attempts that failed at which it opens:
    /// above 0, at most 1.
    pub fn failure_ratio(mut self, ratio: f64) -> Self {
        self.settings.failure_ratio = ratio;
        self
    }

    /// The fewest attempts in the window before it judges: at least 1.
    pub fn min_calls(mut self, calls: u32) -> Self {
        self.settings.min_calls = calls;
        self
    }

    /// The window the failure ratio is measured over: 1 ms to 1 day.
    pub fn window(mut self, window: Duration) -> Self {
        self.settings.window = window;
        self
    }

    /// How long it stays open after its first trip: 1 ms to 1 day.
    pub fn open_for(mut self, open_for: Duration) -> Self {
        self.settings.open_for = open_for;
        self
    }

    /// The longest open period (trips in a row double it up to this): at
    /// least `open_for`, at most 1 day.
    pub fn max_open_for(mut self, max: Duration) -> Self {
        self.settings.max_open_for = max;
        self
    }

    /// The largest random share cut from each open period: 0 to 1 (0: none).
    pub fn open_jitter(mut self, share: f64) -> Self {
        self.settings.open_jitter = share;
        self
    }

    /// The attempts half-open lets through, all of which must succeed for
    /// it to close: 1 to 10,000.
    pub fn probes(mut self, probes: u32) -> Self {
        self.settings.probes = probes;
        self
    }

    /// Counts an attempt at least this slow as a failure (`None`: off).
    pub fn slow_call(mut self, slow: Option<Duration>) -> Self {
        self.settings.slow_call = slow;
        self
    }

    /// The error classes that count as failures (replacing the defaults).
    pub fn trip_on<I, S>(mut self, classes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<Box<str>>,
    {
        self.settings.trip_on = classes.into_iter().map(Into::into).collect();
        self
    }

    /// The longest open period, whatever the trips in a row, so a probe
    /// goes at least this often: 1 ms to 1 day.
    pub fn probe_every(mut self, every: Duration) -> Self {
        self.settings.probe_every = every;
        self
    }

    /// The release's ramp step (see [`CircuitBreaker::release_ramp`]): 1 ms
    /// to 1 minute.
    pub fn release_ramp(mut self, ramp: Duration) -> Self {
        self.settings.release_ramp = ramp;
        self
    }

    /// The error classes that count as failures during a release
    /// (`None`: `trip_on` less throttled, so a throttled answer slows the
    /// release and does not reopen the breaker).
    ///
    /// ```
    /// use retrykit_core::breaker::CircuitBreaker;
    /// let b = CircuitBreaker::builder().release_trip_on(Some(["throttled"])).build().unwrap();
    /// assert_eq!(b.release_trip_on(), [Box::<str>::from("throttled")]);
    /// ```
    pub fn release_trip_on<I, S>(mut self, classes: Option<I>) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<Box<str>>,
    {
        self.settings.release_trip_on = classes.map(|c| c.into_iter().map(Into::into).collect());
        self
    }

    /// Draws the open periods' jitter from `seed`, so a test repeats.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// For a simulator stepping synthetic time: the clock starts at
    /// `origin` (so runs repeat to the millisecond), the breaker says
    /// nothing of its state changes, and it is always local.
    ///
    /// ```
    /// use retrykit_core::breaker::{BreakerState, CircuitBreaker};
    /// use std::{sync::Arc, time::{Duration, Instant}};
    /// let t0 = Instant::now();
    /// let b = Arc::new(CircuitBreaker::builder().min_calls(1).open_jitter(0.0)
    ///     .open_for(Duration::from_millis(10)).simulated(t0).build().unwrap());
    /// let ticket = b.try_acquire(t0).unwrap();
    /// b.record(ticket, t0, true); // opens, silently
    /// assert_eq!(b.try_acquire(t0).unwrap_err().retry_in(), Duration::from_millis(10));
    /// assert_eq!(b.state(), BreakerState::Open);
    /// ```
    pub fn simulated(mut self, origin: Instant) -> Self {
        self.simulated = Some(origin);
        self
    }

    /// Shares the built breaker through a store, as
    /// [`CircuitBreaker::with_fleet`] does (feature `redis`); `None` builds
    /// a local one.
    ///
    /// ```
    /// use retrykit_core::{breaker::CircuitBreaker, fleet::FleetOptions};
    /// // Nothing listens on port 1: the link falls back, the options stay.
    /// let fleet = CircuitBreaker::builder().name("db")
    ///     .fleet(Some(FleetOptions::new("db", "redis://127.0.0.1:1/"))).build().unwrap();
    /// assert_eq!(fleet.fleet_options().unwrap().store(), "redis://127.0.0.1:1/");
    /// assert!(fleet.to_builder().fleet(None).build().unwrap().fleet_options().is_none());
    /// ```
    #[cfg(feature = "redis")]
    pub fn fleet(mut self, options: Option<crate::fleet::FleetOptions>) -> Self {
        self.fleet = options;
        self
    }

    /// Checks every rule and builds the breaker, or says every problem.
    ///
    /// # Errors
    ///
    /// A [`PolicyError`] of kind [`Breaker`](crate::PolicyErrorKind::Breaker)
    /// naming each field (fleet options included) that breaks a rule, the
    /// rule and the fix.
    pub fn build(self) -> Result<CircuitBreaker, PolicyError> {
        let s = &self.settings;
        let mut problems = Problems::default();
        let day = Duration::from_secs(86_400);
        let (ms, minute) = (Duration::from_millis(1), Duration::from_secs(60));
        problems.require(
            s.failure_ratio.is_finite() && s.failure_ratio > 0.0 && s.failure_ratio <= 1.0,
            Key::FailureRatio.name(),
            "must be a number above 0 and at most 1",
            format!("use a share such as 0.5 (got {:?})", s.failure_ratio),
        );
        problems.require(
            s.min_calls >= 1,
            Key::MinCalls.name(),
            "must be at least 1",
            "use a count such as 20 (with 0 a single failure would open it)".to_string(),
        );
        let (to_day, to_minute) = ("must be from 1ms to 1 day", "must be from 1ms to 1 minute");
        for (key, value, max, rule) in [
            (Key::BreakerWindow, s.window, day, to_day),
            (Key::OpenFor, s.open_for, day, to_day),
            (Key::MaxOpenFor, s.max_open_for, day, to_day),
            (Key::ProbeEvery, s.probe_every, day, to_day),
            (Key::ReleaseRamp, s.release_ramp, minute, to_minute),
        ] {
            problems.require(
                (ms..=max).contains(&value),
                key.name(),
                rule,
                format!(
                    "use a duration such as {} (got {})",
                    key.example(),
                    retrykit_schema::duration::show_duration(value)
                ),
            );
        }
        problems.require(
            s.max_open_for >= s.open_for,
            Key::MaxOpenFor.name(),
            "must not be less than open_for",
            format!(
                "raise max_open_for to at least {} or lower open_for",
                retrykit_schema::duration::show_duration(s.open_for)
            ),
        );
        if let Some(classes) = &s.release_trip_on {
            problems.require(
                classes.iter().all(|c| !c.trim().is_empty() && &**c != "permanent"),
                Key::ReleaseTripOn.name(),
                "must name classes, none empty and not \"permanent\"",
                "list classes such as [\"transient\", \"timeout\"], adding \"throttled\" to let a throttled answer reopen the breaker during a release"
                    .to_string(),
            );
        }
        problems.require(
            s.open_jitter.is_finite() && (0.0..=1.0).contains(&s.open_jitter),
            Key::OpenJitter.name(),
            "must be a share from 0 to 1",
            format!("use a share such as 0.2 (got {:?})", s.open_jitter),
        );
        problems.require(
            (1..=MAX_PROBES).contains(&s.probes),
            Key::Probes.name(),
            "must be from 1 to 10000 (with 0 half-open lets no probe through, so the breaker never closes)",
            format!("use a count such as 1 (got {})", s.probes),
        );
        problems.require(
            s.slow_call.is_none_or(|d| (ms..=day).contains(&d)),
            Key::SlowCall.name(),
            "must be from 1ms to 1 day when set",
            "give a duration such as \"2s\", or \"none\"".to_string(),
        );
        problems.require(
            !s.trip_on.is_empty() && s.trip_on.iter().all(|c| !c.trim().is_empty()),
            Key::TripOn.name(),
            "must name at least one class, none empty",
            "list classes such as [\"transient\", \"timeout\"] (with none the breaker never opens)"
                .to_string(),
        );
        problems.require(
            !s.trip_on.iter().any(|c| &**c == "permanent"),
            Key::TripOn.name(),
            "must not list \"permanent\"",
            "remove \"permanent\": a permanent error (a poison message) says the dependency answered"
                .to_string(),
        );
        let name = self.name.as_deref();
        PolicyError::check(PolicyErrorKind::Breaker, name, problems.into_vec())?;
        let origin = self.simulated.unwrap_or_else(crate::window::now);
        #[cfg(feature = "redis")]
        let fleet = self.fleet.filter(|_| self.simulated.is_none());
        let breaker = CircuitBreaker {
            counts: Window::starting(self.settings.window, origin),
            settings: self.settings,
            name: self.name,
            origin,
            state: AtomicU64::new(0),
            seed: self.seed,
            #[cfg(feature = "redis")]
            fleet: None,
            quiet: self.simulated.is_some(),
            releasing: std::sync::atomic::AtomicBool::new(false),
            release: std::sync::Mutex::new(None),
        };
        #[cfg(feature = "redis")]
        if let Some(options) = fleet {
            return breaker.with_fleet(options);
        }
        Ok(breaker)
    }
}
