//! `--breaker`: the same outage run once per circuit-breaker scope, each
//! beside retrykit-sim's prediction for that scope.
//!
//! - `none`: the policy without its breaker;
//! - `local`: each client process builds its own breaker from the policy's
//!   breaker's settings, predicted with one breaker per process
//!   (`BreakerScope::Local` with the harness's process count, the same
//!   contiguous shares);
//! - `fleet`: every process's breaker is shared through a private
//!   redis-server (`CircuitBreaker::with_fleet`, default options as a
//!   policy file's `scope = "fleet"` gets), predicted as one breaker.
//!
//! The figures are the simulator's breaker figures: calls that reached the
//! server in a tick that starts before the outage ends (the server counts
//! them: it knows when it is down), the busiest tick from the outage's end
//! on, and the time from the outage's end until every client succeeded or
//! gave up.

use super::clients::{ClientOutcome, Finish};
use super::coordinator::measure;
use super::keeping_up::KeepingUp;
use super::options::{FleetArgs, Plan};
use super::redis::PrivateRedis;
use super::server::ServerCounts;
use retrykit_core::Policy;
use retrykit_core::fleet::FleetOptions;
use retrykit_sim::{BreakerScope, Herd, HerdReport};
use std::error::Error;
use std::sync::Arc;
use std::time::Duration;

/// How `--breaker` runs the policy's circuit breaker.
///
/// ```
/// use clap::Parser;
/// use examples::fleet::{BreakerMode, FleetArgs};
/// let args = FleetArgs::try_parse_from(["fleet", "--config", "f", "--policy", "p", "--breaker", "compare"]).unwrap();
/// assert_eq!(args.breaker, Some(BreakerMode::Compare));
/// assert_eq!(BreakerMode::Compare.scopes(), [BreakerMode::None, BreakerMode::Local, BreakerMode::Fleet]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BreakerMode {
    /// Without the policy's breaker.
    None,
    /// One breaker per client process.
    Local,
    /// One breaker for all processes, through a private redis-server.
    Fleet,
    /// `none`, `local` and `fleet`, one after another.
    Compare,
}

impl BreakerMode {
    /// The scopes this mode runs, in order.
    pub fn scopes(self) -> &'static [BreakerMode] {
        match self {
            BreakerMode::None => &[BreakerMode::None],
            BreakerMode::Local => &[BreakerMode::Local],
            BreakerMode::Fleet => &[BreakerMode::Fleet],
            BreakerMode::Compare => &[BreakerMode::None, BreakerMode::Local, BreakerMode::Fleet],
        }
    }

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            BreakerMode::None => "none",
            BreakerMode::Local => "local",
            BreakerMode::Fleet => "fleet",
            BreakerMode::Compare => "compare",
        }
    }
}

/// `policy` as a client process runs it under `mode` (a single scope):
/// without its breaker, with a fresh local one, or with one shared through
/// `store`. No mode: the policy as loaded.
pub(crate) fn scoped(
    policy: Arc<Policy>,
    name: &str,
    mode: Option<BreakerMode>,
    store: Option<&str>,
) -> Result<Arc<Policy>, Box<dyn Error>> {
    let Some(mode) = mode else {
        return Ok(policy);
    };
    let breaker = match (mode, policy.breaker()) {
        (BreakerMode::None, _) => None,
        (_, None) => return Err(no_breaker(name, mode).into()),
        (BreakerMode::Local, Some(b)) => Some(b.to_builder().fleet(None).build()?),
        (BreakerMode::Fleet, Some(b)) => {
            let store =
                store.ok_or("--breaker fleet in a client process needs --child-breaker-store")?;
            let key = b.name().unwrap_or(name).to_owned();
            Some(
                b.to_builder()
                    .fleet(Some(FleetOptions::new(key, store)))
                    .build()?,
            )
        }
        (BreakerMode::Compare, Some(_)) => {
            return Err(
                "--breaker compare runs the scopes one after another; a client process runs one"
                    .into(),
            );
        }
    };
    Ok(Arc::new(
        policy.to_builder().breaker(breaker.map(Arc::new)).build()?,
    ))
}

fn no_breaker(policy: &str, mode: BreakerMode) -> String {
    format!(
        "--breaker {}: policy `{policy}` names no circuit breaker; name one in the file \
         (`breaker = \"NAME\"` and a [breakers.NAME] table) or with RETRY_POLICY__{}__BREAKER=NAME, \
         or use --breaker none",
        mode.name(),
        policy.to_uppercase().replace('-', "_")
    )
}

/// A run's breaker figures, predicted or measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Figures {
    /// Calls in ticks that start before the outage ends, first calls included.
    pub(crate) outage_calls: u64,
    /// Calls in the busiest tick from the outage's end on.
    pub(crate) peak_after: u64,
    /// From the outage's end until every client succeeded or gave up;
    /// `None` when some were still retrying at the horizon.
    pub(crate) drain: Option<Duration>,
    /// First calls (one per client, unless a breaker refused it).
    pub(crate) first_calls: u64,
    /// Every call.
    pub(crate) calls: u64,
    /// Clients whose call succeeded.
    pub(crate) successes: u64,
    /// Clients that gave up (the breaker refusing their last attempt included).
    pub(crate) give_ups: u64,
}

impl Figures {
    /// Each figure's median over `runs` (for an even count, the upper of
    /// the two middle values; a drain that did not end counts as the
    /// longest). `None` when there are no runs.
    pub(crate) fn median(runs: &[Figures]) -> Option<Self> {
        fn middle<T: Ord + Copy>(mut v: Vec<T>) -> Option<T> {
            v.sort_unstable();
            v.get(v.len() / 2).copied()
        }
        let of = |f: fn(&Figures) -> u64| middle(runs.iter().map(f).collect());
        let drain = middle(
            runs.iter()
                .map(|r| r.drain.unwrap_or(Duration::MAX))
                .collect(),
        )?;
        Some(Figures {
            outage_calls: of(|f| f.outage_calls)?,
            peak_after: of(|f| f.peak_after)?,
            drain: (drain != Duration::MAX).then_some(drain),
            first_calls: of(|f| f.first_calls)?,
            calls: of(|f| f.calls)?,
            successes: of(|f| f.successes)?,
            give_ups: of(|f| f.give_ups)?,
        })
    }

    /// The simulator's.
    pub(crate) fn predicted(r: &HerdReport) -> Self {
        Figures {
            outage_calls: r.outage_calls,
            peak_after: r.peak_after_outage,
            drain: r.drain,
            first_calls: r.first_wave,
            calls: r.calls,
            successes: r.successes,
            give_ups: r.give_ups,
        }
    }

    /// The real fleet's: calls as the server counted them, the drain from
    /// when the last client's call ended.
    pub(crate) fn measured(
        server: &ServerCounts,
        clients: &[ClientOutcome],
        outage_ticks: u64,
        outage: Duration,
    ) -> Self {
        let (outage_calls, peak_after) = server.around_outage(outage_ticks);
        let count = |f: Finish| clients.iter().filter(|c| c.finish == f).count() as u64;
        let drain = (count(Finish::Unfinished) == 0).then(|| {
            let last = clients.iter().map(|c| c.after_us).max().unwrap_or(0);
            Duration::from_micros(last).saturating_sub(outage)
        });
        Figures {
            outage_calls,
            peak_after,
            drain,
            first_calls: server.first_calls.iter().map(|&n| u64::from(n)).sum(),
            calls: server.calls(),
            successes: count(Finish::Succeeded),
            give_ups: count(Finish::GaveUp),
        }
    }
}

/// One scope's run: predicted beside measured.
#[derive(Debug, Clone)]
pub(crate) struct ScopeRun {
    pub(crate) scope: BreakerMode,
    pub(crate) predicted: Figures,
    /// The median of `runs`, figure by figure (the one run's with `--repeat 1`).
    pub(crate) measured: Figures,
    /// Each of `--repeat`'s runs, in order.
    pub(crate) runs: Vec<Figures>,
    /// Whether the machine delivered the calls when their timers said, in
    /// every run.
    pub(crate) kept_up: bool,
    /// Times the fleet breakers fell back to local ones, over every run
    /// (fleet runs).
    pub(crate) fallbacks: Option<u64>,
}

impl ScopeRun {
    /// What this run did that the prediction does not model, one sentence each.
    pub(crate) fn warnings(&self, clients: u32) -> Vec<String> {
        let mut w = Vec::new();
        let scope = self.scope.name();
        if !self.kept_up {
            w.push(format!(
                "{scope}: the machine could not keep up: more than 1% of calls reached the server ticks after their timers, or the first wave over more than one tick"
            ));
        }
        if self.measured.first_calls < u64::from(clients) {
            w.push(format!(
                "{scope}: {} of {clients} first calls reached the server{}: the breaker refused those the machine delivered after it opened (the simulator sends every first call in tick 0)",
                self.measured.first_calls,
                if self.runs.len() > 1 { " (median)" } else { "" }
            ));
        }
        if let Some(n) = self.fallbacks.filter(|&n| n > 0) {
            w.push(format!(
                "{scope}: the processes fell back to their local breakers {n} times (Redis answered later than the fleet link's timeout), so the fleet breaker was partly local"
            ));
        }
        w
    }
}

/// The simulator's figures for `scope`, the breaker divided as the
/// harness divides it: one per client process, or one for the fleet.
pub(crate) fn predict(
    args: &FleetArgs,
    plan: Plan,
    policy: &Policy,
    scope: BreakerMode,
) -> Result<Figures, Box<dyn Error>> {
    let herd = super::herd(args);
    let report = match scope {
        BreakerMode::None => herd.run(&policy.to_builder().breaker(None).build()?)?,
        BreakerMode::Local => Herd {
            breaker: BreakerScope::Local {
                processes: plan.processes,
            },
            ..herd
        }
        .run(policy)?,
        BreakerMode::Fleet | BreakerMode::Compare => Herd {
            breaker: BreakerScope::Fleet,
            ..herd
        }
        .run(policy)?,
    };
    Ok(Figures::predicted(&report))
}

/// Runs every scope of `args.breaker`, each predicted first (so the
/// simulator takes no CPU from the fleet) and then measured `--repeat`
/// times, one run after another.
pub(crate) fn run_scopes(
    args: &FleetArgs,
    plan: Plan,
    policy: &Policy,
    exe: &std::path::Path,
) -> Result<Vec<ScopeRun>, Box<dyn Error>> {
    let mode = args.breaker.unwrap_or(BreakerMode::None);
    if mode != BreakerMode::None && policy.breaker().is_none() {
        return Err(no_breaker(&args.policy, mode).into());
    }
    let outage_ticks = outage_ticks(args);
    let mut runs = Vec::new();
    for &scope in mode.scopes() {
        let predicted = predict(args, plan, policy, scope)?;
        let (mut measured, mut kept_up, mut fallbacks) = (Vec::new(), true, None);
        for _ in 0..args.repeat.max(1) {
            let mut extra = vec!["--breaker".to_owned(), scope.name().to_owned()];
            // Each fleet run gets a store of its own: a run must not start
            // from the breaker state and window an earlier run left.
            let redis = match scope {
                BreakerMode::Fleet => Some(PrivateRedis::start()?),
                _ => None,
            };
            if let Some(redis) = &redis {
                extra.extend(["--child-breaker-store".to_owned(), redis.url()]);
            }
            let m = measure(args, plan, exe, &extra)?;
            drop(redis);
            measured.push(Figures::measured(
                &m.server,
                &m.clients,
                outage_ticks,
                args.outage,
            ));
            kept_up &= KeepingUp::of(&m.server, &m.clients).kept_up();
            fallbacks = match (fallbacks, m.fallbacks) {
                (Some(a), Some(b)) => Some(a + b),
                (a, b) => a.or(b),
            };
        }
        runs.push(ScopeRun {
            scope,
            predicted,
            measured: Figures::median(&measured).ok_or("no run was made")?,
            runs: measured,
            kept_up,
            fallbacks,
        });
    }
    Ok(runs)
}

/// The ticks that start before the outage ends (the server's and the
/// simulator's rule).
fn outage_ticks(args: &FleetArgs) -> u64 {
    let ticks = args.outage.as_nanos().div_ceil(args.tick.as_nanos().max(1));
    u64::try_from(ticks).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    const FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fleet-breaker.toml");

    fn args(flags: &[&str]) -> FleetArgs {
        FleetArgs::try_parse_from(["fleet", "--config", FILE].iter().chain(flags)).unwrap()
    }

    #[test]
    fn a_scope_without_a_breaker_is_refused_naming_the_fix() {
        let plain = Arc::new(Policy::builder().build().unwrap());
        for mode in [BreakerMode::Local, BreakerMode::Fleet, BreakerMode::Compare] {
            let err = scoped(
                plain.clone(),
                "outbox",
                Some(mode),
                Some("redis://127.0.0.1:1/"),
            )
            .unwrap_err()
            .to_string();
            assert!(err.contains(&format!("--breaker {}", mode.name())), "{err}");
            assert!(err.contains("RETRY_POLICY__OUTBOX__BREAKER=NAME"), "{err}");
        }
        let same = scoped(plain.clone(), "outbox", None, None).unwrap();
        assert!(Arc::ptr_eq(&same, &plain));
        let none = scoped(plain, "outbox", Some(BreakerMode::None), None).unwrap();
        assert!(none.breaker().is_none());
    }

    #[test]
    fn each_scope_gets_its_own_breaker_or_none() {
        let (policy, _) = super::super::load_policy(&args(&["--policy", "broker"])).unwrap();
        let b = policy.breaker().expect("the file's breaker");
        let local = scoped(policy.clone(), "broker", Some(BreakerMode::Local), None).unwrap();
        let lb = local.breaker().expect("a local breaker");
        assert!(!Arc::ptr_eq(lb, b), "a fresh breaker, not the loaded one");
        assert!(lb.same_settings(b));
        assert!(lb.fleet_status().is_none(), "local");
        // Nothing listens on port 1: the fleet breaker falls back, but it is one.
        let fleet = scoped(
            policy.clone(),
            "broker",
            Some(BreakerMode::Fleet),
            Some("redis://127.0.0.1:1/"),
        )
        .unwrap();
        assert!(
            fleet
                .breaker()
                .expect("a fleet breaker")
                .fleet_status()
                .is_some()
        );
        let err = scoped(policy.clone(), "broker", Some(BreakerMode::Fleet), None).unwrap_err();
        assert!(err.to_string().contains("--child-breaker-store"), "{err}");
        let none = scoped(policy, "broker", Some(BreakerMode::None), None).unwrap();
        assert!(none.breaker().is_none());
    }

    #[test]
    fn the_prediction_divides_the_breaker_as_the_fleet_does() {
        let a = args(&[
            "--policy",
            "broker",
            "--clients",
            "400",
            "--outage",
            "1s",
            "--tick",
            "10ms",
            "--capacity",
            "10",
        ]);
        let (policy, _) = super::super::load_policy(&a).unwrap();
        let two = Plan {
            processes: 2,
            connections: 16,
        };
        let figures = |scope| predict(&a, two, &policy, scope).unwrap();
        let (none, local, fleet) = (
            figures(BreakerMode::None),
            figures(BreakerMode::Local),
            figures(BreakerMode::Fleet),
        );
        // Every first call goes out; the breakers hold retries back.
        assert!(none.outage_calls > local.outage_calls, "{none:?} {local:?}");
        assert!(
            local.outage_calls >= fleet.outage_calls,
            "{local:?} {fleet:?}"
        );
        assert!(fleet.outage_calls >= 400, "{fleet:?}");
        let one = Plan {
            processes: 1,
            ..two
        };
        // One process: its local breaker is the fleet's.
        assert_eq!(
            predict(&a, one, &policy, BreakerMode::Local).unwrap(),
            fleet
        );
    }

    #[test]
    fn measured_figures_come_from_the_server_s_ticks_and_the_clients_endings() {
        let server = ServerCounts {
            first_calls: vec![5, 0, 0, 0],
            retries: vec![0, 3, 7, 2],
            ..Default::default()
        };
        let client = |finish, after_us| ClientOutcome {
            index: 0,
            finish,
            after_us,
            attempts: 1,
        };
        let ended = [
            client(Finish::Succeeded, 2_500_000),
            client(Finish::GaveUp, 1_200_000),
        ];
        let f = Figures::measured(&server, &ended, 2, Duration::from_secs(1));
        assert_eq!((f.outage_calls, f.peak_after, f.calls), (8, 7, 17));
        assert_eq!(f.first_calls, 5);
        assert_eq!((f.successes, f.give_ups), (1, 1));
        assert_eq!(f.drain, Some(Duration::from_millis(1500)));
        let cut = [client(Finish::Unfinished, 60_000_000)];
        assert_eq!(
            Figures::measured(&server, &cut, 2, Duration::from_secs(1)).drain,
            None
        );
    }

    #[test]
    fn repeated_runs_report_each_figures_median() {
        let run = |give_ups, peak_after, drain_ms: Option<u64>| Figures {
            outage_calls: 100 + give_ups,
            peak_after,
            drain: drain_ms.map(Duration::from_millis),
            first_calls: 400,
            calls: 1000,
            successes: 400 - give_ups,
            give_ups,
        };
        let runs = [
            run(30, 12, Some(900)),
            run(10, 40, None),
            run(20, 11, Some(700)),
        ];
        let m = Figures::median(&runs).unwrap();
        assert_eq!((m.give_ups, m.successes, m.outage_calls), (20, 380, 120));
        assert_eq!(m.peak_after, 12, "each figure's own median");
        assert_eq!(
            m.drain,
            Some(Duration::from_millis(900)),
            "an unended drain is the longest"
        );
        let two_unended = [runs[1], runs[1], runs[0]];
        assert_eq!(Figures::median(&two_unended).unwrap().drain, None);
        assert_eq!(Figures::median(&[]), None);
    }

    #[test]
    fn repeat_is_accepted_with_breaker() {
        let a = args(&[
            "--policy",
            "broker",
            "--breaker",
            "compare",
            "--repeat",
            "5",
        ]);
        assert!(
            a.check(&crate::fleet::options::Limits::of_this_machine())
                .is_ok()
        );
    }
}
