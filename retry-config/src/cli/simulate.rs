//! `retry-policy simulate POLICY [--compare OTHER,...]`: what a whole fleet
//! following the named policies does to the service they share.
//!
//! The simulation itself is retry-core's ([`retry_core::simulate`]), driven by
//! the same `Decider` as the real retry loops; this module loads the named
//! policies (with the selected profile), runs one scenario for each, and
//! renders the results: a comparison table and an arrivals-per-tick chart for
//! the terminal, JSON for scripts, and an SVG plot for a design review.
//!
//! Wiring (owned by `cli/mod.rs`): `Command::Simulate(simulate::Args)` and
//! `simulate::run(args, &cx)`; `--config` and `--profile` are global options.

mod chart;
mod json;
mod svg;
mod table;

use super::{CliError, Context};
use retry_core::Policy;
use retry_core::simulate::{Contention, ContentionReport, Herd, HerdReport};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Options of `simulate`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Herd: every client fails at time 0 against a server that is down for \
--outage, then accepts --capacity calls per --tick and throttles the rest. \
Contention: clients read one row and write it back conditionally (the optimistic-concurrency \
model of the \"Exponential Backoff and Jitter\" study); without POLICY it runs the study's \
four jitter modes (exponential, 5ms to 2s)."
)]
pub struct Args {
    /// The policy to simulate (optional for --scenario contention)
    #[arg(value_name = "POLICY")]
    policy: Option<String>,
    /// More policies to run on the same scenario, in one table
    #[arg(long, value_name = "OTHER,...", value_delimiter = ',')]
    compare: Vec<String>,
    /// What the fleet is up against
    #[arg(long, value_enum, default_value_t = ScenarioKind::Herd)]
    scenario: ScenarioKind,
    /// Clients in the fleet [default: 10000 for herd; 10 to 190 in steps of 10 for contention]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=10_000_000))]
    clients: Option<u32>,
    /// How long the server stays down (herd)
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = parse_duration)]
    outage: Duration,
    /// Calls per tick the server accepts once it is back (herd)
    #[arg(long, value_name = "N", default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..))]
    capacity: u64,
    /// The simulation's time step (herd)
    #[arg(long, value_name = "DURATION", default_value = "1ms", value_parser = parse_duration)]
    tick: Duration,
    /// Seed for every client's jitter (and the network, for contention)
    #[arg(long, value_name = "S", default_value_t = 0)]
    seed: u64,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Also write the results as an SVG plot to FILE
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ScenarioKind {
    Herd,
    Contention,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    Table,
    Json,
}

/// `"250ms"`, `"1.5s"`, `"2m"`: a duration with its unit.
fn parse_duration(s: &str) -> Result<Duration, String> {
    humantime::parse_duration(s.trim())
        .map_err(|e| format!("{e}; write a number with a unit, such as 500ms, 2s or 1m"))
}

/// One named policy as simulated.
pub(crate) struct Named<'a> {
    pub(crate) name: &'a str,
    pub(crate) policy: &'a Policy,
}

/// Herd results, one per policy, on one scenario.
pub(crate) struct HerdRun<'a> {
    pub(crate) herd: Herd,
    pub(crate) results: Vec<(Named<'a>, HerdReport)>,
}

/// Contention results: for each policy, one report per fleet size.
pub(crate) struct ContentionRun<'a> {
    pub(crate) scenario: Contention,
    pub(crate) results: Vec<(Named<'a>, Vec<ContentionReport>)>,
}

/// Runs the scenario and prints the results.
pub fn run(args: Args, cx: &Context) -> Result<ExitCode, CliError> {
    let names: Vec<String> = args
        .policy
        .iter()
        .chain(&args.compare)
        .map(|n| n.trim().to_owned())
        .filter(|n| !n.is_empty())
        .collect();
    let study = Contention::study_policies();
    let config;
    let policies: Vec<(String, &Policy)> = if names.is_empty() {
        if args.scenario == ScenarioKind::Herd {
            return Err(CliError::usage(
                "name a POLICY to simulate, e.g. `retry-policy simulate outbox --compare fast`",
            ));
        }
        study
            .iter()
            .map(|p| (p.name().unwrap_or("study").to_owned(), p))
            .collect()
    } else {
        config = cx.load()?;
        let mut found = Vec::with_capacity(names.len());
        for name in &names {
            found.push((name.clone(), &**super::find_policy(&config, name)?));
        }
        found
    };
    let named: Vec<Named<'_>> = policies
        .iter()
        .map(|(name, policy)| Named { name, policy })
        .collect();
    let (text, plot) = match args.scenario {
        ScenarioKind::Herd => {
            let run = run_herd(&args, named)?;
            let text = match args.format {
                Format::Table => table::herd(&run) + &chart::herd(&run),
                Format::Json => json::herd(&run),
            };
            (text, args.svg.is_some().then(|| svg::herd(&run)))
        }
        ScenarioKind::Contention => {
            let run = run_contention(&args, named)?;
            let text = match args.format {
                Format::Table => table::contention(&run),
                Format::Json => json::contention(&run),
            };
            (text, args.svg.is_some().then(|| svg::contention(&run)))
        }
    };
    if let (Some(path), Some(plot)) = (&args.svg, plot) {
        std::fs::write(path, plot).map_err(|e| {
            CliError::usage(format!("cannot write the plot to {}: {e}", path.display()))
        })?;
    }
    print!("{text}");
    Ok(ExitCode::SUCCESS)
}

fn run_herd<'a>(args: &Args, policies: Vec<Named<'a>>) -> Result<HerdRun<'a>, CliError> {
    let herd = Herd {
        clients: args.clients.unwrap_or(10_000),
        outage: args.outage,
        capacity: args.capacity,
        tick: args.tick,
        seed: args.seed,
        ..Herd::default()
    };
    let mut results = Vec::with_capacity(policies.len());
    for named in policies {
        let report = herd
            .run(named.policy)
            .map_err(|e| CliError::usage(e.to_string()))?;
        results.push((named, report));
    }
    Ok(HerdRun { herd, results })
}

fn run_contention<'a>(
    args: &Args,
    policies: Vec<Named<'a>>,
) -> Result<ContentionRun<'a>, CliError> {
    let scenario = Contention {
        seed: args.seed,
        ..Contention::default()
    };
    let sizes: Vec<u32> = match args.clients {
        Some(n) => vec![n],
        None => Contention::study_clients().collect(),
    };
    let mut results = Vec::with_capacity(policies.len());
    for named in policies {
        let mut reports = Vec::with_capacity(sizes.len());
        for &clients in &sizes {
            let fleet = Contention {
                clients,
                ..scenario.clone()
            };
            reports.push(
                fleet
                    .run(named.policy)
                    .map_err(|e| CliError::usage(e.to_string()))?,
            );
        }
        results.push((named, reports));
    }
    Ok(ContentionRun { scenario, results })
}

/// Milliseconds, to the microsecond, for JSON.
pub(crate) fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e3
}

#[cfg(test)]
pub(crate) mod fixtures {
    //! Small runs over policies built in code, for the renderers' tests.
    use super::*;
    use retry_core::Jitter;

    pub(crate) fn policies() -> Vec<(String, Policy)> {
        [("lockstep", Jitter::None), ("full", Jitter::Full)]
            .into_iter()
            .map(|(name, jitter)| {
                let p = Policy::builder()
                    .base(Duration::from_millis(50))
                    .cap(Duration::from_secs(2))
                    .jitter(jitter)
                    .max_attempts(6)
                    .build()
                    .unwrap();
                (name.to_owned(), p)
            })
            .collect()
    }

    pub(crate) fn herd(policies: &[(String, Policy)]) -> HerdRun<'_> {
        let herd = Herd {
            clients: 2000,
            outage: Duration::from_millis(500),
            capacity: 20,
            ..Herd::default()
        };
        let results = policies
            .iter()
            .map(|(name, policy)| (Named { name, policy }, herd.run(policy).unwrap()))
            .collect();
        HerdRun { herd, results }
    }

    pub(crate) fn contention(policies: &[(String, Policy)]) -> ContentionRun<'_> {
        let scenario = Contention::default();
        let results = policies
            .iter()
            .map(|(name, policy)| {
                let reports = [10, 40]
                    .into_iter()
                    .map(|clients| {
                        Contention {
                            clients,
                            ..scenario.clone()
                        }
                        .run(policy)
                        .unwrap()
                    })
                    .collect();
                (Named { name, policy }, reports)
            })
            .collect();
        ContentionRun { scenario, results }
    }
}
