//! A real fleet against a real server, beside the simulator's prediction.
//!
//! `fleet` starts a hyper server on 127.0.0.1 that plays retry-sim's herd
//! scenario on the wall clock (down for `--outage`, then `--capacity` calls
//! per `--tick`), runs `--clients` tokio clients through the engine's own
//! loop under the named policy, in child processes of the same binary, and
//! runs the simulator on the same parameters and seed. Then it prints both
//! side by side, and says whether the machine kept up.
//!
//! - [`server`]: the service, counting first calls and retries per tick and
//!   how late each call came after its client's timer was due.
//! - [`wire`]: the clients' hand-written HTTP/1.1 (and why not hyper's client).
//! - [`clients`]: one client's call through [`retry_core::Retry`], seeded as
//!   its simulated twin.
//! - [`child`]: a client process; [`coordinator`]: the parent that starts
//!   them at one common instant and collects their results.
//! - [`outcome`] and [`report`]: one shape for predicted and measured, and
//!   the table and JSON.

mod child;
mod clients;
mod coordinator;
mod options;
mod outcome;
mod report;
mod server;
mod wire;

pub use child::{ChildPlan, instant_of, wall_ns};
pub use clients::{ClientOutcome, Finish, connect_all, run_client};
pub use coordinator::{Measurement, measure};
pub use options::{FlagError, FleetArgs, Format, Limits, Plan};
pub use outcome::{Outcome, TickShape};
pub use report::{Comparison, KeepingUp};
pub use server::{FleetServer, ServerCounts, Service};
pub use wire::{ATTEMPT_HEADER, DUE_HEADER, Lane};

use retry_config::{Config, Env, Options};
use retry_core::Policy;
use retry_sim::{Herd, TimerModel};
use std::error::Error;
use std::sync::Arc;

/// The most arrival bins kept per run: one per tick of a 1 ms tick for
/// 17 minutes, longer than any horizon the flags allow.
const MAX_BINS: usize = 1 << 20;

/// The policy `name` from the file `args.config`, with `RETRY_PROFILE` and
/// `RETRY_POLICY__*` overrides, as a program would load it; warnings about
/// the file and about what the fleet changes are returned with it.
///
/// ```
/// use clap::Parser;
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/retry.toml");
/// let args = examples::fleet::FleetArgs::try_parse_from(["fleet", "--config", path, "--policy", "outbx"]).unwrap();
/// let err = examples::fleet::load_policy(&args).unwrap_err().to_string();
/// assert!(err.contains("did you mean `outbox`"), "{err}");
/// ```
pub fn load_policy(args: &FleetArgs) -> Result<(Arc<Policy>, Vec<String>), Box<dyn Error>> {
    let mut options = Options::new().env(Env::from_process());
    if let Some(p) = std::env::var("RETRY_PROFILE")
        .ok()
        .filter(|p| !p.is_empty())
    {
        options = options.profile(p);
    }
    let config =
        Config::load_file(&args.config, &options).map_err(crate::policies::PolicyProblems)?;
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
    let close = retry_schema::suggest::did_you_mean(name, names.iter().copied())
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
///
/// ```
/// use clap::Parser;
/// let args = examples::fleet::FleetArgs::try_parse_from(["fleet", "--config", "f", "--policy", "p", "--clients", "7"]).unwrap();
/// assert_eq!(examples::fleet::herd(&args).clients, 7);
/// ```
pub fn herd(args: &FleetArgs) -> Herd {
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

/// Whether the prediction models the clients' timer: only when it is no
/// finer than the tick (retry-sim moves a tick at a time; a finer timer
/// changes nothing a tick can show, and the report says so).
pub fn timer_modelled(args: &FleetArgs) -> bool {
    !args.timer_resolution.is_zero() && args.timer_resolution >= args.tick
}

fn bins(args: &FleetArgs) -> usize {
    usize::try_from(args.ticks())
        .unwrap_or(MAX_BINS)
        .min(MAX_BINS)
}

/// Runs the whole comparison (the coordinator's side) and renders it.
pub fn run(args: &FleetArgs) -> Result<String, Box<dyn Error>> {
    let plan = args.check(&Limits::of_this_machine())?;
    let (policy, mut warnings) = load_policy(args)?;
    // The prediction first, so that it does not take CPU from the fleet.
    let report = herd(args).run(&policy)?;
    let predicted = Outcome::predicted(&report);
    let exe = std::env::current_exe()?;
    let m = measure(args, plan, &exe)?;
    let measured = Outcome::measured(&m.server, &m.clients, bins(args));
    let keeping_up = KeepingUp::of(&m.server, &m.clients);
    warnings.extend(keeping_up.warnings(args.tick));
    let comparison = Comparison {
        args,
        policy: &policy,
        plan,
        predicted,
        measured,
        keeping_up,
        warnings,
    };
    Ok(match args.format {
        Format::Table => comparison.table(),
        Format::Json => comparison.json(),
    })
}

/// Runs a client process (the hidden `--child-of` form).
pub fn run_child(args: &FleetArgs) -> Result<(), Box<dyn Error>> {
    let (Some(server), Some((first, end)), Some(connections)) =
        (args.child_of, args.child_clients, args.connections)
    else {
        return Err("--child-of, --child-clients and --connections go together".into());
    };
    let (policy, _) = load_policy(args)?;
    child::run(ChildPlan {
        server,
        clients: first..end,
        connections,
        policy,
        seed: args.seed,
        horizon: args.horizon,
    })?;
    Ok(())
}
