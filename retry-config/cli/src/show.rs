//! `retry-policy show POLICY`: the schedule a failing call would follow,
//! attempt by attempt, computed by retrykit-core's own decision logic with
//! instant failures (so the times are waits only).

use super::{CliError, Context, ms, short};
use retrykit_config::show_duration;
use retrykit_core::hedge::{HedgeAfter, HedgeSettings};
use retrykit_core::kernel::{Decider, Failure, Step};
use retrykit_core::{Class, Ending, Policy};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Options of `show`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The policy to show
    #[arg(value_name = "POLICY")]
    policy: String,
    /// How many attempts to show at most [default: max_attempts, or 20 when unlimited]
    #[arg(long, short = 'n', value_name = "N", value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_SHOWN)))]
    attempts: Option<u32>,
    /// Seed for the jitter, to reproduce a schedule [default: random, printed]
    #[arg(long, value_name = "S")]
    seed: Option<u64>,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

/// The most attempts `--attempts` shows: a table longer than this is read by no one.
const MAX_SHOWN: u32 = 100_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    Table,
    Json,
}

/// One attempt of the schedule.
struct Row {
    attempt: u32,
    starts_at: Duration,
    /// The envelope and the sampled wait after this attempt fails, when a retry follows.
    wait: Option<(Duration, Duration)>,
}

/// Why the shown schedule stops.
enum End {
    Limit(u32),
    Deadline(Duration),
    NotShown,
}

/// Prints the schedule.
pub fn run(args: Args, cx: &Context) -> Result<ExitCode, CliError> {
    let config = cx.load()?;
    let policy = super::find_policy(&config, &args.policy)?;
    let seed = args.seed.unwrap_or_else(random_seed);
    let shown = args.attempts.unwrap_or(match policy.max_attempts() {
        Some(n) => n.min(1000),
        None => 20,
    });
    let (rows, end) = schedule(policy, seed, shown);
    let profile = config.profile();
    match args.format {
        Format::Table => {
            out!(
                "{}",
                table(&args.policy, profile, policy, seed, &rows, &end)
            );
            if let Some(line) = chaos(&config, policy) {
                outln!("{line}");
            }
        }
        Format::Json => {
            let value = json(&args.policy, profile, policy, seed, &rows, &end);
            outln!(
                "{}",
                serde_json::to_string_pretty(&value).unwrap_or_default()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn random_seed() -> u64 {
    use std::hash::{BuildHasher, RandomState};
    RandomState::new().hash_one(std::time::SystemTime::now())
}

/// Drives retrykit-core's `Decider` with failures that take no time.
fn schedule(policy: &Policy, seed: u64, shown: u32) -> (Vec<Row>, End) {
    // No budget or breaker (they are shared state) and every class
    // retried: show the policy's own limits.
    let policy = policy
        .to_builder()
        .budget(None)
        .breaker(None)
        .limit(None)
        .retry_any_class()
        .build()
        .unwrap_or_else(|_| policy.clone());
    let mut decider = Decider::new(Some(seed));
    let t0 = Instant::now();
    let mut elapsed = Duration::ZERO;
    let mut rows = Vec::new();
    for attempt in 1..=shown {
        let Some(now) = t0.checked_add(elapsed) else {
            return (rows, End::NotShown);
        };
        decider.begin_attempt(&policy, now);
        let envelope = policy.envelope(attempt - 1);
        let failure = Failure {
            class: Class::TRANSIENT,
            hint: None,
            allowed: true,
        };
        match decider.after_failure(&policy, failure, now) {
            Step::Retry { wait, .. } => {
                rows.push(Row {
                    attempt,
                    starts_at: elapsed,
                    wait: Some((envelope, wait)),
                });
                elapsed = elapsed.saturating_add(wait);
            }
            Step::GiveUp(ending) => {
                rows.push(Row {
                    attempt,
                    starts_at: elapsed,
                    wait: None,
                });
                let end = match ending {
                    Ending::Deadline => End::Deadline(policy.deadline().unwrap_or_default()),
                    _ => End::Limit(attempt),
                };
                return (rows, end);
            }
        }
    }
    (rows, End::NotShown)
}

fn table(
    name: &str,
    profile: Option<&str>,
    policy: &Policy,
    seed: u64,
    rows: &[Row],
    end: &End,
) -> String {
    let mut out = format!(
        "policy `{name}`{}: {} backoff, {} jitter, seed {seed}\n",
        profile
            .map(|p| format!(" (profile `{p}`)"))
            .unwrap_or_default(),
        policy.backoff().name(),
        policy.jitter().name(),
    );
    let cells: Vec<[String; 5]> = rows
        .iter()
        .map(|r| {
            let (envelope, wait, next) = match r.wait {
                Some((e, w)) => (short(e), short(w), short(r.starts_at.saturating_add(w))),
                None => ("-".into(), "-".into(), "-".into()),
            };
            [
                r.attempt.to_string(),
                short(r.starts_at),
                envelope,
                wait,
                next,
            ]
        })
        .collect();
    out.push_str(&super::list::columns(
        &["ATTEMPT", "STARTS AT", "ENVELOPE", "WAIT", "CUMULATIVE"],
        &cells,
    ));
    out.push_str(&match end {
        End::Limit(n) => {
            format!("the attempt limit ends the call after attempt {n} (max_attempts = {n})\n")
        }
        End::Deadline(deadline) => format!(
            "the deadline ({}) ends the call after attempt {}: the next wait would pass it\n",
            show_duration(*deadline),
            rows.len()
        ),
        End::NotShown if rows.len() >= MAX_SHOWN as usize => format!(
            "(the call would go on; showing {} attempts, the most --attempts allows)\n",
            rows.len()
        ),
        End::NotShown => format!(
            "(the call would go on; showing {} attempts, use --attempts N for more)\n",
            rows.len()
        ),
    });
    out.push_str(
        "times assume each attempt fails instantly; WAIT is sampled, ENVELOPE is its upper end\n",
    );
    if policy.budget().is_some() {
        out.push_str(
            "under load its budgets may end the call sooner or make it wait longer (not shown)\n",
        );
    }
    for t in policy.budgets().iter().filter_map(|b| b.throttling()) {
        out.push_str(&format!("budget {}\n", super::list::throttling(t)));
    }
    if let Some(b) = policy.breaker() {
        out.push_str(&format!(
            "breaker `{}` is asked before every attempt: while it is open no attempt is sent, and the call waits for it or ends (not shown; `retry-policy explain {}`)\n",
            super::shown(b.name().unwrap_or_default()),
            super::shown(b.name().unwrap_or_default())
        ));
        if let Some(line) = super::list::fleet_link(b) {
            out.push_str(&format!(
                "breaker `{}` is {line}\n",
                super::shown(b.name().unwrap_or_default())
            ));
        }
    }
    if let Some(l) = policy.limit() {
        let name = super::shown(l.name().unwrap_or_default());
        let size = match l.adapts() {
            false => format!("{} in flight", l.max_in_flight()),
            true => format!(
                "the size of an adaptive limit ({})",
                super::list::limit_size(l)
            ),
        };
        out.push_str(&format!(
            "limit `{name}` holds every attempt to {size}: an attempt waits for a permit, and a call that gets none in time ends limit_full (not shown; `retry-policy explain {name}`)\n",
        ));
    }
    if let Some(line) = hedging(policy) {
        out.push_str(&line);
        out.push('\n');
    }
    if let Some(codes) = grpc_codes(policy) {
        out.push_str(&format!(
            "under the grpc layer, the gRPC codes {} are retried (and non-fatal to hedges); every other code ends the call (grpc_retry_on)\n",
            codes.join(", ")
        ));
    }
    out
}

/// What the policy's chaos does, in one line: active (where, at what
/// rates), or switched off by `RETRY_CHAOS=off`; `None` without chaos.
fn chaos(config: &retrykit_config::Config, policy: &Policy) -> Option<String> {
    match policy.chaos() {
        Some(c) => Some(format!(
            "chaos is active{}: {c}; an injected fault fails an attempt without sending it, injected latency delays it (not shown above; RETRY_CHAOS=off turns it off)",
            config
                .profile()
                .map(|p| format!(" (profile `{p}`)"))
                .unwrap_or_default()
        )),
        None => config.chaos_line().filter(|_| config.chaos_off()),
    }
}

/// The names of the gRPC codes the policy names (`None` when it names none).
fn grpc_codes(policy: &Policy) -> Option<Vec<&'static str>> {
    let codes = policy.grpc_retry_on()?;
    Some(
        codes
            .iter()
            .filter_map(|c| retrykit_schema::grpc::code_name(*c))
            .collect(),
    )
}

/// What a hedging policy does besides the schedule above, in one line
/// (`None` for a policy that sends no hedges); `explain` prints it too.
pub(crate) fn hedging(policy: &Policy) -> Option<String> {
    let s = policy.hedge_settings()?;
    let floor = match s.after {
        HedgeAfter::Fixed(_) => String::new(),
        HedgeAfter::Percentile(_) => format!(
            " of the latency observed (hedge_floor {} until {} calls are seen)",
            show_duration(s.floor),
            HedgeSettings::MIN_SAMPLES
        ),
    };
    Some(format!(
        "hedging: hedge_after {}{floor}; at most {} of calls send hedges (hedge_share); max_attempts counts them",
        s.after,
        retrykit_config::show_number(s.share),
    ))
}

fn json(
    name: &str,
    profile: Option<&str>,
    policy: &Policy,
    seed: u64,
    rows: &[Row],
    end: &End,
) -> serde_json::Value {
    let attempts: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            serde_json::json!({
                "attempt": r.attempt,
                "starts_at_ms": ms(r.starts_at),
                "envelope_ms": r.wait.map(|(e, _)| ms(e)),
                "wait_ms": r.wait.map(|(_, w)| ms(w)),
                "cumulative_ms": r.wait.map(|(_, w)| ms(r.starts_at.saturating_add(w))),
            })
        })
        .collect();
    let (reason, after) = match end {
        End::Limit(n) => ("attempt_limit", Some(*n)),
        End::Deadline(_) => ("deadline", rows.last().map(|r| r.attempt)),
        End::NotShown => ("not_shown", None),
    };
    serde_json::json!({
        "policy": name,
        "profile": profile,
        "seed": seed,
        "backoff": policy.backoff().name(),
        "jitter": policy.jitter().name(),
        "max_attempts": policy.max_attempts(),
        "deadline_ms": policy.deadline().map(ms),
        "attempts": attempts,
        "ends": { "reason": reason, "after_attempt": after },
        "breaker": policy.breaker().and_then(|b| b.name()),
        "breaker_fleet": policy.breaker().and_then(|b| fleet_json(b)),
        "limit": policy.limit().and_then(|l| l.name()),
        "chaos": policy.chaos().map(|c| c.to_string()),
        "grpc_retry_on": grpc_codes(policy),
        "hedge": policy.hedge_settings().map(|s| serde_json::json!({
            "after": s.after.to_string(),
            "floor_ms": ms(s.floor),
            "min_samples": HedgeSettings::MIN_SAMPLES,
            "share": s.share,
        })),
    })
}

/// A fleet breaker's store (without its password) and link timing, for
/// `--format json`; `None` for a local breaker.
#[cfg(feature = "redis")]
fn fleet_json(b: &retrykit_core::breaker::CircuitBreaker) -> Option<serde_json::Value> {
    let o = b.fleet_options()?;
    Some(serde_json::json!({
        "store": o.store_shown(),
        "store_timeout_ms": ms(o.timeout()),
        "refresh_ms": ms(o.refresh()),
    }))
}

/// Without the `redis` feature no breaker is a fleet breaker.
#[cfg(not(feature = "redis"))]
fn fleet_json(_: &retrykit_core::breaker::CircuitBreaker) -> Option<serde_json::Value> {
    None
}
