//! A real fleet against a real server, beside the simulator's prediction.
//!
//! `fleet` starts a hyper server on 127.0.0.1 that plays retrykit-sim's herd
//! scenario on the wall clock (down for `--outage`, then `--capacity` calls
//! per `--tick`), runs `--clients` tokio clients through the engine's own
//! loop under the named policy, in child processes of the same binary, and
//! runs the simulator on the same parameters and seed. Then it prints both
//! side by side, and says whether the machine kept up.
//!
//! The `fleet` binary is all this module's public face: [`FleetArgs`]
//! parsed, then [`run`] (the coordinator) or [`run_child`] (a client
//! process). The parts below are the crate's own.
//!
//! - `server`: the service, counting first calls and retries per tick and
//!   how late each call came after its client's timer was due.
//! - `wire`: the clients' hand-written HTTP/1.1 (and why not hyper's client).
//! - `clients`: one client's call through [`retrykit_core::Retry`], seeded as
//!   its simulated twin.
//! - `child`: a client process; `coordinator`: the parent that starts
//!   them at one common instant and collects their results.
//! - `keeping_up`: whether the machine delivered calls when their timers
//!   said; `send_rate`: how fast it delivers them, measured from the first
//!   wave, for the simulator's send-rate model.
//! - `outcome` and `report`: one shape for predicted and measured, and
//!   the table and JSON, with both predictions (plain and send-rate) and
//!   which one the verdict uses.
//! - `breakers` and `breaker_report` (`--breaker`): the outage with no
//!   breaker, a local breaker per process and one fleet breaker (through
//!   `redis`, a private redis-server), calls during the outage and drain
//!   predicted beside measured.

mod breaker_report;
mod breakers;
mod child;
mod clients;
mod coordinator;
mod differ;
mod keeping_up;
mod options;
mod outcome;
mod redis;
mod repeats;
mod report;
mod send_rate;
mod server;
mod wire;

pub use breakers::BreakerMode;
pub use options::{FleetArgs, Format};

use child::ChildPlan;
use coordinator::measure;
use differ::Differences;
use keeping_up::KeepingUp;
use options::{Limits, Plan};
use outcome::Outcome;
use repeats::Repeats;
use report::Comparison;
use send_rate::MeasuredRate;

use retrykit_config::Config;
use retrykit_core::Policy;
use retrykit_sim::{Herd, TimerModel};
use std::error::Error;
use std::sync::Arc;

/// The most arrival bins kept per run: one per tick of a 1 ms tick for
/// 17 minutes, longer than any horizon the flags allow.
const MAX_BINS: usize = 1 << 20;

/// The policy `name` from the file `args.config`, with `RETRY_PROFILE` and
/// `RETRY_POLICY__*` overrides, as a program would load it; warnings about
/// the file and about what the fleet changes are returned with it.
pub(crate) fn load_policy(args: &FleetArgs) -> Result<(Arc<Policy>, Vec<String>), Box<dyn Error>> {
    let config = crate::policies::load_as_program(args.config.as_ref())?;
    let mut warnings: Vec<String> = config
        .warnings()
        .render()
        .lines()
        .filter(|l| l.starts_with("warning"))
        .map(|l| l.trim_start_matches("warning: ").to_owned())
        .collect();
    let policy = config
        .policy(&args.policy)
        .ok_or_else(|| no_policy(&config, &args.policy))?;
    if policy.budget().is_none() {
        return Ok((policy.clone(), warnings));
    }
    // The simulator gives every client its own process, where a budget
    // would be the client's alone: both sides run without it.
    warnings.push(format!(
        "policy `{}` has a retry budget, which the simulator ignores; the fleet runs without it too, so that both model the same clients",
        args.policy
    ));
    let unbudgeted = policy.to_builder().budget(None).build()?;
    Ok((Arc::new(unbudgeted), warnings))
}

fn no_policy(config: &Config, name: &str) -> Box<dyn Error> {
    let names: Vec<&str> = config.policy_names().collect();
    let close = retrykit_schema::suggest::did_you_mean(name, names.iter().copied())
        .map(|n| format!(" (did you mean `{n}`?)"))
        .unwrap_or_default();
    format!(
        "--policy {name}: no such policy in {}{close}; defined: {}",
        config.source().name(),
        names.join(", ")
    )
    .into()
}

/// The simulator's scenario for the same fleet.
pub(crate) fn herd(args: &FleetArgs) -> Herd {
    Herd {
        clients: args.clients,
        outage: args.outage,
        capacity: args.capacity,
        tick: args.tick,
        seed: args.seed,
        horizon: args.horizon,
        timer: timer_modelled(args).then_some(TimerModel {
            resolution: args.timer_resolution,
            skipped: args.timer_skipped,
        }),
        arrival_bins: bins(args),
        ..Herd::default()
    }
}

/// The scenario for the fleet as `plan` lays it out: a policy's breaker,
/// if it has one, is each client process's own, so the prediction gives
/// each of the plan's processes one (`--breaker` runs each scope apart).
fn herd_of(args: &FleetArgs, plan: Plan) -> Herd {
    Herd {
        breaker: retrykit_sim::BreakerScope::Local {
            processes: plan.processes,
        },
        ..herd(args)
    }
}

/// Whether the prediction models the clients' timer: only when it is no
/// finer than the tick (retrykit-sim moves a tick at a time; a finer timer
/// changes nothing a tick can show, and the report says so).
pub(crate) fn timer_modelled(args: &FleetArgs) -> bool {
    !args.timer_resolution.is_zero() && args.timer_resolution >= args.tick
}

fn bins(args: &FleetArgs) -> usize {
    usize::try_from(args.ticks())
        .unwrap_or(MAX_BINS)
        .min(MAX_BINS)
}

/// Runs the whole comparison (the coordinator's side) and renders it as
/// `--format` says. Bad flags and a policy the file lacks are refused
/// before anything starts:
///
/// ```
/// use clap::Parser;
/// use examples::fleet::{FleetArgs, run};
/// let file = concat!(env!("CARGO_MANIFEST_DIR"), "/retry.toml");
/// let args = FleetArgs::try_parse_from(["fleet", "--config", file, "--policy", "outbx"]).unwrap();
/// let err = run(&args).unwrap_err().to_string();
/// assert!(err.contains("--policy outbx: no such policy"), "{err}");
/// assert!(err.contains("did you mean `outbox`"), "{err}");
/// let args = FleetArgs::try_parse_from(["fleet", "--config", file, "--policy", "outbox", "--clients", "2", "--connections", "3"]).unwrap();
/// let err = run(&args).unwrap_err().to_string();
/// assert!(err.contains("--connections 3 is more than --clients 2"), "{err}");
/// ```
///
/// A run, as the `fleet` binary makes it:
///
/// ```no_run
/// // no_run: `run` starts its client processes from the running executable
/// // with the hidden `--child-of` flags, which only the `fleet` binary
/// // understands, not a doc test; examples/tests/fleet.rs runs it through
/// // the binary.
/// use clap::Parser;
/// let file = concat!(env!("CARGO_MANIFEST_DIR"), "/retry.toml");
/// let args = examples::fleet::FleetArgs::try_parse_from(
///     ["fleet", "--config", file, "--policy", "outbox", "--clients", "100", "--outage", "300ms"]).unwrap();
/// let table = examples::fleet::run(&args).unwrap();
/// assert!(table.starts_with("fleet: 100 clients"), "{table}");
/// assert!(table.contains("SEND-RATE") && table.contains("verdict: "), "{table}");
/// ```
pub fn run(args: &FleetArgs) -> Result<String, Box<dyn Error>> {
    let plan = args.check(&Limits::of_this_machine())?;
    let (policy, warnings) = load_policy(args)?;
    if args.breaker.is_some() {
        return run_breakers(args, plan, &policy, warnings);
    }
    // The plain prediction first, so that it does not take CPU from the
    // fleet; it depends on no measurement, so every run shares it.
    let plain = Outcome::predicted(&herd_of(args, plan).run(&policy)?);
    let exe = std::env::current_exe()?;
    let mut runs = Vec::with_capacity(args.repeat as usize);
    for _ in 0..args.repeat {
        runs.push(run_once(args, plan, &policy, &exe, &plain, &warnings)?);
    }
    if let [one] = &runs[..] {
        return Ok(match args.format {
            Format::Table => one.table(),
            Format::Json => one.json(),
        });
    }
    let repeats = Repeats { runs };
    Ok(match args.format {
        Format::Table => repeats.table(),
        Format::Json => repeats.json(),
    })
}

/// `--breaker`: the outage once per scope, predicted beside measured.
fn run_breakers(
    args: &FleetArgs,
    plan: Plan,
    policy: &Policy,
    mut warnings: Vec<String>,
) -> Result<String, Box<dyn Error>> {
    if args.breaker == Some(BreakerMode::Compare) && plan.processes == 1 {
        warnings.push(
            "one client process: its local breaker is the whole fleet's, so local and fleet differ only by the store's round trips; use --processes 2 or more to compare them".to_owned(),
        );
    }
    let runs = breakers::run_scopes(args, plan, policy, &std::env::current_exe()?)?;
    for r in &runs {
        warnings.extend(r.warnings(args.clients));
    }
    let report = breaker_report::BreakerComparison {
        args,
        policy,
        plan,
        runs,
        warnings,
    };
    Ok(match args.format {
        Format::Table => report.table(),
        Format::Json => report.json(),
    })
}

/// One real fleet, and its send-rate prediction from the rate this run
/// measured, beside the shared plain prediction.
fn run_once<'a>(
    args: &'a FleetArgs,
    plan: Plan,
    policy: &'a Policy,
    exe: &std::path::Path,
    plain: &Outcome,
    warnings: &[String],
) -> Result<Comparison<'a>, Box<dyn Error>> {
    let m = measure(args, plan, exe, &[])?;
    let measured = Outcome::measured(&m.server, &m.clients, bins(args));
    // The send-rate prediction needs this run's first wave: after the fleet.
    let send_rate = match MeasuredRate::of(&m.server, args.tick, plan.processes) {
        Some(rate) => {
            let herd = Herd {
                send: Some(rate.model()),
                ..herd_of(args, plan)
            };
            Some((rate, Outcome::predicted(&herd.run(policy)?)))
        }
        None => None,
    };
    let differences = match &send_rate {
        Some((rate, predicted)) => {
            // The whole machine's calls per tick, every process's queue included.
            let per_tick = rate.per_ms() * args.tick.as_secs_f64() * 1e3;
            Differences::of(&m.server, predicted, &measured, per_tick)
        }
        None => Differences::default(),
    };
    let keeping_up = KeepingUp::of(&m.server, &m.clients);
    let mut warnings = warnings.to_vec();
    warnings.extend(keeping_up.warnings(args.tick));
    Ok(Comparison {
        args,
        policy,
        plan,
        plain: plain.clone(),
        send_rate,
        measured,
        differences,
        keeping_up,
        warnings,
    })
}

/// Runs a client process (the hidden `--child-of` form the coordinator
/// starts): connects to the server, says `ready` on stdout, waits for `go`
/// on stdin, and prints each client's outcome. Without the coordinator's
/// flags it is refused before connecting:
///
/// ```
/// use clap::Parser;
/// use examples::fleet::{FleetArgs, run_child};
/// let args = FleetArgs::try_parse_from(
///     ["fleet", "--config", "f", "--policy", "p", "--child-of", "127.0.0.1:9", "--child-clients", "0..10"]).unwrap();
/// let err = run_child(&args).unwrap_err().to_string();
/// assert_eq!(err, "--child-of, --child-clients and --connections go together");
/// ```
pub fn run_child(args: &FleetArgs) -> Result<(), Box<dyn Error>> {
    let (Some(server), Some((first, end)), Some(connections)) =
        (args.child_of, args.child_clients, args.connections)
    else {
        return Err("--child-of, --child-clients and --connections go together".into());
    };
    let (policy, _) = load_policy(args)?;
    let store = args.child_breaker_store.as_deref();
    let policy = breakers::scoped(policy, &args.policy, args.breaker, store)?;
    child::run(ChildPlan {
        server,
        clients: first..end,
        connections,
        policy,
        seed: args.seed,
        horizon: args.horizon,
        throttle: args.throttle,
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use std::time::Duration;

    fn args(flags: &[&str]) -> FleetArgs {
        FleetArgs::try_parse_from(["fleet"].iter().chain(flags)).unwrap()
    }

    const FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/retry.toml");

    #[test]
    fn a_misspelled_policy_is_refused_with_a_did_you_mean() {
        let err = load_policy(&args(&["--config", FILE, "--policy", "outbx"]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("did you mean `outbox`"), "{err}");
        assert!(err.contains("defined: "), "{err}");
    }

    #[test]
    fn the_prediction_runs_the_fleet_s_scenario() {
        let herd = herd(&args(&[
            "--config",
            "f",
            "--policy",
            "p",
            "--clients",
            "7",
            "--tick",
            "10ms",
        ]));
        assert_eq!((herd.clients, herd.tick), (7, Duration::from_millis(10)));
        // A 1 ms timer is finer than a 10 ms tick: the plain model, as the header says.
        assert_eq!(herd.timer, None);
        let herd = super::herd(&args(&[
            "--config",
            "f",
            "--policy",
            "p",
            "--timer-skipped",
            "0.5",
        ]));
        let timer = herd.timer.expect("a 1 ms timer at 1 ms ticks is modelled");
        assert_eq!(
            (timer.resolution, timer.skipped),
            (Duration::from_millis(1), 0.5)
        );
    }

    #[test]
    fn the_timer_is_modelled_only_when_no_finer_than_the_tick() {
        let modelled = |flags: &[&str]| {
            timer_modelled(&args(
                &[&["--config", "f", "--policy", "p"], flags].concat(),
            ))
        };
        assert!(modelled(&[]));
        assert!(modelled(&["--tick", "2ms", "--timer-resolution", "2ms"]));
        assert!(!modelled(&["--tick", "10ms"]));
        assert!(!modelled(&["--timer-resolution", "0s"]));
    }
}
