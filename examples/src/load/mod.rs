//! Concurrency limits against a real server:
//! `load [--config FILE] [--policy NAME]... [--clients N] [--capacity C]
//! [--service D] [--duration D] [--format json]`.
//!
//! A server on 127.0.0.1 serves at most `--capacity` requests at once, each
//! for `--service`, and queues the rest. `--clients` tasks call it through
//! the tower layer (over hyper-util's pooled client), each one call at a
//! time, for `--duration`, once per policy (every policy of the file by
//! default, each against a fresh server). One row per policy says what the
//! dependency saw (the 99th percentile of its latency, arrival to reply,
//! and the most requests it held at once), the goodput against the server's
//! capacity (`capacity / service` per second, with the service time it
//! measured: a sleep takes a little longer than asked), and what the limit did: the
//! most attempts it let be in flight, its size at the end, and the calls it
//! refused. It is a benchmark-style report, not a test: its figures move
//! with the machine.
//!
//! - `server`: the server and what it saw; `latency`: the histogram.

mod latency;
mod server;

use crate::output::Format;
use bytes::Bytes;
use clap::Parser;
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use latency::Latencies;
use retrykit_core::Policy;
use retrykit_core::http::ReplayBody;
use retrykit_core::limit::{ConcurrencyLimit, LimitFull, LimitKind};
use retrykit_core::tower::RetryLayer;
use std::error::Error;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::time::Instant;
use tower::{Layer, ServiceExt};

/// The flags of `load`.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "load",
    about = "Concurrency limits against a real server that serves C calls at once and queues the rest"
)]
pub struct LoadArgs {
    /// The policy file (default: examples/limits.toml)
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// A policy to run, again for more (default: every policy of the file)
    #[arg(long, value_name = "NAME")]
    pub policy: Vec<String>,
    /// Clients calling at once, each one call at a time
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_CLIENTS)))]
    pub clients: u32,
    /// Requests the server serves at once (it queues the rest)
    #[arg(long, value_name = "C", default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_CAPACITY)))]
    pub capacity: u32,
    /// How long the server takes to serve one request (1ms to 1s)
    #[arg(long, value_name = "DURATION", default_value = "10ms", value_parser = service_time)]
    pub service: Duration,
    /// How long each policy's run lasts (100ms to 60s)
    #[arg(long, value_name = "DURATION", default_value = "3s", value_parser = run_time)]
    pub duration: Duration,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// The most clients.
pub const MAX_CLIENTS: u32 = 1_000;
/// The most requests the server serves at once.
pub const MAX_CAPACITY: u32 = 1_000;

fn bounded(s: &str, min: Duration, max: Duration) -> Result<Duration, String> {
    let d = retrykit_schema::duration::parse_duration(s).map_err(|e| e.to_string())?;
    if d < min || d > max {
        return Err(format!(
            "{s} is outside {} to {}",
            retrykit_config::show_duration(min),
            retrykit_config::show_duration(max)
        ));
    }
    Ok(d)
}

fn service_time(s: &str) -> Result<Duration, String> {
    bounded(s, Duration::from_millis(1), Duration::from_secs(1))
}

fn run_time(s: &str) -> Result<Duration, String> {
    bounded(s, Duration::from_millis(100), Duration::from_secs(60))
}

/// One policy's run.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The policy.
    pub policy: String,
    /// Its limit: `none`, or the limit's name and kind.
    pub limit: String,
    /// Successful calls per second.
    pub goodput: f64,
    /// The server's mean service time as measured (a sleep of `--service`
    /// takes a little longer on a real timer).
    pub service: Duration,
    /// `goodput` over the server's capacity: `capacity / service` per
    /// second, with the service time as measured.
    pub goodput_share: f64,
    /// The dependency's 99th percentile latency, arrival to reply.
    pub server_p99: Duration,
    /// The callers' 99th percentile latency, call to answer (the wait for
    /// a permit included).
    pub call_p99: Duration,
    /// The most requests the server held at once, queued and served.
    pub server_peak: u64,
    /// The most attempts the limit had in flight at once (sampled every
    /// 5 ms), or `None` without a limit.
    pub limit_peak: Option<u32>,
    /// The limit's size at the end of the run.
    pub limit_end: Option<u32>,
    /// When the limit's size first came within [0.8 C, 1.5 C], C the
    /// server's capacity (sampled every 5 ms); `None` without a limit or
    /// when it never did.
    pub entered: Option<Duration>,
    /// From then on, the share of the samples within that band (an
    /// adaptive limit's probes of the no-load latency dip below it).
    pub in_band: Option<f64>,
    /// Calls that ended with `limit_full`.
    pub refused: u64,
    /// Calls that failed otherwise.
    pub failed: u64,
}

/// Runs `load` with `args`; the rendered report.
pub fn run(args: &LoadArgs) -> Result<String, Box<dyn Error>> {
    let path = args
        .config
        .clone()
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/limits.toml")));
    let config = crate::policies::load_as_program(&path)?;
    let names: Vec<String> = if args.policy.is_empty() {
        config.policy_names().map(str::to_owned).collect()
    } else {
        args.policy.clone()
    };
    let mut policies = Vec::new();
    for name in &names {
        let policy = config.policy(name).ok_or_else(|| {
            let known: Vec<&str> = config.policy_names().collect();
            format!(
                "--policy {name}: {} defines no such policy; it defines: {}",
                path.display(),
                known.join(", ")
            )
        })?;
        policies.push((name.clone(), policy.clone()));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let mut rows = Vec::new();
    for (name, policy) in policies {
        rows.push(runtime.block_on(measure(args, &name, policy))?);
    }
    Ok(match args.format {
        Format::Table => table(args, &rows),
        Format::Json => json(&rows),
    })
}

/// One policy's run, in the caller's runtime.
pub async fn measure(
    args: &LoadArgs,
    name: &str,
    policy: Arc<Policy>,
) -> Result<Row, Box<dyn Error>> {
    let server = server::Server::start(args.capacity, args.service).await?;
    let uri: http::Uri = format!("http://{}/", server.addr).parse()?;
    let client: Client<HttpConnector, ReplayBody<Full<Bytes>>> =
        Client::builder(TokioExecutor::new()).build_http();
    let limit = policy.limit().cloned();
    let svc = RetryLayer::new(policy).http().layer(client);
    let calls = Arc::new(Mutex::new(Latencies::default()));
    let (refused, failed) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let started = Instant::now();
    let end = started + args.duration;
    let sampler = limit
        .clone()
        .map(|limit| tokio::spawn(sample(limit, args.capacity, started, end)));
    let tasks: Vec<_> = (0..args.clients)
        .map(|_| {
            let (svc, uri) = (svc.clone(), uri.clone());
            let (calls, refused, failed) = (calls.clone(), refused.clone(), failed.clone());
            tokio::spawn(async move {
                while Instant::now() < end {
                    let request = http::Request::get(uri.clone()).body(Full::default());
                    let Ok(request) = request else { break };
                    let began = Instant::now();
                    match svc.clone().oneshot(request).await {
                        Ok(response) if response.status().is_success() => calls
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .record(began.elapsed()),
                        Err(e) if e.downcast_ref::<LimitFull>().is_some() => {
                            refused.fetch_add(1, Ordering::Relaxed);
                        }
                        _ => {
                            failed.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            })
        })
        .collect();
    for task in tasks {
        task.await?;
    }
    let elapsed = started.elapsed().as_secs_f64().max(1e-9);
    let sampled = match sampler {
        Some(task) => Some(task.await?),
        None => None,
    };
    let calls = calls.lock().unwrap_or_else(PoisonError::into_inner).clone();
    let seen = server
        .seen
        .latencies
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    let goodput = calls.count() as f64 / elapsed;
    let served = server.seen.served.load(Ordering::Relaxed).max(1);
    let service = Duration::from_micros(server.seen.service_us.load(Ordering::Relaxed) / served)
        .max(args.service);
    let capacity = f64::from(args.capacity) / service.as_secs_f64();
    Ok(Row {
        policy: name.to_owned(),
        limit: limit.as_deref().map_or_else(|| "none".to_owned(), describe),
        goodput,
        service,
        goodput_share: goodput / capacity,
        server_p99: seen.quantile(0.99),
        call_p99: calls.quantile(0.99),
        server_peak: server.seen.peak.load(Ordering::Relaxed),
        limit_peak: sampled.as_ref().map(|s| s.peak),
        entered: sampled.as_ref().and_then(|s| s.entered),
        in_band: sampled.as_ref().map(|s| s.in_band),
        limit_end: limit.as_deref().map(ConcurrencyLimit::max_in_flight),
        refused: refused.load(Ordering::Relaxed),
        failed: failed.load(Ordering::Relaxed),
    })
}

/// The limit's name and kind (and a fixed limit's size).
fn describe(limit: &ConcurrencyLimit) -> String {
    let name = limit.name().unwrap_or("unnamed");
    match limit.kind() {
        LimitKind::Fixed { max_in_flight } => format!("{name} (fixed {max_in_flight})"),
        kind => format!("{name} ({})", kind.name()),
    }
}

/// What sampling a limit every 5 ms saw.
struct Sampled {
    /// The most attempts in flight at once.
    peak: u32,
    /// When its size first came within [0.8 C, 1.5 C], C the server's
    /// capacity (`None`: never).
    entered: Option<Duration>,
    /// From then on, the share of samples within that band.
    in_band: f64,
}

/// Samples `limit` every 5 ms from `start` until `end`.
async fn sample(
    limit: Arc<ConcurrencyLimit>,
    capacity: u32,
    start: Instant,
    end: Instant,
) -> Sampled {
    let band = f64::from(capacity) * 0.8..=f64::from(capacity) * 1.5;
    let (mut peak, mut entered, mut samples, mut inside) = (0, None, 0u32, 0u32);
    while Instant::now() < end {
        peak = peak.max(limit.in_flight());
        let now_inside = band.contains(&f64::from(limit.max_in_flight()));
        if now_inside && entered.is_none() {
            entered = Some(start.elapsed());
        }
        if entered.is_some() {
            samples += 1;
            inside += u32::from(now_inside);
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    Sampled {
        peak,
        entered,
        in_band: f64::from(inside) / f64::from(samples.max(1)),
    }
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1e3)
}

fn table(args: &LoadArgs, rows: &[Row]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "server: {} at once, {} each (at most {:.0}/s; OF CAPACITY is against the service time measured); {} clients for {}\n",
        args.capacity,
        ms(args.service) + " ms",
        f64::from(args.capacity) / args.service.as_secs_f64(),
        args.clients,
        retrykit_config::show_duration(args.duration)
    );
    let _ = writeln!(
        out,
        "| policy | limit | service ms | goodput/s | of capacity | server p99 ms | call p99 ms | server peak | limit peak | limit at end | in band from | in band | refused | failed |"
    );
    let _ = writeln!(
        out,
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    let opt = |v: Option<u32>| v.map_or_else(|| "-".to_owned(), |v| v.to_string());
    for r in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {:.0} | {:.0}% | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.policy,
            r.limit,
            ms(r.service),
            r.goodput,
            r.goodput_share * 100.0,
            ms(r.server_p99),
            ms(r.call_p99),
            r.server_peak,
            opt(r.limit_peak),
            opt(r.limit_end),
            r.entered
                .map_or_else(|| "-".to_owned(), |d| format!("{:.2} s", d.as_secs_f64())),
            r.in_band
                .map_or_else(|| "-".to_owned(), |b| format!("{:.0}%", b * 100.0)),
            r.refused,
            r.failed
        );
    }
    out
}

fn json(rows: &[Row]) -> String {
    let rows: Vec<_> = rows
        .iter()
        .map(|r| {
            serde_json::json!({
                "policy": r.policy,
                "limit": r.limit,
                "service_ms": r.service.as_secs_f64() * 1e3,
                "goodput_per_s": r.goodput,
                "goodput_share": r.goodput_share,
                "server_p99_ms": r.server_p99.as_secs_f64() * 1e3,
                "call_p99_ms": r.call_p99.as_secs_f64() * 1e3,
                "server_peak": r.server_peak,
                "limit_peak": r.limit_peak,
                "limit_end": r.limit_end,
                "in_band_from_s": r.entered.map(|d| d.as_secs_f64()),
                "in_band_share": r.in_band,
                "refused": r.refused,
                "failed": r.failed,
            })
        })
        .collect();
    serde_json::Value::Array(rows).to_string() + "\n"
}
