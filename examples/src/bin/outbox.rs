//! The outbox relay demo.
//!
//! `outbox` (or `outbox demo`) places orders, each writing its row and its
//! outbox event in one SQLite transaction, then relays the events to a fake
//! broker that fails, throttles and has an outage, showing live progress and
//! ending with a summary. `outbox seed` and `outbox relay` split the two
//! halves so a crash test can kill and restart the relay.

use clap::{Args, Parser, Subcommand};
use examples::outbox::{BrokerSettings, Counts, EventState, FakeBroker, Relay, Store, now_ms};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Parser)]
#[command(
    name = "outbox",
    about = "A crash-safe transactional-outbox relay over SQLite"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    demo: DemoArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Place orders and relay them, with live progress and a summary (the default).
    Demo(DemoArgs),
    /// Place orders only.
    Seed {
        /// The outbox database.
        #[arg(long)]
        db: PathBuf,
        /// How many orders to place.
        #[arg(long, default_value_t = 100)]
        events: u32,
    },
    /// Relay pending events until none is left.
    Relay {
        /// The outbox database.
        #[arg(long)]
        db: PathBuf,
        /// The broker's delivery log.
        #[arg(long)]
        broker_db: PathBuf,
        #[command(flatten)]
        broker: BrokerArgs,
    },
}

#[derive(Args, Clone)]
struct DemoArgs {
    /// How many orders to place.
    #[arg(long, default_value_t = 200)]
    events: u32,
    /// The outbox database (default: a fresh file in the temp directory).
    #[arg(long)]
    db: Option<PathBuf>,
    #[command(flatten)]
    broker: BrokerArgs,
}

#[derive(Args, Clone)]
struct BrokerArgs {
    /// Fraction of publish calls that fail with a transient error.
    #[arg(long, default_value_t = 0.3)]
    failure_rate: f64,
    /// Fraction of publish calls throttled with a Retry-After hint.
    #[arg(long, default_value_t = 0.05)]
    throttle_rate: f64,
    /// Fraction of publish calls rejected permanently.
    #[arg(long, default_value_t = 0.01)]
    reject_rate: f64,
    /// How long the broker is down ("0s" for no outage).
    #[arg(long, default_value = "1500ms", value_parser = humantime::parse_duration)]
    outage: Duration,
    /// When the outage starts, after the relay starts.
    #[arg(long, default_value = "300ms", value_parser = humantime::parse_duration)]
    outage_at: Duration,
    /// The retry profile (overrides RETRY_PROFILE).
    #[arg(long, default_value = "demo")]
    profile: String,
    /// Seeds the broker's failures.
    #[arg(long, default_value_t = 7)]
    seed: u64,
}

impl BrokerArgs {
    fn settings(&self) -> BrokerSettings {
        BrokerSettings {
            failure_rate: self.failure_rate,
            throttle_rate: self.throttle_rate,
            throttle_hint: Duration::from_millis(300),
            reject_rate: self.reject_rate,
            outage: (!self.outage.is_zero()).then_some((self.outage_at, self.outage)),
            seed: self.seed,
            latency: Duration::ZERO,
        }
    }
}

type Fallible<T> = Result<T, Box<dyn std::error::Error>>;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        None => demo(cli.demo).await,
        Some(Command::Demo(args)) => demo(args).await,
        Some(Command::Seed { db, events }) => Store::open(&db)
            .map_err(Into::into)
            .and_then(|store| seed(&store, events)),
        Some(Command::Relay {
            db,
            broker_db,
            broker,
        }) => relay(db, broker_db, broker).await,
    };
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn seed(store: &Store, events: u32) -> Fallible<()> {
    for i in 0..events {
        store.place_order(&format!("item-{i}"))?;
    }
    Ok(())
}

async fn relay(db: PathBuf, broker_db: PathBuf, args: BrokerArgs) -> Fallible<()> {
    load_policies(&args.profile)?;
    let broker = Arc::new(FakeBroker::open(&broker_db, args.settings())?);
    let relay = Relay::new(Store::open(&db)?, broker);
    relay
        .run_until_idle(Duration::from_millis(20), |_| {})
        .await?;
    Ok(())
}

async fn demo(args: DemoArgs) -> Fallible<()> {
    load_policies(&args.broker.profile)?;
    let dir = std::env::temp_dir().join(format!("outbox-demo-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let db = args.db.clone().unwrap_or_else(|| dir.join("outbox.db"));
    let store = Store::open(&db)?;
    println!(
        "placing {} orders (order row + outbox event, one transaction each) in {}",
        args.events,
        db.display()
    );
    seed(&store, args.events)?;

    let broker = Arc::new(FakeBroker::open(
        &dir.join("broker.db"),
        args.broker.settings(),
    )?);
    let relay = Relay::new(store, broker.clone());
    let started = Instant::now();
    let mut calls = 0u32;
    let mut last_print = Instant::now() - Duration::from_secs(1);
    let live = std::io::stdout().is_terminal();
    relay
        .run_until_idle(Duration::from_millis(25), |pass| {
            calls += pass.calls;
            if last_print.elapsed() >= Duration::from_millis(250) {
                last_print = Instant::now();
                if let Ok(c) = relay_counts(&db) {
                    progress(&c, calls, started.elapsed(), live);
                }
            }
        })
        .await?;
    let counts = relay_counts(&db)?;
    progress(&counts, calls, started.elapsed(), live);
    if live {
        println!();
    }
    summary(relay.store(), &broker, started.elapsed())
}

fn relay_counts(db: &std::path::Path) -> Fallible<Counts> {
    Ok(Store::open(db)?.counts(now_ms())?)
}

fn progress(c: &Counts, calls: u32, elapsed: Duration, live: bool) {
    let line = format!(
        "[{:>5.1}s] published {:>4}/{} | due {:>4} | waiting {:>4} | dead-lettered {:>3} | publish calls {:>5}",
        elapsed.as_secs_f64(),
        c.published,
        c.total(),
        c.due,
        c.waiting,
        c.dead,
        calls
    );
    if live {
        print!("\r{line}");
        let _ = std::io::stdout().flush();
    } else {
        println!("{line}");
    }
}

fn summary(store: &Store, broker: &FakeBroker, elapsed: Duration) -> Fallible<()> {
    let events = store.events()?;
    let deliveries = broker.deliveries()?;
    let mut by_attempts = std::collections::BTreeMap::<u32, u32>::new();
    for e in &events {
        *by_attempts.entry(e.attempts).or_default() += 1;
    }
    let dead: Vec<_> = events
        .iter()
        .filter(|e| e.state == EventState::Dead)
        .collect();
    let total_wait: i64 = events.iter().map(|e| e.total_wait_ms).sum();
    let calls: u32 = events.iter().map(|e| e.attempts).sum();
    println!("\nsummary");
    println!("  {:<28}{:>10}", "events", events.len());
    println!(
        "  {:<28}{:>10}",
        "published",
        events
            .iter()
            .filter(|e| e.state == EventState::Published)
            .count()
    );
    println!("  {:<28}{:>10}", "dead-lettered (gave up)", dead.len());
    println!("  {:<28}{:>10}", "publish calls", calls);
    println!("  {:<28}{:>10}", "broker deliveries", deliveries.len());
    println!(
        "  {:<28}{:>9}s",
        "total wait in the table",
        total_wait as f64 / 1000.0
    );
    println!("  {:<28}{:>9.1}s", "elapsed", elapsed.as_secs_f64());
    println!("\n  attempts per event   events");
    for (attempts, n) in &by_attempts {
        println!("  {attempts:>18}   {n:>6}");
    }
    if !dead.is_empty() {
        println!("\n  dead letters");
        for e in dead.iter().take(5) {
            println!(
                "  {:<12} after {:>2} calls: {}",
                e.event_id,
                e.attempts,
                e.last_error.as_deref().unwrap_or("?")
            );
        }
    }
    Ok(())
}

/// Loads the policies from `examples/retry.toml` (or the file `RETRY_CONFIG`
/// names) with `profile`, and installs them in the registry.
fn load_policies(profile: &str) -> Fallible<()> {
    examples::install_policies(profile)
        .map(drop)
        .map_err(|d| d.to_string().into())
}
