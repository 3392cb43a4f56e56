//! `retry-policy simulate POLICY --scenario slow`: goodput, latency and the
//! dependency's load with and without a concurrency limit, against a
//! dependency whose latency grows with its queue (retrykit-sim's [`Slow`]).

use super::{Args, CliError, Format, Named, ScenarioKind, parse_duration, scenario_error};
use crate::{ms, short};
use retrykit_core::limit::LimitKind;
use retrykit_core::limit::adaptive::{AimdSettings, GradientSettings};
use retrykit_sim::{Slow, SlowReport};
use std::time::Duration;

/// The flags of `--scenario slow` (refused with the other scenarios).
#[derive(Debug, clap::Args)]
pub(super) struct SlowFlags {
    /// New calls per millisecond from the whole fleet, above 0, at most
    /// 10000 (slow only) [default: 3]
    #[arg(long, value_name = "CALLS_PER_MS", value_parser = parse_load, allow_negative_numbers = true)]
    pub(super) load: Option<f64>,
    /// How long new calls arrive, 1ms to 1h (slow only) [default: 10s]
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub(super) duration: Option<Duration>,
    /// Calls the dependency serves at once; the rest queue (slow only) [default: 20]
    #[arg(long, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=i64::from(Slow::MAX_SLOTS)))]
    pub(super) slots: Option<u32>,
    /// The time a call takes in a slot, 1ms to 1m (slow only) [default: 10ms]
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub(super) service: Option<Duration>,
    /// Client processes, calls dealt to them in turn, each with its own
    /// limit (slow only) [default: 10]
    #[arg(long, value_name = "P",
          value_parser = clap::value_parser!(u32).range(1..=i64::from(Slow::MAX_PROCESSES)))]
    pub(super) limit_processes: Option<u32>,
    /// Also run each policy that names a limit with each of these adaptive
    /// kinds (at their default settings) sizing its limit, its max_wait and
    /// max_waiting kept (slow only)
    #[arg(long, value_name = "KIND,...", value_delimiter = ',')]
    pub(super) adaptive: Vec<AdaptiveKind>,
}

/// An adaptive kind of limit, as `--adaptive` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum AdaptiveKind {
    Aimd,
    Gradient,
}

impl AdaptiveKind {
    /// retrykit-core's limit kind, at its default settings.
    fn kind(self) -> LimitKind {
        match self {
            AdaptiveKind::Aimd => LimitKind::Aimd(AimdSettings::default()),
            AdaptiveKind::Gradient => LimitKind::Gradient(GradientSettings::default()),
        }
    }
}

/// `--load`: calls per millisecond, a finite number above zero.
fn parse_load(s: &str) -> Result<f64, String> {
    let load: f64 = s.trim().parse().map_err(|_| {
        format!("{s} is not a number; write the calls per millisecond the fleet makes, e.g. 3")
    })?;
    if !(load.is_finite() && load > 0.0 && load <= Slow::MAX_LOAD) {
        return Err(format!(
            "{s} is not a load above 0 and at most 10000 calls per millisecond; use e.g. 3"
        ));
    }
    Ok(load)
}

/// The slow scenario's flags given to another scenario, and the flags the
/// slow scenario does not read given to it: an error naming each.
pub(super) fn slow_only(args: &Args) -> Result<(), CliError> {
    let slow = [
        ("--load", args.slow.load.is_some()),
        ("--duration", args.slow.duration.is_some()),
        ("--slots", args.slow.slots.is_some()),
        ("--service", args.slow.service.is_some()),
        ("--limit-processes", args.slow.limit_processes.is_some()),
        ("--adaptive", !args.slow.adaptive.is_empty()),
    ];
    let lines: Vec<String> = if args.scenario == ScenarioKind::Slow {
        [
            (
                "--clients",
                args.clients.is_some(),
                "use --load and --duration (calls arrive at a rate)",
            ),
            (
                "--horizon",
                args.horizon.is_some(),
                "drop it: a run ends when every call has (at most an hour after --duration)",
            ),
            (
                "--svg",
                args.svg.is_some(),
                "drop it: the slow scenario has no plot",
            ),
        ]
        .iter()
        .filter(|(_, set, _)| *set)
        .map(|(flag, _, fix)| format!("{flag} does not apply to --scenario slow; {fix}"))
        .collect()
    } else {
        slow.iter()
            .filter(|(_, set)| *set)
            .map(|(flag, _)| {
                format!(
                    "{flag} applies to the slow scenario only, not to {}; drop {flag}, or use --scenario slow",
                    super::scenario_name(args.scenario)
                )
            })
            .collect()
    };
    if lines.is_empty() {
        Ok(())
    } else {
        Err(CliError::usage(lines.join("\nerror: ")))
    }
}

/// The slow scenario the flags describe.
pub(super) fn scenario(args: &Args) -> Slow {
    let d = Slow::default();
    Slow {
        load: args.slow.load.unwrap_or(d.load),
        duration: args.slow.duration.unwrap_or(d.duration),
        processes: args.slow.limit_processes.unwrap_or(d.processes),
        slots: args.slow.slots.unwrap_or(d.slots),
        service: args.slow.service.unwrap_or(d.service),
        seed: args.seed,
    }
}

/// Runs every policy and renders the results.
pub(super) fn render(args: &Args, policies: &[Named<'_>]) -> Result<String, CliError> {
    let slow = scenario(args);
    // Each kind once, in the order first named.
    let mut kinds: Vec<AdaptiveKind> = Vec::new();
    for k in &args.slow.adaptive {
        if !kinds.contains(k) {
            kinds.push(*k);
        }
    }
    if !kinds.is_empty() && policies.iter().all(|n| n.policy.limit().is_none()) {
        return Err(CliError::usage(
            "--adaptive runs the policies that name a limit with an adaptive size in its place, \
             and none of these names one; add a policy with limit = \"NAME\" (its max_wait and \
             max_waiting are kept), e.g. --compare fixed with examples/slow.toml",
        ));
    }
    let kinds: Vec<LimitKind> = kinds.iter().map(|k| k.kind()).collect();
    let mut results = Vec::with_capacity(policies.len());
    for named in policies {
        let report = slow.run(named.policy).map_err(|e| scenario_error(&e))?;
        results.push((named.name, report));
        if named.policy.limit().is_none() {
            continue;
        }
        for kind in &kinds {
            let report = slow
                .run_with_limit(named.policy, kind)
                .map_err(|e| scenario_error(&e))?;
            results.push((named.name, report));
        }
    }
    Ok(match args.format {
        Format::Table => table(&slow, &results) + &unmodelled(policies),
        Format::Json => json(&slow, &results),
    })
}

/// A note for each policy with a breaker, budgets or hedging, which this
/// scenario does not simulate, so that no one reads its rows as theirs.
fn unmodelled(policies: &[Named<'_>]) -> String {
    policies
        .iter()
        .filter_map(|n| {
            let p = n.policy;
            let parts: Vec<&str> = [
                ("its breaker", p.breaker().is_some()),
                ("its budgets", !p.budgets().is_empty()),
                ("its hedging", p.hedging().is_some()),
            ]
            .iter()
            .filter(|(_, has)| *has)
            .map(|(what, _)| *what)
            .collect();
            (!parts.is_empty()).then(|| {
                format!(
                    "note: `{}` runs here without {}: the slow scenario models the limit only\n",
                    crate::shown(n.name),
                    parts.join(" or ")
                )
            })
        })
        .collect()
}

/// A rate with up to two decimals.
fn rate(x: f64) -> String {
    let r = format!("{x:.2}");
    r.trim_end_matches('0').trim_end_matches('.').to_owned()
}

fn table(slow: &Slow, results: &[(&str, SlowReport)]) -> String {
    let mut out = format!(
        "slow: {} new calls per ms for {} from {} processes; the dependency serves {} at once, {} each \
         (at most {} calls per ms), and queues the rest (seed {})\n",
        rate(slow.load),
        short(slow.duration),
        slow.processes,
        slow.slots,
        short(slow.service),
        rate(slow.capacity()),
        slow.seed,
    );
    let rows: Vec<[String; 12]> = results
        .iter()
        .map(|(name, r)| {
            [
                crate::shown(name),
                r.limit.clone().unwrap_or_else(|| "none".to_owned()),
                r.limit_at_end
                    .map_or_else(|| "-".to_owned(), |n| n.to_string()),
                rate(r.goodput),
                format!("{:.0}%", 100.0 * r.goodput / slow.capacity()),
                r.calls.to_string(),
                r.succeeded.to_string(),
                r.limit_full.to_string(),
                r.gave_up.to_string(),
                short(r.p99),
                r.peak_in_flight.to_string(),
                r.wasted.to_string(),
            ]
        })
        .collect();
    out.push_str(&crate::list::columns(
        &[
            "POLICY",
            "LIMIT",
            "IN ALL AT END",
            "GOODPUT/MS",
            "OF CAPACITY",
            "CALLS",
            "SUCCEEDED",
            "LIMIT FULL",
            "GAVE UP",
            "P99",
            "PEAK IN FLIGHT",
            "WASTED",
        ],
        &rows,
    ));
    out.push_str(
        "LIMIT: each process's kind of limit (fixed N: N attempts in flight; aimd, gradient: sized by \
         that kind's controller); IN ALL AT END: the processes' sizes summed when calls stopped \
         arriving; GOODPUT/MS: calls that succeeded while \
         calls arrived, per ms; LIMIT FULL: ended for want of a permit; GAVE UP: ended by timeouts; \
         P99: from a call's arrival to its success; PEAK IN FLIGHT: the most calls at the dependency \
         at once, in its slots and its queue; WASTED: attempts it served after their client stopped waiting\n",
    );
    if let Some((name, _)) = results.iter().find(|(_, r)| r.stopped) {
        out.push_str(&format!(
            "note: `{}`'s run stopped with calls still open (UNFINISHED in the JSON)\n",
            crate::shown(name)
        ));
    }
    out
}

fn json(slow: &Slow, results: &[(&str, SlowReport)]) -> String {
    let policies: Vec<serde_json::Value> = results
        .iter()
        .map(|(name, r)| {
            serde_json::json!({
                "policy": name,
                "limit": r.limit,
                "limit_at_end": r.limit_at_end,
                "calls": r.calls,
                "attempts": r.attempts,
                "succeeded": r.succeeded,
                "goodput_per_ms": r.goodput,
                "limit_full": r.limit_full,
                "gave_up": r.gave_up,
                "unfinished": r.unfinished,
                "p50_ms": ms(r.p50),
                "p99_ms": ms(r.p99),
                "peak_in_flight": r.peak_in_flight,
                "wasted": r.wasted,
                "stopped": r.stopped,
            })
        })
        .collect();
    let value = serde_json::json!({
        "scenario": "slow",
        "load_per_ms": slow.load,
        "duration_ms": ms(slow.duration),
        "processes": slow.processes,
        "slots": slow.slots,
        "service_ms": ms(slow.service),
        "capacity_per_ms": slow.capacity(),
        "seed": slow.seed,
        "policies": policies,
    });
    serde_json::to_string_pretty(&value).unwrap_or_default() + "\n"
}
