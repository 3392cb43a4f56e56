//! "The Tail at Scale" on a real server, beside the simulator's prediction:
//! `tail --config F --policy P --calls N --concurrency C --slow-share S
//! --slow D --fast D --seed S [--load-slowdown K] [--transport grpc]
//! [--format json]`.
//!
//! It starts a server on 127.0.0.1 whose latency follows retrykit-sim's
//! [`TailServer`] model (seeded), runs `--concurrency` clients making
//! `--calls` calls under the named policy, and prints `predicted`
//! (retrykit-sim's tail scenario on the same parameters) and `measured`
//! with the same keys: p50, p99, p99.9, the share of extra requests
//! (counted by the server) and hedges won. It warns when the machine could
//! not keep up (the server's sleeps ending late), as `fleet` does.
//! `--transport http` (the default): hyper (HTTP/1.1), each call through
//! [`Retry::call`](retrykit_core::Retry::call); `--transport grpc`: tonic,
//! each call through the tower layer's gRPC mode over one `Channel`.
//! [`measure`] runs the same in a runtime of the caller's (a test's paused
//! clock, say).
//!
//! - `server`: the latencies, the HTTP service and the counts; `grpc`: the
//!   gRPC service and client; `clients`: the calls.

mod clients;
mod grpc;
mod server;

use crate::output::Format;
use clap::Parser;
use retrykit_sim::{Tail, TailOutcome, TailServer};
use std::error::Error;
use std::sync::Arc;
use std::time::Duration;

/// The flags of `tail`.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "tail",
    about = "Hedged requests against a real server with a heavy latency tail, beside the simulator's prediction"
)]
pub struct TailArgs {
    /// The policy file
    #[arg(long, value_name = "FILE")]
    pub config: std::path::PathBuf,
    /// The policy the clients call with
    #[arg(long, value_name = "NAME")]
    pub policy: String,
    /// Calls in all
    #[arg(long, value_name = "N", default_value_t = 20_000, value_parser = clap::value_parser!(u64).range(1..=MAX_CALLS))]
    pub calls: u64,
    /// Clients calling at once, each one call at a time
    #[arg(long, value_name = "N", default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_CONCURRENCY)))]
    pub concurrency: u32,
    /// The share of requests that are slow, 0 to 1
    #[arg(long, value_name = "SHARE", default_value_t = 0.01)]
    pub slow_share: f64,
    /// A slow request's latency
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_duration)]
    pub slow: Duration,
    /// A fast request's mean latency (spread ±50%)
    #[arg(long, value_name = "DURATION", default_value = "5ms", value_parser = parse_duration)]
    pub fast: Duration,
    /// How much each request in progress slows a new one, 0 to 10
    #[arg(long, value_name = "FACTOR", default_value_t = 0.0)]
    pub load_slowdown: f64,
    /// Seeds the server's latencies (and the prediction)
    #[arg(long, value_name = "S", default_value_t = 0)]
    pub seed: u64,
    /// What the clients and the server speak
    #[arg(long, value_enum, default_value_t = Transport::Http)]
    pub transport: Transport,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// What `tail`'s clients and server speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Transport {
    /// HTTP/1.1 (hyper), each call through `Retry::call`, each attempt on a
    /// connection of its own.
    Http,
    /// gRPC (tonic), each call through the tower layer's gRPC mode over one
    /// shared channel: a hedge is another HTTP/2 stream.
    Grpc,
}

impl Transport {
    fn name(self) -> &'static str {
        match self {
            Transport::Http => "http",
            Transport::Grpc => "grpc",
        }
    }
}

/// The most calls a real run makes.
pub const MAX_CALLS: u64 = 1_000_000;
/// The most clients (each may hold a few connections).
pub const MAX_CONCURRENCY: u32 = 1_000;
/// The longest run the flags may ask for, by the mean latency: longer is refused.
pub const MAX_RUN: Duration = Duration::from_secs(600);
/// The longest slow latency.
pub const MAX_SLOW: Duration = Duration::from_secs(60);

fn parse_duration(s: &str) -> Result<Duration, retrykit_schema::duration::Invalid> {
    retrykit_schema::duration::parse_duration(s)
}

impl TailArgs {
    /// The simulator's scenario for these flags.
    pub fn scenario(&self) -> Tail {
        Tail {
            calls: self.calls,
            concurrency: self.concurrency,
            server: TailServer {
                slow_share: self.slow_share,
                slow: self.slow,
                fast: self.fast,
                load_slowdown: self.load_slowdown,
            },
            seed: self.seed,
            // The server's sleeps and the clients' hedge timers are tokio's.
            timer: Some(retrykit_sim::TimerModel::TOKIO),
        }
    }

    /// Refuses flags a real run cannot honour in bounded time.
    fn check(&self) -> Result<(), Box<dyn Error>> {
        if self.slow > MAX_SLOW {
            return Err(format!(
                "--slow {:?} is longer than a real run allows ({MAX_SLOW:?}); use a shorter --slow",
                self.slow
            )
            .into());
        }
        let s = self.slow_share.clamp(0.0, 1.0);
        let mean = self.slow.as_secs_f64() * s + self.fast.as_secs_f64() * (1.0 - s);
        let run = mean
            * (1.0 + self.load_slowdown.max(0.0) * f64::from(self.concurrency))
            * self.calls as f64
            / f64::from(self.concurrency);
        if run.is_finite() && run > MAX_RUN.as_secs_f64() {
            return Err(format!(
                "these flags ask for a run of about {run:.0}s, more than {}s; use fewer --calls or more --concurrency",
                MAX_RUN.as_secs()
            )
            .into());
        }
        Ok(())
    }
}

/// Loads `--policy` from `--config` as a program would (`RETRY_PROFILE`,
/// `RETRY_POLICY__*`), with the file's warnings.
pub fn load_policy(
    args: &TailArgs,
) -> Result<(Arc<retrykit_core::Policy>, Vec<String>), Box<dyn Error>> {
    let config = crate::policies::load_as_program(args.config.as_ref())?;
    let warnings = config
        .warnings()
        .render()
        .lines()
        .filter(|l| l.starts_with("warning"))
        .map(|l| l.trim_start_matches("warning: ").to_owned())
        .collect();
    match config.policy(&args.policy) {
        Some(p) => Ok((p.clone(), warnings)),
        None => {
            let names: Vec<&str> = config.policy_names().collect();
            let close = retrykit_schema::suggest::did_you_mean(&args.policy, names.iter().copied())
                .map(|n| format!(" (did you mean `{n}`?)"))
                .unwrap_or_default();
            Err(format!(
                "--policy {}: no such policy in {}{close}; defined: {}",
                args.policy,
                config.source().name(),
                names.join(", ")
            )
            .into())
        }
    }
}

/// What a run measured, in the prediction's shape.
fn measured(results: &[clients::CallResult], requests: u64) -> TailOutcome {
    let mut latencies: Vec<Duration> = results.iter().map(|r| r.latency).collect();
    latencies.sort_unstable();
    let pick = |q: f64| {
        let n = latencies.len();
        let rank = ((q * n as f64).ceil() as usize).clamp(1, n.max(1));
        latencies.get(rank - 1).copied().unwrap_or_default()
    };
    let calls = results.len().max(1) as u64;
    TailOutcome {
        p50: pick(0.5),
        p99: pick(0.99),
        p999: pick(0.999),
        extra_share: requests.saturating_sub(results.len() as u64) as f64 / calls as f64,
        hedges: requests.saturating_sub(results.len() as u64),
        hedges_won: results.iter().filter(|r| r.ok && r.winner > 1).count() as u64,
        hedges_refused: 0,
    }
}

/// Runs the server and the clients of `args` in the current tokio runtime
/// under `policy`: what they measured, and warnings when the run cannot be
/// trusted (calls failed, the machine could not keep up). On a paused
/// clock every latency is tokio's virtual time, the same under any load.
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// use clap::Parser;
/// let file = concat!(env!("CARGO_MANIFEST_DIR"), "/retry.toml");
/// let args = examples::tail::TailArgs::try_parse_from(["tail", "--config", file, "--policy", "lookup-unhedged",
///     "--calls", "40", "--slow-share", "0.5", "--transport", "grpc"]).unwrap();
/// let (policy, _) = examples::tail::load_policy(&args).unwrap();
/// let (measured, warnings) = examples::tail::measure(&args, policy).await.unwrap();
/// // Half the calls take the slow latency (1 s); none is sent twice.
/// assert!(measured.p999 >= std::time::Duration::from_secs(1), "{measured:?}");
/// assert_eq!(measured.extra_share, 0.0);
/// assert!(warnings.is_empty(), "{warnings:?}");
/// # }
/// ```
pub async fn measure(
    args: &TailArgs,
    policy: Arc<retrykit_core::Policy>,
) -> Result<(TailOutcome, Vec<String>), Box<dyn Error>> {
    let tolerance = Duration::from_millis(2) + args.fast / 10;
    let latencies = server::Latencies::new(args.scenario().server, args.seed, tolerance);
    let (calls, concurrency) = (args.calls, args.concurrency);
    let (results, counts) = match args.transport {
        Transport::Http => {
            let server = server::start(latencies).await?;
            let addr = server.addr;
            let new_caller = || {
                let (policy, pool) = (policy.clone(), clients::Pool::default());
                move || clients::http_call(policy.clone(), pool.clone(), addr)
            };
            let results = clients::drive(calls, concurrency, new_caller).await;
            (results, server.counts)
        }
        Transport::Grpc => {
            let server = grpc::start(latencies).await?;
            let client = grpc::client(policy, server.addr).await?;
            let new_caller = || {
                let client = client.clone();
                move || grpc::call(client.clone())
            };
            let results = clients::drive(calls, concurrency, new_caller).await;
            (results, server.counts)
        }
    };
    let requests = counts.requests.load(std::sync::atomic::Ordering::Relaxed);
    let mut warnings = Vec::new();
    let failed = results.iter().filter(|r| !r.ok).count();
    if failed > 0 {
        warnings.push(format!(
            "{failed} calls failed (the server always answers: the machine or the network refused)"
        ));
    }
    let late = counts.late.load(std::sync::atomic::Ordering::Relaxed);
    let served = counts
        .served
        .load(std::sync::atomic::Ordering::Relaxed)
        .max(1);
    if late * 100 > served {
        warnings.push(format!(
            "the machine could not keep up: {late} of {served} requests were served more than {} late; the measured latencies include that",
            retrykit_config::show_duration(tolerance)
        ));
    }
    Ok((measured(&results, requests), warnings))
}

/// Runs the server and the clients, and the prediction, and renders both
/// as `--format` says. Bad flags are refused before anything starts:
///
/// ```
/// use clap::Parser;
/// let file = concat!(env!("CARGO_MANIFEST_DIR"), "/retry.toml");
/// let args = examples::tail::TailArgs::try_parse_from(["tail", "--config", file, "--policy", "lookup", "--slow", "2m"]).unwrap();
/// let err = examples::tail::run(&args).unwrap_err().to_string();
/// assert!(err.contains("--slow"), "{err}");
/// ```
pub fn run(args: &TailArgs) -> Result<String, Box<dyn Error>> {
    args.check()?;
    let scenario = args.scenario();
    let (policy, mut warnings) = load_policy(args)?;
    // The prediction first, so that it does not take CPU from the run.
    let report = scenario.run(&policy)?;
    let predicted = if report.settings.is_some() {
        report.hedged
    } else {
        report.unhedged
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let (measured, seen) = runtime.block_on(measure(args, policy.clone()))?;
    runtime.shutdown_timeout(Duration::from_millis(100));
    warnings.extend(seen);
    if report.settings.is_some() && predicted.hedges > 0 && measured.hedges == 0 {
        warnings.push(
            "no hedge was sent: this build's retry loop does not hedge yet, so measured is the policy unhedged (compare predicted_unhedged)".to_owned(),
        );
    }
    Ok(match args.format {
        Format::Json => json(
            args,
            &policy,
            predicted,
            report.unhedged,
            measured,
            &warnings,
        ),
        Format::Table => table(
            args,
            &policy,
            predicted,
            report.unhedged,
            measured,
            &warnings,
        ),
    })
}

/// A latency to three significant digits: `4.99ms`, `1.2s`, `850us`.
fn short(d: Duration) -> String {
    let (value, unit) = match d.as_secs_f64() {
        s if s >= 1.0 => (s, "s"),
        s if s >= 1e-3 => (s * 1e3, "ms"),
        s => (s * 1e6, "us"),
    };
    let decimals = if value >= 100.0 {
        0
    } else if value >= 10.0 {
        1
    } else {
        2
    };
    format!("{value:.decimals$}{unit}")
}

/// An outcome as JSON: the keys predicted and measured share.
fn outcome_json(o: &TailOutcome) -> serde_json::Value {
    let ms = |d: Duration| (d.as_secs_f64() * 1e6).round() / 1e3;
    serde_json::json!({
        "p50_ms": ms(o.p50),
        "p99_ms": ms(o.p99),
        "p99.9_ms": ms(o.p999),
        "extra_share": o.extra_share,
        "hedges_won": o.hedges_won,
    })
}

fn hedging(policy: &retrykit_core::Policy) -> String {
    policy
        .hedge_settings()
        .map_or_else(|| "none".to_owned(), |s| s.after.to_string())
}

fn json(
    args: &TailArgs,
    policy: &retrykit_core::Policy,
    predicted: TailOutcome,
    unhedged: TailOutcome,
    measured: TailOutcome,
    warnings: &[String],
) -> String {
    let value = serde_json::json!({
        "policy": args.policy,
        "transport": args.transport.name(),
        "hedge_after": hedging(policy),
        "calls": args.calls,
        "concurrency": args.concurrency,
        "slow_share": args.slow_share,
        "slow_ms": args.slow.as_secs_f64() * 1e3,
        "fast_ms": args.fast.as_secs_f64() * 1e3,
        "load_slowdown": args.load_slowdown,
        "seed": args.seed,
        "predicted": outcome_json(&predicted),
        "measured": outcome_json(&measured),
        "predicted_unhedged": outcome_json(&unhedged),
        "warnings": warnings,
    });
    serde_json::to_string_pretty(&value).unwrap_or_default() + "\n"
}

fn table(
    args: &TailArgs,
    policy: &retrykit_core::Policy,
    predicted: TailOutcome,
    unhedged: TailOutcome,
    measured: TailOutcome,
    warnings: &[String],
) -> String {
    let show = short;
    let mut out = format!(
        "tail: {} calls by {} clients over {} on 127.0.0.1; {}% of requests take {}, the rest {} ±50%; policy `{}` (hedge_after {}); seed {}\n",
        args.calls,
        args.concurrency,
        args.transport.name(),
        args.slow_share * 100.0,
        retrykit_config::show_duration(args.slow),
        retrykit_config::show_duration(args.fast),
        args.policy,
        hedging(policy),
        args.seed
    );
    out.push_str(&format!(
        "{:<20} {:>10} {:>10} {:>10} {:>8} {:>11}\n",
        "", "P50", "P99", "P99.9", "EXTRA", "HEDGES WON"
    ));
    for (label, o) in [
        ("predicted", predicted),
        ("measured", measured),
        ("predicted unhedged", unhedged),
    ] {
        out.push_str(&format!(
            "{label:<20} {:>10} {:>10} {:>10} {:>7.2}% {:>11}\n",
            show(o.p50),
            show(o.p99),
            show(o.p999),
            o.extra_share * 100.0,
            o.hedges_won
        ));
    }
    for w in warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    out
}
