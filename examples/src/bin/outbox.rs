//! The outbox relay demo.
//!
//! `outbox` (or `outbox demo`) places orders, each writing its row and its
//! outbox event in one SQLite transaction, then relays the events to a fake
//! broker that fails, throttles and has an outage, showing live progress and
//! ending with a summary. `outbox seed` and `outbox relay` split the two
//! halves so a crash test can kill and restart the relay.

use clap::error::ErrorKind;
use clap::{Args, CommandFactory, Parser, Subcommand};
use examples::outbox::{BrokerSettings, Counts, FakeBroker, Relay, Store, Summary, now_ms};
use examples::policies::{error_report, load_policies};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The most orders one run places: enough to watch the relay work, few
/// enough that a run ends in minutes.
const MAX_EVENTS: u32 = 100_000;

#[derive(Parser)]
#[command(
    name = "outbox",
    about = "A crash-safe transactional-outbox relay over SQLite",
    // `outbox --events 5 demo` would otherwise drop `--events 5` unseen.
    args_conflicts_with_subcommands = true
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
        /// How many orders to place (1 to 100000).
        #[arg(long, default_value_t = 100, value_parser = parse_events)]
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
    /// How many orders to place (1 to 100000).
    #[arg(long, default_value_t = 200, value_parser = parse_events)]
    events: u32,
    /// The outbox database, kept after the run (default: a temporary file,
    /// removed at exit).
    #[arg(long)]
    db: Option<PathBuf>,
    #[command(flatten)]
    broker: BrokerArgs,
}

#[derive(Args, Clone)]
struct BrokerArgs {
    /// Fraction of publish calls that fail with a transient error (0 to 1).
    #[arg(long, default_value_t = 0.3, value_parser = parse_rate)]
    failure_rate: f64,
    /// Fraction of publish calls throttled with a Retry-After hint (0 to 1).
    #[arg(long, default_value_t = 0.05, value_parser = parse_rate)]
    throttle_rate: f64,
    /// Fraction of publish calls rejected permanently (0 to 1).
    #[arg(long, default_value_t = 0.01, value_parser = parse_rate)]
    reject_rate: f64,
    /// How long the broker is down ("0s" for no outage).
    #[arg(long, default_value = "1500ms", value_parser = retry_config::parse_duration)]
    outage: Duration,
    /// When the outage starts, after the relay starts.
    #[arg(long, default_value = "300ms", value_parser = retry_config::parse_duration)]
    outage_at: Duration,
    /// The retry profile [default: $RETRY_PROFILE, else demo].
    #[arg(long)]
    profile: Option<String>,
    /// Seeds the broker's failures.
    #[arg(long, default_value_t = 7)]
    seed: u64,
}

/// A fraction of publish calls: a finite number from 0 to 1.
fn parse_rate(text: &str) -> Result<f64, String> {
    let rule = "a rate is the fraction of publish calls it applies to, from 0 to 1";
    let fix = "write for example 0.3 for 30%";
    match text.trim().parse::<f64>().ok().filter(|r| !r.is_nan()) {
        Some(rate) if (0.0..=1.0).contains(&rate) => Ok(rate),
        Some(rate) => Err(format!("{rate} is out of range: {rule}; {fix}")),
        None => Err(format!("not a number: {rule}; {fix}")),
    }
}

/// A number of orders, from 1 to [`MAX_EVENTS`].
fn parse_events(text: &str) -> Result<u32, String> {
    let rule = format!("the number of orders must be a whole number from 1 to {MAX_EVENTS}");
    match text.trim().parse::<u32>() {
        Ok(n @ 1..=MAX_EVENTS) => Ok(n),
        _ => Err(format!("{rule}; for example --events 200")),
    }
}

impl BrokerArgs {
    /// The rates must leave room for each other: every call has one outcome.
    fn check(&self) -> Result<(), String> {
        let sum = self.failure_rate + self.throttle_rate + self.reject_rate;
        // A little slack, so that 0.7 + 0.2 + 0.1 is not refused for rounding.
        if sum <= 1.0 + 1e-9 {
            return Ok(());
        }
        let sum = format!("{sum:.3}");
        Err(format!(
            "--failure-rate {} + --throttle-rate {} + --reject-rate {} = {}, above 1; \
             each publish call has one outcome, so the three rates must add up to at most 1; \
             lower one of them (the defaults are 0.3, 0.05 and 0.01)",
            self.failure_rate,
            self.throttle_rate,
            self.reject_rate,
            sum.trim_end_matches('0').trim_end_matches('.')
        ))
    }

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

    fn profile(&self) -> String {
        examples::policies::profile(self.profile.as_deref())
    }
}

/// The run was stopped with Ctrl-C.
#[derive(Debug)]
struct Interrupted;

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("interrupted")
    }
}

impl std::error::Error for Interrupted {}

type Fallible<T> = Result<T, Box<dyn std::error::Error>>;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let cli = Cli::parse();
    let broker = match &cli.command {
        None => Some(&cli.demo.broker),
        Some(Command::Demo(args)) => Some(&args.broker),
        Some(Command::Relay { broker, .. }) => Some(broker),
        Some(Command::Seed { .. }) => None,
    };
    if let Some(Err(problem)) = broker.map(BrokerArgs::check) {
        Cli::command()
            .error(ErrorKind::ArgumentConflict, problem)
            .exit();
    }
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
        eprint!("{}", error_report(&*e));
        // 128 + SIGINT, as a shell reports a command stopped by Ctrl-C.
        std::process::exit(if e.is::<Interrupted>() { 130 } else { 1 });
    }
}

fn seed(store: &Store, events: u32) -> Fallible<()> {
    for i in 0..events {
        store.place_order(&format!("item-{i}"))?;
    }
    Ok(())
}

async fn relay(db: PathBuf, broker_db: PathBuf, args: BrokerArgs) -> Fallible<()> {
    load_policies(&args.profile())?;
    let broker = Arc::new(FakeBroker::open(&broker_db, args.settings())?);
    let relay = Relay::new(Store::open(&db)?, broker);
    relay
        .run_until_idle(Duration::from_millis(20), |_| {})
        .await?;
    Ok(())
}

async fn demo(args: DemoArgs) -> Fallible<()> {
    let config = load_policies(&args.broker.profile())?;
    // The broker's log, and the outbox unless --db names one, live here.
    let scratch = tempfile::Builder::new().prefix("outbox-demo-").tempdir()?;
    let path = scratch.path().to_owned();
    let result = until_interrupted(run_demo(&args, &config, &path)).await;
    // Removed on every path but a kill; say so if it cannot be.
    if let Err(e) = scratch.close() {
        eprintln!(
            "warning: could not remove the temporary directory {}: {e}",
            path.display()
        );
    }
    result
}

/// Runs `work` unless Ctrl-C comes first. The listener is polled before
/// `work` starts, so an interrupt at any point (placing orders included)
/// ends the run through the normal return path, which cleans up.
async fn until_interrupted<T>(work: impl Future<Output = Fallible<T>>) -> Fallible<T> {
    tokio::select! {
        biased;
        signal = tokio::signal::ctrl_c() => {
            signal?;
            Err(Interrupted.into())
        }
        result = work => result,
    }
}

async fn run_demo(args: &DemoArgs, config: &retry_config::Config, scratch: &Path) -> Fallible<()> {
    let db = args.db.clone().unwrap_or_else(|| scratch.join("outbox.db"));
    let store = Store::open(&db)?;
    let kept = if args.db.is_some() {
        ""
    } else {
        " (a temporary file, removed at exit; --db keeps one)"
    };
    let orders = if args.events == 1 { "order" } else { "orders" };
    println!(
        "placing {} {orders} (order row + outbox event, one transaction each) in {}{kept}",
        args.events,
        db.display()
    );
    seed(&store, args.events)?;

    let broker = Arc::new(FakeBroker::open(
        &scratch.join("broker.db"),
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
    let max_attempts = |name| config.policy(name).and_then(|p| p.max_attempts());
    let summary = Summary {
        events: &relay.store().events()?,
        deliveries: broker.deliveries()?.len(),
        elapsed: started.elapsed(),
        outbox_max_attempts: max_attempts("outbox"),
        publish_max_attempts: max_attempts("publish"),
    };
    print!("{summary}");
    Ok(())
}

fn relay_counts(db: &Path) -> Fallible<Counts> {
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
