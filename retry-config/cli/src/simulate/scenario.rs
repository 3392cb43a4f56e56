//! The scenarios built from the command's flags and run for each policy:
//! the herd and the contention study (the tail scenario is `tail`'s), with
//! each problem worded in terms of the flags.

use super::{
    Args, CliError, ContentionRun, DEFAULT_CAPACITY, DEFAULT_MAX_CALLS, DEFAULT_OUTAGE,
    DEFAULT_TICK, HerdRun, Named, ScenarioKind, breaker,
};
use retrykit_config::show_duration;
use retrykit_sim::{Contention, Herd, SendRate, SimulateError, TimerModel};

pub(super) fn run_herd<'a>(args: &Args, policies: Vec<Named<'a>>) -> Result<HerdRun<'a>, CliError> {
    let mut herd = Herd {
        clients: args.clients.unwrap_or(10_000),
        outage: args.outage.unwrap_or(DEFAULT_OUTAGE),
        capacity: args.capacity.unwrap_or(DEFAULT_CAPACITY),
        tick: args.tick.unwrap_or(DEFAULT_TICK),
        horizon: args.horizon.unwrap_or(Herd::default().horizon),
        max_calls: args.max_calls.unwrap_or(DEFAULT_MAX_CALLS),
        seed: args.seed,
        timer: args.timer_resolution.map(|resolution| TimerModel {
            resolution,
            skipped: args.timer_skipped,
        }),
        send: args.send_rate.map(|per_ms| SendRate {
            per_ms,
            processes: args.send_processes.unwrap_or(1),
        }),
        ..Herd::default()
    };
    if herd.tick > herd.horizon {
        return Err(CliError::usage(format!(
            "--tick {} is longer than the --horizon of {}, so not one tick would run; use a shorter --tick or a longer --horizon",
            show_duration(herd.tick),
            show_duration(herd.horizon)
        )));
    }
    herd.breaker = breaker::scope(args, &herd)?;
    let mut results = Vec::with_capacity(policies.len());
    for named in policies {
        let report = herd.run(named.policy).map_err(|e| scenario_error(&e))?;
        results.push((named, report));
    }
    breaker::herd_run(herd, results)
}

/// The scenario's problems in terms of this command's flags (`--tick`, not
/// the library's field `tick`), one per line.
pub(super) fn scenario_error(e: &SimulateError) -> CliError {
    let lines: Vec<String> = e
        .problems()
        .iter()
        .map(|p| {
            format!(
                "--{} {}; {}",
                p.field.replace(['_', '.'], "-"),
                p.rule,
                p.fix
            )
        })
        .collect();
    CliError::usage(format!(
        "the scenario cannot be simulated:\n  {}",
        lines.join("\n  ")
    ))
}

/// The herd's flags given to another scenario, which has no outage, no
/// server capacity and no tick (each network hop takes its own time): an
/// error naming each, rather than ignoring them.
pub(super) fn herd_only(args: &Args) -> Result<(), CliError> {
    let given = [
        ("--tick", args.tick.is_some()),
        ("--outage", args.outage.is_some()),
        ("--capacity", args.capacity.is_some()),
        ("--max-calls", args.max_calls.is_some()),
        (
            "--timer-resolution",
            args.timer_resolution.is_some() && args.scenario != ScenarioKind::Tail,
        ),
        ("--send-rate", args.send_rate.is_some()),
        (
            "--breaker-processes",
            args.breaker.breaker_processes.is_some(),
        ),
    ];
    let lines: Vec<String> = given
        .iter()
        .filter(|(_, set)| *set)
        .map(|(flag, _)| {
            format!(
                "{flag} applies to the herd scenario only, not to --scenario contention; \
                 drop {flag}, or use --scenario herd"
            )
            .replace("--scenario contention", scenario_name(args.scenario))
        })
        .collect();
    if lines.is_empty() {
        Ok(())
    } else {
        Err(CliError::usage(lines.join("\nerror: ")))
    }
}

/// `--scenario NAME` as written.
pub(super) fn scenario_name(kind: ScenarioKind) -> &'static str {
    match kind {
        ScenarioKind::Herd => "--scenario herd",
        ScenarioKind::Contention => "--scenario contention",
        ScenarioKind::Tail => "--scenario tail",
        ScenarioKind::Slow => "--scenario slow",
    }
}

/// The largest fleet `--scenario contention` accepts.
const MAX_CONTENDING: u32 = 5_000;

pub(super) fn run_contention<'a>(
    args: &Args,
    policies: Vec<Named<'a>>,
) -> Result<ContentionRun<'a>, CliError> {
    let scenario = Contention {
        seed: args.seed,
        horizon: args.horizon.unwrap_or(Contention::default().horizon),
        ..Contention::default()
    };
    let sizes: Vec<u32> = match args.clients {
        // Every lost write makes every other client try again: the work grows
        // with the square of the fleet, so keep it to what finishes quickly.
        Some(n) if n > MAX_CONTENDING => {
            return Err(CliError::usage(format!(
                "--clients {n} is too many for --scenario contention (the work grows with the square of the fleet); use at most {MAX_CONTENDING}"
            )));
        }
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
            reports.push(fleet.run(named.policy).map_err(|e| scenario_error(&e))?);
        }
        results.push((named, reports));
    }
    Ok(ContentionRun { scenario, results })
}
