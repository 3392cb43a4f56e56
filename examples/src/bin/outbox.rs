//! The outbox relay demo.
//!
//! `outbox` (or `outbox demo`) places orders, each writing its row and its
//! outbox event in one transaction, then relays the events to a fake broker
//! that fails, throttles and has an outage, showing live progress and
//! ending with a summary. The outbox is a SQLite file by default;
//! `--database postgres://...` uses a PostgreSQL server, and `--database
//! postgres` a private cluster started for the run. `--relays N` runs N relay
//! processes side by side. `outbox seed` and `outbox relay` split the two
//! halves so a crash test can kill and restart relays.

#[path = "outbox/demo.rs"]
mod demo;

use clap::error::ErrorKind;
use clap::{Args, CommandFactory, Parser, Subcommand};
use examples::outbox::{
    BrokerSettings, FakeBroker, OutboxStore, PostgresStore, Relay, SqliteStore, StoreError,
    while_database_unavailable,
};
use examples::policies::load_policies;
use retrykit_core::{Registry, registry};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The most orders one run places: enough to watch the relay work, few
/// enough that a run ends in minutes.
const MAX_EVENTS: u32 = 100_000;

#[derive(Parser)]
#[command(
    name = "outbox",
    about = "A crash-safe transactional-outbox relay over SQLite or PostgreSQL",
    // `outbox --events 5 demo` would otherwise drop `--events 5` unseen.
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    demo: demo::DemoArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Place orders and relay them, with live progress and a summary (the default).
    Demo(demo::DemoArgs),
    /// Place orders only.
    Seed {
        /// The outbox: a SQLite file, or postgres://USER@HOST:PORT/DB.
        #[arg(long, visible_alias = "db", value_parser = parse_database)]
        database: Database,
        /// How many orders to place (1 to 100000).
        #[arg(long, default_value_t = 100, value_parser = parse_events)]
        events: u32,
    },
    /// Relay pending events until none is left; prints a line per pass that
    /// claimed something.
    Relay {
        /// The outbox: a SQLite file, or postgres://USER@HOST:PORT/DB.
        #[arg(long, visible_alias = "db", value_parser = parse_database)]
        database: Database,
        /// The broker's delivery log.
        #[arg(long)]
        broker_db: PathBuf,
        /// This relay's name in leases and logs; each running relay needs
        /// its own [default: relay-PID-RANDOM].
        #[arg(long)]
        name: Option<String>,
        /// Events claimed at once (1 to 1000).
        #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=1000))]
        batch: u32,
        #[command(flatten)]
        lease: LeaseArgs,
        #[command(flatten)]
        broker: BrokerArgs,
    },
}

/// Where the outbox lives.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Database {
    /// A SQLite file.
    Sqlite(PathBuf),
    /// A PostgreSQL server, by URL.
    Postgres(String),
    /// A private PostgreSQL cluster, started for the run.
    PrivatePostgres,
}

/// `postgres` (or `postgresql`): a private cluster; a `postgres://` or
/// `postgresql://` URL: that server; another URL (`mysql://...`): an error
/// saying what is expected; anything else: a SQLite file (write `./postgres`
/// for a file of that name).
fn parse_database(text: &str) -> Result<Database, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err(
            "the database is empty: name a SQLite file, a postgres:// URL, \
                    or `postgres` for a private cluster"
                .into(),
        );
    }
    if text == "postgres" || text == "postgresql" {
        return Ok(Database::PrivatePostgres);
    }
    if text.starts_with("postgres://") || text.starts_with("postgresql://") {
        return Ok(Database::Postgres(text.to_owned()));
    }
    // `mysql://x/y` is a URL of a database this demo has no driver for, not
    // a file name (write `./mysql:/x/y` for such a file).
    if let Some((scheme, _)) = text.split_once("://")
        && !scheme.is_empty()
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    {
        return Err(format!(
            "`{text}` is a {scheme}:// URL, and the outbox runs on SQLite or PostgreSQL only; \
             pass a SQLite file path (e.g. --database ./outbox.db), a postgres:// URL \
             (postgres://USER@HOST:PORT/DB), or `postgres` for a private cluster"
        ));
    }
    Ok(Database::Sqlite(PathBuf::from(text)))
}

#[derive(Args, Clone)]
struct LeaseArgs {
    /// How long a relay holds the events it claims; a relay that dies holds
    /// them that long. At least twice the `publish` policy's deadline.
    #[arg(long, default_value = "30s", value_parser = parse_lease)]
    lease: Duration,
}

/// A broker latency: from 0 to 10 s, so that a run still ends in minutes.
fn parse_latency(text: &str) -> Result<Duration, String> {
    let rule = "a broker latency is from 0s to 10s; for example --latency 5ms";
    match retrykit_config::parse_duration(text) {
        Ok(latency) if latency <= Duration::from_secs(10) => Ok(latency),
        Ok(_) => Err(format!("{text} is out of range: {rule}")),
        Err(e) => Err(format!("{e}: {rule}")),
    }
}

/// A lease: from 10 ms to 1 hour.
fn parse_lease(text: &str) -> Result<Duration, String> {
    let rule = "a lease is from 10ms to 1h; for example --lease 30s";
    match retrykit_config::parse_duration(text) {
        Ok(lease) if (Duration::from_millis(10)..=Duration::from_secs(3600)).contains(&lease) => {
            Ok(lease)
        }
        Ok(_) => Err(format!("{text} is out of range: {rule}")),
        Err(e) => Err(format!("{e}: {rule}")),
    }
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
    #[arg(long, default_value = "1500ms", value_parser = retrykit_config::parse_duration)]
    outage: Duration,
    /// When the outage starts, after the relay starts.
    #[arg(long, default_value = "300ms", value_parser = retrykit_config::parse_duration)]
    outage_at: Duration,
    /// The retry profile [default: $RETRY_PROFILE, else demo].
    #[arg(long)]
    profile: Option<String>,
    /// Publish without the `publish` policy's circuit breaker (`breaker =
    /// "none"`), to compare the broker calls during the outage.
    #[arg(long)]
    no_breaker: bool,
    /// Seeds the broker's failures.
    #[arg(long, default_value_t = 7)]
    seed: u64,
    /// How long the broker takes to accept a call (up to 10s).
    #[arg(long, default_value = "0s", value_parser = parse_latency)]
    latency: Duration,
    /// How long the broker's answer takes to come back after it logged the
    /// delivery (up to 10s; a relay that dies meanwhile makes a duplicate).
    #[arg(long, default_value = "0s", value_parser = parse_latency)]
    ack_latency: Duration,
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
            latency: self.latency,
            ack_latency: self.ack_latency,
        }
    }

    /// These settings as `outbox relay` flags, the broker's dice seeded by `seed`.
    fn flags(&self, seed: u64) -> Vec<String> {
        let duration = |d: Duration| retrykit_config::show_duration(d);
        vec![
            format!("--failure-rate={}", self.failure_rate),
            format!("--throttle-rate={}", self.throttle_rate),
            format!("--reject-rate={}", self.reject_rate),
            format!("--outage={}", duration(self.outage)),
            format!("--outage-at={}", duration(self.outage_at)),
            format!("--seed={seed}"),
            format!("--latency={}", duration(self.latency)),
            format!("--ack-latency={}", duration(self.ack_latency)),
            format!("--profile={}", self.profile()),
        ]
        .into_iter()
        .chain(self.no_breaker.then(|| "--no-breaker".to_owned()))
        .collect()
    }

    /// Loads and installs the policies with this profile; with
    /// `--no-breaker`, the `publish` policy is installed without its
    /// circuit breaker (the file is left as it is, so nothing warns that
    /// its breaker is unused).
    fn load_policies(&self) -> Fallible<retrykit_config::Config> {
        let config = load_policies(&self.profile())?;
        if self.no_breaker {
            let mut policies = Registry::builder();
            for name in config.policy_names() {
                let Some(policy) = config.policy(name) else {
                    continue;
                };
                let builder = match name {
                    "publish" => policy.to_builder().breaker(None),
                    _ => policy.to_builder(),
                };
                policies = policies.policy(name, builder.build()?);
            }
            registry::install(policies.build());
        }
        Ok(config)
    }

    fn profile(&self) -> String {
        examples::policies::profile(self.profile.as_deref())
    }
}

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
        None => demo::demo(cli.demo).await,
        Some(Command::Demo(args)) => demo::demo(args).await,
        Some(Command::Seed { database, events }) => seed_command(database, events).await,
        Some(Command::Relay {
            database,
            broker_db,
            name,
            batch,
            lease,
            broker,
        }) => {
            let relay = RelayOptions {
                broker_db,
                name,
                batch,
                lease: lease.lease,
                broker,
            };
            relay_command(database, relay).await
        }
    };
    if let Err(e) = result {
        // 128 + SIGINT, as a shell reports a command stopped by Ctrl-C; a
        // closed stdout (`outbox | head -1`) ends quietly with 0.
        examples::output::exit_with(&*e, if e.is::<demo::Interrupted>() { 130 } else { 1 });
    }
}

/// The subcommands take a database they can open from anywhere: a private
/// cluster lives only as long as the demo that started it.
fn no_private_cluster(command: &str) -> Box<dyn std::error::Error> {
    format!(
        "`outbox {command} --database postgres` has no cluster to use: a private cluster \
         lives as long as the demo that starts it; pass --database postgres://USER@HOST:PORT/DB"
    )
    .into()
}

async fn seed_command(database: Database, events: u32) -> Fallible<()> {
    match database {
        Database::Sqlite(path) => seed(&SqliteStore::open(&path)?, events).await,
        Database::Postgres(url) => seed(&PostgresStore::connect(&url).await?, events).await,
        Database::PrivatePostgres => Err(no_private_cluster("seed")),
    }
}

/// Places `events` orders, one transaction each.
async fn seed(store: &impl OutboxStore, events: u32) -> Fallible<()> {
    for i in 0..events {
        store.place_order(&format!("item-{i}")).await?;
    }
    Ok(())
}

/// What `outbox relay` runs with, besides its database.
struct RelayOptions {
    broker_db: PathBuf,
    name: Option<String>,
    batch: u32,
    lease: Duration,
    broker: BrokerArgs,
}

async fn relay_command(database: Database, options: RelayOptions) -> Fallible<()> {
    options.broker.load_policies()?;
    let who = options.name.as_deref().unwrap_or("relay");
    match database {
        Database::Sqlite(path) => {
            let store = while_database_unavailable(who, "opening the outbox", || async {
                Ok::<_, StoreError>(SqliteStore::open(&path)?)
            })
            .await?;
            run_relay(store, options).await
        }
        Database::Postgres(url) => {
            // A relay started while the server restarts waits for it.
            let store = while_database_unavailable(who, "connecting to the outbox", || {
                PostgresStore::connect(&url)
            })
            .await?;
            run_relay(store, options).await
        }
        Database::PrivatePostgres => Err(no_private_cluster("relay")),
    }
}

/// Relays until no event is pending, printing what each pass did.
async fn run_relay(store: impl OutboxStore, options: RelayOptions) -> Fallible<()> {
    // Relays started together on a fresh file race to switch it to WAL, and
    // SQLite answers the loser "locked" at once, whatever its busy timeout:
    // opening is retried, with a warning, as the outbox is.
    let who = options.name.as_deref().unwrap_or("relay");
    let broker = while_database_unavailable(who, "opening the broker's log", || async {
        Ok::<_, StoreError>(FakeBroker::open(
            &options.broker_db,
            options.broker.settings(),
        )?)
    })
    .await?;
    let broker = Arc::new(broker);
    let mut relay = Relay::new(store, broker)
        .batch(options.batch)
        .lease(options.lease);
    if let Some(name) = options.name {
        relay = relay.named(name);
    }
    if let Some(warning) = relay.lease_warning() {
        eprintln!("warning: {}: {warning}", relay.name());
    }
    let name = relay.name().to_owned();
    // A closed stdout does not stop a relay mid-run (its events would wait
    // for their lease to end): it relays on without its log and ends quietly.
    let mut closed = None;
    relay
        .run_until_idle(Duration::from_millis(20), |pass| {
            if pass.claimed() > 0 && closed.is_none() {
                closed = examples::output::println(&format!(
                    "{name}: published {} rescheduled {} dead {} calls {} released {} lease-lost {} \
                     held-back {}",
                    pass.published,
                    pass.rescheduled,
                    pass.dead,
                    pass.calls,
                    pass.released,
                    pass.lease_lost,
                    pass.held_back
                ))
                .err();
            }
        })
        .await?;
    match closed {
        Some(e) => Err(e.into()),
        None => Ok(()),
    }
}

/// Any error, for `main` to report.
type Fallible<T> = Result<T, Box<dyn std::error::Error>>;
