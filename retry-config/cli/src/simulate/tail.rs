//! `retry-policy simulate POLICY --scenario tail`: call latency percentiles
//! and extra requests with and without hedging, on a server with a heavy
//! latency tail (retrykit-sim's [`Tail`]).

use super::{
    Args, CliError, Format, Named, ScenarioKind, parse_duration, scenario_error, scenario_name,
};
use crate::{ms, short};
use retrykit_core::hedge::HedgeAfter;
use retrykit_sim::{Tail, TailOutcome, TailReport, TailServer};
use std::time::Duration;

/// The flags of `--scenario tail` (refused with the other scenarios).
#[derive(Debug, clap::Args)]
pub(super) struct TailFlags {
    /// Calls in all (tail only) [default: 20000]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=retrykit_sim::Tail::MAX_CALLS))]
    pub(super) calls: Option<u64>,
    /// Clients calling at once, one call each at a time (tail only) [default: 20]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=retrykit_sim::Tail::MAX_CONCURRENCY as i64))]
    pub(super) concurrency: Option<u32>,
    /// The share of requests that are slow, 0 to 1 (tail only) [default: 0.01]
    #[arg(long, value_name = "SHARE")]
    pub(super) slow_share: Option<f64>,
    /// A slow request's latency (tail only) [default: 1s]
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub(super) slow: Option<Duration>,
    /// A fast request's mean latency, spread ±50% (tail only) [default: 5ms]
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub(super) fast: Option<Duration>,
    /// How much each request in progress slows a new one, 0 to 10 (tail only) [default: 0]
    #[arg(long, value_name = "FACTOR")]
    pub(super) load_slowdown: Option<f64>,
}

/// The tail scenario's flags given to another scenario, and the other
/// scenarios' flags (and the plot) given to the tail scenario: an error
/// naming each.
pub(super) fn tail_only(args: &Args) -> Result<(), CliError> {
    let tail = [
        ("--calls", args.tail.calls.is_some()),
        ("--concurrency", args.tail.concurrency.is_some()),
        ("--slow-share", args.tail.slow_share.is_some()),
        ("--slow", args.tail.slow.is_some()),
        ("--fast", args.tail.fast.is_some()),
        ("--load-slowdown", args.tail.load_slowdown.is_some()),
    ];
    let lines: Vec<String> = if args.scenario == ScenarioKind::Tail {
        [
            ("--clients", args.clients.is_some(), "use --concurrency"),
            (
                "--horizon",
                args.horizon.is_some(),
                "drop it: every call ends",
            ),
            (
                "--svg",
                args.svg.is_some(),
                "drop it: the tail scenario has no plot",
            ),
        ]
        .iter()
        .filter(|(_, set, _)| *set)
        .map(|(flag, _, fix)| format!("{flag} does not apply to --scenario tail; {fix}"))
        .collect()
    } else {
        tail.iter()
            .filter(|(_, set)| *set)
            .map(|(flag, _)| {
                format!(
                    "{flag} applies to the tail scenario only, not to {}; drop {flag}, or use --scenario tail",
                    scenario_name(args.scenario)
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

/// The tail scenario the flags describe (defaults: the example).
pub(super) fn scenario(args: &Args) -> Tail {
    let d = Tail::default();
    Tail {
        calls: args.tail.calls.unwrap_or(d.calls),
        concurrency: args.tail.concurrency.unwrap_or(d.concurrency),
        server: TailServer {
            slow_share: args.tail.slow_share.unwrap_or(d.server.slow_share),
            slow: args.tail.slow.unwrap_or(d.server.slow),
            fast: args.tail.fast.unwrap_or(d.server.fast),
            load_slowdown: args.tail.load_slowdown.unwrap_or(d.server.load_slowdown),
        },
        seed: args.seed,
        timer: args
            .timer_resolution
            .map(|resolution| retrykit_sim::TimerModel {
                resolution,
                skipped: args.timer_skipped,
            }),
    }
}

/// Runs every policy and renders the results.
pub(super) fn render(args: &Args, policies: &[Named<'_>]) -> Result<String, CliError> {
    let tail = scenario(args);
    let mut results = Vec::with_capacity(policies.len());
    for named in policies {
        let report = tail.run(named.policy).map_err(|e| scenario_error(&e))?;
        results.push((named.name, report));
    }
    Ok(match args.format {
        Format::Table => table(&tail, &results) + &throttling_notes(policies),
        Format::Json => json(&tail, &results),
    })
}

/// A note for each policy with a `grpc_throttling` budget: the scenario
/// runs it, but its server fails no request, and only failed attempts drain
/// gRFC A6's bucket, so it never refuses a hedge here.
fn throttling_notes(policies: &[Named<'_>]) -> String {
    policies
        .iter()
        .filter(|n| n.policy.budgets().iter().any(|b| b.throttling().is_some()))
        .map(|n| {
            format!(
                "note: `{}`'s grpc_throttling budget never refuses here: the tail server fails no request, and only failed attempts drain its bucket\n",
                n.name
            )
        })
        .collect()
}

/// How the policy hedges, in a few words.
fn hedging(report: &TailReport) -> String {
    match report.settings {
        None => "none".to_owned(),
        Some(s) => match s.after {
            HedgeAfter::Fixed(_) => format!("after {}", s.after),
            HedgeAfter::Percentile(_) => format!("at {} (floor {})", s.after, short(s.floor)),
        },
    }
}

fn table(tail: &Tail, results: &[(&str, TailReport)]) -> String {
    let s = &tail.server;
    let mut out = format!(
        "tail: {} calls by {} clients; {} of requests take {}, the rest {} ±50%{}; seed {}\n",
        tail.calls,
        tail.concurrency,
        percent(s.slow_share),
        short(s.slow),
        short(s.fast),
        if s.load_slowdown > 0.0 {
            format!(
                ", each request in progress slowing a new one by {}",
                percent(s.load_slowdown)
            )
        } else {
            String::new()
        },
        tail.seed,
    );
    let mut rows = Vec::new();
    for (name, r) in results {
        let mut row = |label: String, o: &TailOutcome| {
            rows.push([
                (*name).to_owned(),
                label,
                short(o.p50),
                short(o.p99),
                short(o.p999),
                percent(o.extra_share),
                o.hedges_won.to_string(),
                o.hedges_refused.to_string(),
            ]);
        };
        row("unhedged".to_owned(), &r.unhedged);
        if r.settings.is_some() {
            row(hedging(r), &r.hedged);
        }
    }
    out.push_str(&crate::list::columns(
        &[
            "POLICY",
            "HEDGING",
            "P50",
            "P99",
            "P99.9",
            "EXTRA",
            "HEDGES WON",
            "REFUSED",
        ],
        &rows,
    ));
    out.push_str("EXTRA: requests beyond one per call; REFUSED: hedges the cap (hedge_share) or a budget refused\n");
    out
}

/// An outcome as the JSON of this command and of the `tail` example.
pub(crate) fn outcome_json(o: &TailOutcome) -> serde_json::Value {
    serde_json::json!({
        "p50_ms": ms(o.p50),
        "p99_ms": ms(o.p99),
        "p99.9_ms": ms(o.p999),
        "extra_share": o.extra_share,
        "hedges_won": o.hedges_won,
        "hedges": o.hedges,
        "hedges_refused": o.hedges_refused,
    })
}

fn json(tail: &Tail, results: &[(&str, TailReport)]) -> String {
    let s = &tail.server;
    let policies: Vec<serde_json::Value> = results
        .iter()
        .map(|(name, r)| {
            serde_json::json!({
                "policy": name,
                "hedge_after": r.settings.map(|s| s.after.to_string()),
                "hedged": r.settings.map(|_| outcome_json(&r.hedged)),
                "unhedged": outcome_json(&r.unhedged),
            })
        })
        .collect();
    let value = serde_json::json!({
        "scenario": "tail",
        "calls": tail.calls,
        "concurrency": tail.concurrency,
        "slow_share": s.slow_share,
        "slow_ms": ms(s.slow),
        "fast_ms": ms(s.fast),
        "load_slowdown": s.load_slowdown,
        "seed": tail.seed,
        "policies": policies,
    });
    serde_json::to_string_pretty(&value).unwrap_or_default() + "\n"
}

/// A share as a percentage with up to two decimals.
fn percent(share: f64) -> String {
    let p = format!("{:.2}", share * 100.0);
    let p = p.trim_end_matches('0').trim_end_matches('.');
    format!("{p}%")
}
