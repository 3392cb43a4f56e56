//! A policy's circuit breaker in the herd: each policy with a breaker runs
//! three times on the same scenario and seed, without its breaker, with
//! one breaker per client process (local) and with one for the whole fleet,
//! and the outage's figures are shown side by side: the calls that reached
//! the server while it was down, the busiest tick after it, and the time
//! from its end until every client was done. The policies of the run
//! without a breaker have their one run in the same table, so that
//! several policies of one file compare on the same outage (`--compare`).

use super::table::{grid, rate};
use super::{Args, CliError, HerdRun, Named, ms, scenario_error};
use crate::{short, shown};
use retrykit_core::Policy;
use retrykit_core::breaker::CircuitBreaker;
use retrykit_sim::{BreakerScope, Herd, HerdReport};
use serde_json::{Value, json};

/// `--breaker-processes` by default (at most the clients): a fleet of ten
/// hosts, so that local breakers differ from one fleet-wide breaker.
const DEFAULT_PROCESSES: u32 = 10;

/// The herd's flag for policies with a circuit breaker.
#[derive(Debug, clap::Args)]
pub struct BreakerFlags {
    /// Client processes (contiguous shares of the fleet) for a policy's
    /// circuit breaker: its local run gives each its own breaker, its fleet
    /// run one breaker for all [default: --send-processes if given, else
    /// 10, at most --clients]
    #[arg(long, value_name = "P",
          value_parser = clap::value_parser!(u32).range(1..=i64::from(BreakerScope::MAX_PROCESSES)))]
    pub(super) breaker_processes: Option<u32>,
}

/// The scope of the herd's main runs: local, in `--breaker-processes`
/// processes, else the send model's, else the default. The send model's
/// and the breaker's are the same client processes, so two different
/// counts are an error.
pub(super) fn scope(args: &Args, herd: &Herd) -> Result<BreakerScope, CliError> {
    let send = herd.send.map(|s| s.processes);
    let processes = match (args.breaker.breaker_processes, send) {
        (Some(b), Some(s)) if b != s => {
            return Err(CliError::usage(format!(
                "--breaker-processes {b} and --send-processes {s} differ, but both count the same client \
                 processes; give one of them, or the same number to both"
            )));
        }
        (Some(p), _) | (None, Some(p)) => p,
        (None, None) => DEFAULT_PROCESSES.min(herd.clients.max(1)),
    };
    Ok(BreakerScope::Local { processes })
}

/// One policy's three runs.
pub(crate) struct Comparison<'a> {
    pub(crate) name: &'a str,
    pub(crate) breaker: &'a CircuitBreaker,
    /// Client processes of the local run.
    pub(crate) processes: u32,
    /// Without the breaker, local, fleet.
    pub(crate) runs: [(&'static str, HerdReport); 3],
}

/// The herd's `results` (run with local breakers, as `herd.breaker`
/// says), and for each policy with a breaker the runs without it and with
/// one for the fleet.
pub(super) fn herd_run<'a>(
    herd: Herd,
    results: Vec<(Named<'a>, HerdReport)>,
) -> Result<HerdRun<'a>, CliError> {
    let breakers = compare_all(&herd, &results)?;
    Ok(HerdRun {
        herd,
        results,
        breakers,
    })
}

/// For each policy of `results` with a breaker, the runs without it and
/// with one for the fleet, beside its local run.
fn compare_all<'a>(
    herd: &Herd,
    results: &[(Named<'a>, HerdReport)],
) -> Result<Vec<Comparison<'a>>, CliError> {
    let run = |scope: BreakerScope, policy: &Policy| {
        Herd {
            breaker: scope,
            ..herd.clone()
        }
        .run(policy)
        .map_err(|e| scenario_error(&e))
    };
    let processes = match herd.breaker {
        BreakerScope::Local { processes } => processes,
        BreakerScope::Fleet => 1,
    };
    let mut comparisons = Vec::new();
    for (named, local) in results {
        let Some(breaker) = named.policy.breaker() else {
            continue;
        };
        // Dropping the breaker of a valid policy keeps it valid.
        let without = named
            .policy
            .to_builder()
            .breaker(None)
            .build()
            .map_err(|e| CliError::usage(e.to_string()))?;
        comparisons.push(Comparison {
            name: named.name,
            breaker,
            processes,
            runs: [
                ("none", run(herd.breaker, &without)?),
                ("local", local.clone()),
                ("fleet", run(BreakerScope::Fleet, named.policy)?),
            ],
        });
    }
    Ok(comparisons)
}

/// The breaker's settings in a line.
fn settings(b: &CircuitBreaker) -> String {
    format!(
        "opens when {}% of at least {} attempts in {} failed, for {} ({} doubling up to {}, \
         at most probe_every {}, less up to {}% at random), then lets {} probe(s) through; \
         on closing releases the calls it held back from one per {}, doubling every {}",
        rate(b.failure_ratio() * 100.0),
        b.min_calls(),
        short(b.window()),
        short(b.open_for().min(b.probe_every())),
        short(b.open_for()),
        short(b.max_open_for()),
        short(b.probe_every()),
        rate(b.open_jitter() * 100.0),
        b.probes(),
        short(b.release_ramp()),
        short(b.release_ramp()),
    )
}

/// The outage's figures side by side, in one table for every policy of the
/// run once one has a breaker: a policy with a breaker has its three rows
/// (none, local, fleet), each other policy its one run (`none`), in the
/// order the policies were named; each breaker's settings are said above.
pub(super) fn table(run: &HerdRun<'_>) -> String {
    let (herd, comparisons) = (&run.herd, &run.breakers);
    let Some(first) = comparisons.first() else {
        return String::new();
    };
    let mut out = String::new();
    for c in comparisons {
        let breaker = match c.breaker.name() {
            Some(b) => format!("circuit breaker `{}`", shown(b)),
            None => "a circuit breaker".to_owned(),
        };
        out.push_str(&format!(
            "\n`{}` has {breaker}: {}",
            shown(c.name),
            settings(c.breaker)
        ));
    }
    out.push_str(&format!(
        "\nlocal: one breaker per client process, {} processes of about {} clients (the row above); \
         fleet: one breaker for all {} clients\n",
        first.processes,
        herd.clients / first.processes.max(1),
        herd.clients,
    ));
    let header: Vec<String> = [
        "POLICY",
        "BREAKER",
        "OUTAGE CALLS",
        "PEAK AFTER",
        "PEAK AT",
        "DRAIN",
        "REFUSED",
        "SUCCEEDED",
        "GAVE UP",
        "OF WHICH OPEN",
        "UNFINISHED",
    ]
    .map(str::to_owned)
    .to_vec();
    let mut rows: Vec<Vec<String>> = Vec::new();
    for (named, report) in &run.results {
        match comparisons.iter().find(|c| c.name == named.name) {
            Some(c) => rows.extend(c.runs.iter().map(|(scope, r)| row(c.name, scope, r))),
            None => rows.push(row(named.name, "none", report)),
        }
    }
    out.push_str(&grid(&header, &rows, 2));
    out.push_str(
        "OUTAGE CALLS: calls that reached the server while it was down, the first wave included; \
         PEAK AFTER: calls in the busiest tick once it was back; DRAIN: from the outage's end until \
         every client succeeded or gave up (- if the run stopped first); REFUSED: attempts the breaker \
         did not send; OF WHICH OPEN: gave up because the breaker refused their last attempt\n",
    );
    out
}

/// One run's row of the table.
fn row(name: &str, scope: &str, r: &HerdReport) -> Vec<String> {
    let peak_at = if r.peak_after_outage == 0 {
        "-".to_owned()
    } else {
        short(super::ticks_to_time(r.peak_after_outage_tick, r.tick))
    };
    vec![
        shown(name),
        scope.to_owned(),
        r.outage_calls.to_string(),
        r.peak_after_outage.to_string(),
        peak_at,
        r.drain.map_or_else(|| "-".to_owned(), short),
        r.refused.to_string(),
        r.successes.to_string(),
        r.give_ups.to_string(),
        r.breaker_give_ups.to_string(),
        r.unfinished.to_string(),
    ]
}

/// The comparisons as JSON values, one per policy with a breaker.
pub(super) fn json(comparisons: &[Comparison<'_>]) -> Vec<Value> {
    comparisons
        .iter()
        .map(|c| {
            let b = c.breaker;
            let runs: Vec<Value> = c
                .runs
                .iter()
                .map(|(scope, r)| {
                    json!({
                        "breaker": scope,
                        "outage_calls": r.outage_calls,
                        "peak_after_outage_per_tick": r.peak_after_outage,
                        "peak_after_outage_at_ms": ms(r.tick) * r.peak_after_outage_tick as f64,
                        "drain_ms": r.drain.map(ms),
                        "calls": r.calls,
                        "refused": r.refused,
                        "successes": r.successes,
                        "give_ups": r.give_ups,
                        "breaker_give_ups": r.breaker_give_ups,
                        "unfinished": r.unfinished,
                    })
                })
                .collect();
            json!({
                "policy": c.name,
                "breaker": b.name(),
                "failure_ratio": b.failure_ratio(),
                "min_calls": b.min_calls(),
                "window_ms": ms(b.window()),
                "open_for_ms": ms(b.open_for()),
                "max_open_for_ms": ms(b.max_open_for()),
                "open_jitter": b.open_jitter(),
                "probes": b.probes(),
                "processes": c.processes,
                "runs": runs,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::{HerdRun, Named};
    use super::*;
    use retrykit_core::Jitter;
    use std::sync::Arc;
    use std::time::Duration;

    /// outbox's schedule (100 ms doubling to 30 s, 8 attempts) with the
    /// default breaker (10% of 100 attempts in 30 s; open 5 s, up to 30 s).
    fn outbox(jitter: Jitter) -> Policy {
        let breaker = CircuitBreaker::builder().name("broker").build().unwrap();
        Policy::builder()
            .base(Duration::from_millis(100))
            .cap(Duration::from_secs(30))
            .max_attempts(8)
            .jitter(jitter)
            .breaker(Some(Arc::new(breaker)))
            .build()
            .unwrap()
    }

    fn herd_of<'a>(herd: Herd, policies: &'a [(String, Policy)]) -> HerdRun<'a> {
        let results = policies
            .iter()
            .map(|(name, policy)| (Named { name, policy }, herd.run(policy).unwrap()))
            .collect();
        herd_run(herd, results).unwrap()
    }

    /// 2000 clients, a 3 s outage, then 20 calls per 1 ms tick, in 4 processes.
    fn herd() -> Herd {
        Herd {
            clients: 2000,
            outage: Duration::from_secs(3),
            capacity: 20,
            seed: 5,
            breaker: BreakerScope::Local { processes: 4 },
            ..Herd::default()
        }
    }

    #[test]
    fn a_policy_with_a_breaker_runs_without_it_locally_and_fleet_wide() {
        let braked = outbox(Jitter::Full);
        let policies = vec![
            ("outbox".to_owned(), braked.clone()),
            (
                "plain".to_owned(),
                braked.to_builder().breaker(None).build().unwrap(),
            ),
        ];
        let run = herd_of(herd(), &policies);
        assert_eq!(run.breakers.len(), 1, "one policy has a breaker");
        let c = &run.breakers[0];
        assert_eq!((c.name, c.processes), ("outbox", 4));
        let [(none, without), (local, locally), (fleet, fleet_wide)] = &c.runs;
        assert_eq!([*none, *local, *fleet], ["none", "local", "fleet"]);
        // The main table's rows are the local run and the plain policy.
        assert_eq!(&run.results[0].1, locally);
        assert_eq!(without, &run.results[1].1);
        assert_eq!(locally.breaker, Some(BreakerScope::Local { processes: 4 }));
        assert_eq!(fleet_wide.breaker, Some(BreakerScope::Fleet));
        assert!(fleet_wide.outage_calls < without.outage_calls);
        assert!(locally.outage_calls < without.outage_calls);

        let text = table(&run);
        assert!(text.contains("`outbox` has circuit breaker `broker`: opens when 10% of at least 100 attempts in 30s failed, for 1.25s (5s doubling up to 30s, at most probe_every 1.25s"), "{text}");
        assert!(
            text.contains("4 processes of about 500 clients (the row above)"),
            "{text}"
        );
        for (scope, r) in &c.runs {
            let row = text
                .lines()
                .find(|l| l.starts_with(&format!("outbox  {scope} ")))
                .unwrap_or_else(|| panic!("no {scope} row:\n{text}"));
            let cells: Vec<&str> = row.split_whitespace().collect();
            assert_eq!(cells[2], r.outage_calls.to_string(), "{row}");
            assert_eq!(cells[3], r.peak_after_outage.to_string(), "{row}");
            assert_eq!(cells[6], r.refused.to_string(), "{row}");
        }
        // The policy without a breaker has its one run in the same table,
        // after outbox's three, in the order the policies were named.
        let policies: Vec<&str> = text
            .lines()
            .skip_while(|l| !l.starts_with("POLICY"))
            .skip(1)
            .take_while(|l| !l.starts_with("OUTAGE CALLS:"))
            .map(|l| l.split_whitespace().next().unwrap())
            .collect();
        assert_eq!(policies, ["outbox", "outbox", "outbox", "plain"], "{text}");
        let plain = text.lines().find(|l| l.starts_with("plain ")).unwrap();
        let cells: Vec<&str> = plain.split_whitespace().collect();
        let r = &run.results[1].1;
        assert_eq!(cells[1], "none", "{plain}");
        assert_eq!(cells[2], r.outage_calls.to_string(), "{plain}");
        assert_eq!(cells[3], r.peak_after_outage.to_string(), "{plain}");
        assert_eq!(cells[7], r.successes.to_string(), "{plain}");

        let v: Value = serde_json::from_str(&super::super::json::herd(&run)).unwrap();
        let b = &v["breakers"][0];
        assert_eq!(
            (&b["policy"], &b["breaker"], &b["processes"]),
            (&json!("outbox"), &json!("broker"), &json!(4))
        );
        assert_eq!(b["min_calls"], 100);
        for (i, (scope, r)) in c.runs.iter().enumerate() {
            let j = &b["runs"][i];
            assert_eq!(j["breaker"], *scope);
            assert_eq!(j["outage_calls"], r.outage_calls);
            assert_eq!(j["peak_after_outage_per_tick"], r.peak_after_outage);
            assert_eq!(j["drain_ms"], json!(r.drain.map(ms)));
            assert_eq!(j["refused"], r.refused);
        }
    }

    #[test]
    fn without_a_breaker_the_output_is_what_it_was() {
        let policies = vec![(
            "plain".to_owned(),
            outbox(Jitter::Full)
                .to_builder()
                .breaker(None)
                .build()
                .unwrap(),
        )];
        let run = herd_of(herd(), &policies);
        assert!(run.breakers.is_empty());
        assert_eq!(table(&run), "");
        let v: Value = serde_json::from_str(&super::super::json::herd(&run)).unwrap();
        assert!(v.get("breakers").is_none());
    }

    #[test]
    fn an_unnamed_breaker_is_called_a_circuit_breaker() {
        let unnamed = Arc::new(CircuitBreaker::builder().build().unwrap());
        let p = outbox(Jitter::Full)
            .to_builder()
            .breaker(Some(unnamed))
            .build()
            .unwrap();
        let policies = vec![("anon".to_owned(), p)];
        let run = herd_of(herd(), &policies);
        let text = table(&run);
        assert!(
            text.contains("`anon` has a circuit breaker: opens when"),
            "{text}"
        );
    }
}
