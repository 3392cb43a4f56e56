//! The policy's circuit breaker in a herd: the engine's own
//! [`CircuitBreaker`], built afresh for each run (so runs share no state),
//! on the run's synthetic clock, seeded, and quiet (its state changes are
//! the simulation's, not this process's).
//!
//! With a local scope each client process has its own breaker, the
//! processes being contiguous shares of the fleet as the `fleet` harness
//! and [`SendRate`](crate::SendRate) cut them; with a fleet scope every
//! client asks one breaker.

use super::Ctx;
use crate::error::SimulateError;
use crate::seed::client_seed;
use crate::send::process_of;
use retrykit_core::breaker::{CircuitBreaker, Ticket};
use retrykit_core::{Class, Problems};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How a policy's circuit breaker is shared by a [`Herd`](crate::Herd)'s
/// clients (a policy without a breaker ignores it).
///
/// ```
/// use retrykit_sim::{BreakerScope, Herd};
/// use retrykit_core::{Policy, breaker::CircuitBreaker};
/// use std::{sync::Arc, time::Duration};
///
/// let breaker = CircuitBreaker::builder().min_calls(20).open_for(Duration::from_secs(1)).build()?;
/// let policy = Policy::builder().max_attempts(8).breaker(Some(Arc::new(breaker))).build()?;
/// let herd = Herd { clients: 1000, outage: Duration::from_secs(3), capacity: 50, ..Herd::default() };
/// let fleet = Herd { breaker: BreakerScope::Fleet, ..herd.clone() }.run(&policy)?;
/// let local = Herd { breaker: BreakerScope::Local { processes: 10 }, ..herd.clone() }.run(&policy)?;
/// let none = herd.run(&policy.to_builder().breaker(None).build()?)?;
/// // Every first call goes out; after that, the breakers hold the retries back.
/// assert!(fleet.outage_calls < local.outage_calls && local.outage_calls < none.outage_calls);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BreakerScope {
    /// One breaker per client process: `processes` contiguous shares of
    /// the fleet (1 to [`MAX_PROCESSES`](Self::MAX_PROCESSES), and at most
    /// the clients), each breaker seeing only its own clients' attempts.
    Local {
        /// Client processes.
        processes: u32,
    },
    /// One breaker for the whole fleet (`scope = "fleet"`), modelled as one
    /// shared object: no store latency, no fallback, probes exact.
    Fleet,
}

impl BreakerScope {
    /// The most processes a local scope may have.
    ///
    /// ```
    /// assert_eq!(retrykit_sim::BreakerScope::MAX_PROCESSES, 1024);
    /// ```
    pub const MAX_PROCESSES: u32 = 1024;

    /// `"local"` or `"fleet"`, as a policy file writes the scope.
    ///
    /// ```
    /// use retrykit_sim::BreakerScope;
    /// assert_eq!(BreakerScope::Local { processes: 4 }.name(), "local");
    /// assert_eq!(BreakerScope::Fleet.name(), "fleet");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            BreakerScope::Local { .. } => "local",
            BreakerScope::Fleet => "fleet",
        }
    }

    /// Adds a problem to `c` when a local scope's processes are out of
    /// bounds for `clients` clients.
    pub(super) fn check(self, clients: u32, c: &mut Problems) {
        if let BreakerScope::Local { processes } = self {
            c.require(
                (1..=BreakerScope::MAX_PROCESSES).contains(&processes)
                    && processes <= clients.max(1),
                "breaker.processes",
                "must be from 1 to 1024, and at most the clients",
                format!(
                    "use the number of client processes, each with its own breaker (at most {}), \
                     or the fleet scope for one breaker shared by all",
                    clients.clamp(1, BreakerScope::MAX_PROCESSES)
                ),
            );
        }
    }

    /// The number of breakers for `clients` clients.
    fn count(self) -> u32 {
        match self {
            BreakerScope::Local { processes } => processes,
            BreakerScope::Fleet => 1,
        }
    }
}

impl Default for BreakerScope {
    /// One breaker per process, in one process.
    fn default() -> Self {
        BreakerScope::Local { processes: 1 }
    }
}

/// Keeps the breakers' jitter streams apart from the clients'.
const BREAKER_STREAM: u64 = 0xB4EA_CE55_0000_0001;

/// The breakers of one run.
pub(super) struct Breakers {
    each: Vec<Arc<CircuitBreaker>>,
    clients: u64,
}

impl Breakers {
    /// Fresh breakers like `like` for `clients` clients shared as `scope`
    /// says (validated by the herd), on a clock starting at `origin`, breaker
    /// `i` seeded with stream `i` of `seed`.
    ///
    /// # Errors
    /// What the breaker's builder says of its settings (nothing, for the
    /// settings of a breaker that was built).
    pub(super) fn new(
        like: &CircuitBreaker,
        scope: BreakerScope,
        clients: u32,
        seed: u64,
        origin: Instant,
    ) -> Result<Self, SimulateError> {
        let count = scope.count().clamp(1, clients.max(1));
        let each = (0..count)
            .map(|i| {
                like.to_builder()
                    .seed(client_seed(seed ^ BREAKER_STREAM, u64::from(i)))
                    .simulated(origin)
                    .build()
                    .map(Arc::new)
                    .map_err(|e| SimulateError::new("herd", e.problems().to_vec()))
            })
            .collect::<Result<_, _>>()?;
        Ok(Breakers {
            each,
            clients: u64::from(clients.max(1)),
        })
    }

    /// The breaker client `client` asks.
    pub(super) fn of(&self, client: u32) -> Option<&Arc<CircuitBreaker>> {
        let process = process_of(client, self.clients, self.each.len());
        self.each.get(process)
    }
}

/// Tells `breaker` how the attempt `ticket` let through went, as the retry
/// loop does: by its class (`None`: it succeeded), timed at `answered`,
/// or, for a success of a breaker without `slow_call` and not releasing,
/// at the attempt's start.
pub(super) fn record(
    breaker: Option<&Arc<CircuitBreaker>>,
    ticket: Option<Ticket>,
    class: Option<Class>,
    answered: Instant,
) {
    let (Some(breaker), Some(ticket)) = (breaker, ticket) else {
        return;
    };
    let now = if class.is_some() || breaker.slow_call().is_some() || breaker.releasing() {
        answered
    } else {
        ticket.began()
    };
    breaker.record_class(ticket, now, class);
}

impl Ctx<'_> {
    /// The tick of the next attempt after one the breaker refused in
    /// `tick`, which asks again after `wait`: the first tick that starts
    /// once the wait (or, with a timer model, the timer) is over, and never
    /// `tick` itself. A tick's attempts ask the breaker at its start, so the
    /// tick holding the end of the break would still find it open.
    pub(super) fn refused_tick(&self, tick: u64, wait: Duration) -> u64 {
        let wait = u64::try_from(wait.as_nanos()).unwrap_or(u64::MAX);
        let due = tick.saturating_mul(self.tick_ns).saturating_add(wait);
        let fires = match &self.timer {
            None => due,
            Some(timer) => timer.fires_at(due, self.seed),
        };
        fires.div_ceil(self.tick_ns).max(tick.saturating_add(1))
    }
}
