//! `retry-policy simulate POLICY --scenario tail`: call latency percentiles
//! and extra requests with and without hedging, on a server with a heavy
//! latency tail (retrykit-sim's [`Tail`]).

use super::{Args, CliError, Format, Named, scenario_error};
use crate::{ms, short};
use retrykit_core::hedge::HedgeAfter;
use retrykit_sim::{Tail, TailOutcome, TailReport, TailServer};

/// The tail scenario the flags describe (defaults: the example).
pub(super) fn scenario(args: &Args) -> Tail {
    let d = Tail::default();
    Tail {
        calls: args.calls.unwrap_or(d.calls),
        concurrency: args.concurrency.unwrap_or(d.concurrency),
        server: TailServer {
            slow_share: args.slow_share.unwrap_or(d.server.slow_share),
            slow: args.slow.unwrap_or(d.server.slow),
            fast: args.fast.unwrap_or(d.server.fast),
            load_slowdown: args.load_slowdown.unwrap_or(d.server.load_slowdown),
        },
        seed: args.seed,
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
        Format::Table => table(&tail, &results),
        Format::Json => json(&tail, &results),
    })
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
