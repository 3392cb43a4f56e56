//! `retry-policy simulate POLICY [--compare OTHER,...]`: what a whole fleet
//! following the named policies does to the service they share.
//!
//! The simulation itself is retrykit-sim's ([`retrykit_sim`]), driven by the
//! engine's own decision kernel, as the real retry loops are; this module
//! loads the named policies (with the selected profile), runs one scenario
//! for each, and renders the results: a comparison table and an
//! arrivals-per-tick chart for the terminal, JSON for scripts, and an SVG
//! plot for a design review.
//!
//! Wiring (owned by `cli/mod.rs`): `Command::Simulate(simulate::Args)` and
//! `simulate::run(args, &cx)`; `--config` and `--profile` are global options.

mod breaker;
mod chaos;
mod chart;
mod json;
mod scenario;
mod slow;
mod svg;
mod table;
mod tail;

use super::{CliError, Context};
use retrykit_core::{Jitter, Policy};
use retrykit_sim::{Contention, ContentionReport, Herd, HerdReport, SendRate};
use scenario::{herd_only, run_contention, run_herd, scenario_error, scenario_name};
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
four jitter modes (exponential, 5ms to 2s). \
Slow: calls arrive at --load per ms for --duration, dealt to --limit-processes processes, each \
with its own concurrency limit when the policy names one, against a dependency that serves \
--slots calls at once for --service each and queues the rest."
)]
pub struct Args {
    /// The policy to simulate (optional for --scenario contention)
    #[arg(value_name = "POLICY")]
    policy: Option<String>,
    /// More policies to run on the same scenario, in one table
    #[arg(long, value_name = "OTHER,...", value_delimiter = ',')]
    compare: Vec<String>,
    /// Run each policy once per jitter mode (none, full, equal, decorrelated)
    #[arg(long)]
    each_jitter: bool,
    /// What the fleet is up against
    #[arg(long, value_enum, default_value_t = ScenarioKind::Herd)]
    scenario: ScenarioKind,
    /// Clients in the fleet [default: 10000 for herd; 10 to 190 in steps of 10 for contention]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=10_000_000))]
    clients: Option<u32>,
    /// How long the server stays down (herd only) [default: 2s]
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    outage: Option<Duration>,
    /// Calls per tick the server accepts once it is back (herd only) [default: 20]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    capacity: Option<u64>,
    /// The simulation's time step (herd only) [default: 1ms]
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    tick: Option<Duration>,
    /// Simulated time after which clients still retrying are left unfinished
    /// [default: 1 day for herd, 1 hour for contention]
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    horizon: Option<Duration>,
    /// Calls after which a policy's run stops, clients still retrying left
    /// unfinished (herd): what bounds the time a run can take [default: 100000000]
    #[arg(long, value_name = "N",
          value_parser = clap::value_parser!(u64).range(1..=MAX_CALLS))]
    max_calls: Option<u64>,
    /// Model the clients' timer (herd, tail): wake-ups rounded up to this
    /// grid (tokio's timer: 1ms); in the herd each call is answered the
    /// instant it is made, in the tail the server's waits use it too
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    timer_resolution: Option<Duration>,
    /// With --timer-resolution: the share of timer steps skipped, their
    /// wake-ups merged into the next (0 to 0.9; the fleet measured about 0.25
    /// on a busy 2-vCPU machine)
    #[arg(
        long,
        value_name = "SHARE",
        default_value_t = 0.0,
        requires = "timer_resolution"
    )]
    timer_skipped: f64,
    /// The tail scenario's flags
    #[command(flatten)]
    tail: tail::TailFlags,
    /// The slow scenario's flags
    #[command(flatten)]
    slow: slow::SlowFlags,
    /// Model the clients' machine (herd): it sends at most this many calls
    /// per millisecond, and calls due beyond that wait in a queue, first
    /// come, first served, and are made when sent (the fleet measures it)
    #[arg(long, value_name = "CALLS_PER_MS", value_parser = parse_send_rate, allow_negative_numbers = true)]
    send_rate: Option<f64>,
    /// With --send-rate: client processes (contiguous shares of the fleet),
    /// each with its own queue sending at --send-rate [default: 1, so that
    /// --send-rate is the whole fleet's]
    #[arg(long, value_name = "P", requires = "send_rate",
          value_parser = clap::value_parser!(u32).range(1..=i64::from(SendRate::MAX_PROCESSES)))]
    send_processes: Option<u32>,
    /// The circuit breaker's flag
    #[command(flatten)]
    breaker: breaker::BreakerFlags,
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

/// `--outage` by default.
const DEFAULT_OUTAGE: Duration = Duration::from_secs(2);
/// `--capacity` by default.
const DEFAULT_CAPACITY: u64 = 20;
/// `--tick` by default.
const DEFAULT_TICK: Duration = Duration::from_millis(1);

/// `--max-calls` by default: seconds of work for one policy (about 10 s for
/// 10^8 calls on the benchmark machine), enough for the largest fleet to
/// make ten calls each.
const DEFAULT_MAX_CALLS: u64 = 100_000_000;
/// The most `--max-calls` allows: minutes of work, not hours.
const MAX_CALLS: u64 = 1_000_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ScenarioKind {
    Herd,
    Contention,
    Tail,
    Slow,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    Table,
    Json,
}

/// `"250ms"`, `"1.5s"`, `"1h 30m"`: retry.toml's duration grammar.
fn parse_duration(s: &str) -> Result<Duration, retrykit_schema::duration::Invalid> {
    retrykit_schema::duration::parse_duration(s)
}

/// `--send-rate`: calls per millisecond, a finite number above zero.
fn parse_send_rate(s: &str) -> Result<f64, String> {
    let rate: f64 = s.trim().parse().map_err(|_| {
        format!("{s} is not a number; write the calls per millisecond the clients' machine sends, e.g. 90")
    })?;
    if !SendRate::accepts(rate) {
        return Err(format!(
            "{s} is not a rate from 0.000001 to 10^9 calls per millisecond (it must be above zero and finite); \
             use the rate the fleet measured, e.g. 90, or leave --send-rate out for no limit"
        ));
    }
    Ok(rate)
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
    /// The policies with a circuit breaker, without it, local and fleet.
    pub(crate) breakers: Vec<breaker::Comparison<'a>>,
}

/// Contention results: for each policy, one report per fleet size.
pub(crate) struct ContentionRun<'a> {
    pub(crate) scenario: Contention,
    pub(crate) results: Vec<(Named<'a>, Vec<ContentionReport>)>,
}

/// Runs the scenario, prints the results and writes the plot.
pub fn run(args: Args, cx: &Context) -> Result<ExitCode, CliError> {
    let output = render(&args, cx)?;
    if let (Some(path), Some(plot)) = (&args.svg, &output.plot) {
        std::fs::write(path, plot).map_err(|e| {
            CliError::usage(format!("cannot write the plot to {}: {e}", path.display()))
        })?;
    }
    out!("{}", output.text);
    Ok(ExitCode::SUCCESS)
}

/// What the command shows: the text for stdout, and the SVG when asked for.
struct Output {
    text: String,
    plot: Option<String>,
}

/// Loads the policies, runs the scenario and renders the results.
fn render(args: &Args, cx: &Context) -> Result<Output, CliError> {
    if args.scenario != ScenarioKind::Herd {
        herd_only(args)?;
    }
    tail::tail_only(args)?;
    slow::slow_only(args)?;
    let names: Vec<String> = args
        .policy
        .iter()
        .chain(&args.compare)
        .map(|n| n.trim().to_owned())
        .filter(|n| !n.is_empty())
        .collect();
    // The same policy twice would be identical rows that compare nothing.
    if let Some(twice) = names
        .iter()
        .enumerate()
        .find_map(|(i, n)| names[..i].contains(n).then_some(n))
    {
        return Err(CliError::usage(format!(
            "policy `{}` is named more than once (POLICY and --compare together), so its rows \
             would be identical: name each policy once",
            super::shown(twice)
        )));
    }
    let mut policies: Vec<(String, Policy)> = if names.is_empty() {
        if args.scenario == ScenarioKind::Herd {
            return Err(CliError::usage(
                "name a POLICY to simulate, e.g. `retry-policy simulate outbox --compare fast` \
                 or `retry-policy simulate outbox --each-jitter`",
            ));
        }
        if args.scenario == ScenarioKind::Tail {
            return Err(CliError::usage(
                "name a POLICY to simulate, e.g. `retry-policy simulate lookup --scenario tail` \
                 with hedge_after = \"p95\" in [policies.lookup]",
            ));
        }
        if args.scenario == ScenarioKind::Slow {
            return Err(CliError::usage(
                "name a POLICY to simulate, e.g. `retry-policy simulate unlimited --compare fixed \
                 --scenario slow -c examples/slow.toml`",
            ));
        }
        Contention::study_policies()
            .into_iter()
            .map(|p| (p.name().unwrap_or("study").to_owned(), p))
            .collect()
    } else {
        let config = cx.load()?;
        let mut found = Vec::with_capacity(names.len());
        for name in &names {
            found.push((name.clone(), (**super::find_policy(&config, name)?).clone()));
        }
        found
    };
    if args.each_jitter {
        policies = each_jitter(&policies);
    }
    let named: Vec<Named<'_>> = policies
        .iter()
        .map(|(name, policy)| Named { name, policy })
        .collect();
    let (text, plot) = match args.scenario {
        ScenarioKind::Herd => {
            let run = run_herd(args, named)?;
            let text = match args.format {
                Format::Table => {
                    table::herd(&run)
                        + &breaker::table(&run)
                        + &chaos::herd(&run)
                        + &chart::herd(&run)
                }
                Format::Json => json::herd(&run),
            };
            (text, args.svg.is_some().then(|| svg::herd(&run)))
        }
        ScenarioKind::Tail => (tail::render(args, &named)?, None),
        ScenarioKind::Slow => (slow::render(args, &named)?, None),
        ScenarioKind::Contention => {
            let run = run_contention(args, named)?;
            let text = match args.format {
                Format::Table => table::contention(&run),
                Format::Json => json::contention(&run),
            };
            (text, args.svg.is_some().then(|| svg::contention(&run)))
        }
    };
    Ok(Output { text, plot })
}

/// `n` ticks as time, saturating (a run stops long before that matters).
pub(crate) fn ticks_to_time(n: u64, tick: Duration) -> Duration {
    let nanos = u128::from(n).saturating_mul(tick.as_nanos());
    Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
}

/// Every policy once per jitter mode, named `policy/mode`, the policy's own
/// mode included.
fn each_jitter(policies: &[(String, Policy)]) -> Vec<(String, Policy)> {
    let modes = [
        Jitter::None,
        Jitter::Full,
        Jitter::Equal,
        Jitter::Decorrelated,
    ];
    policies
        .iter()
        .flat_map(|(name, policy)| {
            modes.into_iter().filter_map(move |jitter| {
                // Changing only the jitter of a valid policy keeps it valid.
                let variant = policy.to_builder().jitter(jitter).build().ok()?;
                Some((format!("{name}/{}", jitter.name()), variant))
            })
        })
        .collect()
}

pub(crate) use super::ms;

#[cfg(test)]
pub(crate) mod fixtures;

#[cfg(test)]
mod tests;
