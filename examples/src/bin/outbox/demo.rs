//! The demo: places orders, relays them (in this process, or in several
//! relay processes), shows live progress and prints the summary.

use super::{BrokerArgs, Database, Fallible, LeaseArgs, parse_database, parse_events, seed};
use clap::Args;
use examples::outbox::{
    Counts, FakeBroker, OutboxStore, PostgresStore, PrivatePostgres, Relay, SqliteStore, Summary,
    now_ms,
};
use examples::output::{print, println};
use std::cell::Cell;
use std::io::IsTerminal;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The most relay processes one demo runs.
const MAX_RELAYS: i64 = 64;

/// How often the progress line is refreshed.
const PROGRESS_EVERY: Duration = Duration::from_millis(250);

#[derive(Args, Clone)]
pub(crate) struct DemoArgs {
    /// How many orders to place (1 to 100000).
    #[arg(long, default_value_t = 200, value_parser = parse_events)]
    events: u32,
    /// The outbox: a SQLite file, kept after the run (default: a temporary
    /// file, removed at exit); postgres://USER@HOST:PORT/DB for a PostgreSQL
    /// server; or `postgres` for a private cluster started for the run.
    #[arg(long, visible_alias = "db", value_parser = parse_database)]
    database: Option<Database>,
    /// How many relays run side by side (1 to 64): 1 relays in this
    /// process, more run as `outbox relay` processes.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=MAX_RELAYS))]
    relays: u32,
    #[command(flatten)]
    lease: LeaseArgs,
    #[command(flatten)]
    pub(crate) broker: BrokerArgs,
}

/// The run was stopped with Ctrl-C.
#[derive(Debug)]
pub(crate) struct Interrupted;

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("interrupted")
    }
}

impl std::error::Error for Interrupted {}

pub(crate) async fn demo(args: DemoArgs) -> Fallible<()> {
    let config = args.broker.load_policies()?;
    // The broker's log, and the outbox unless --database names one, live here.
    let scratch = tempfile::Builder::new().prefix("outbox-demo-").tempdir()?;
    let path = scratch.path().to_owned();
    let result = until_interrupted(run(&args, &config, &path)).await;
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
/// ends the run through the normal return path, which cleans up (relay
/// processes and a private cluster included).
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

/// Where the outbox is: how the demo names it, and the `--database` value
/// relay processes are given.
struct Outbox {
    shown: String,
    database: String,
}

async fn run(args: &DemoArgs, config: &retrykit_config::Config, scratch: &Path) -> Fallible<()> {
    match args.database.clone() {
        None | Some(Database::Sqlite(_)) => {
            let (db, kept) = match &args.database {
                Some(Database::Sqlite(path)) => (path.clone(), ""),
                _ => (
                    scratch.join("outbox.db"),
                    " (a temporary file, removed at exit; --database keeps one)",
                ),
            };
            let outbox = Outbox {
                shown: format!("{}{kept}", db.display()),
                database: db.display().to_string(),
            };
            let (monitor, relay_store) = (SqliteStore::open(&db)?, SqliteStore::open(&db)?);
            relay_all(args, config, scratch, &outbox, monitor, relay_store).await
        }
        Some(Database::Postgres(url)) => {
            let outbox = Outbox {
                shown: format!("PostgreSQL at {url}"),
                database: url,
            };
            postgres(args, config, scratch, &outbox).await
        }
        Some(Database::PrivatePostgres) => {
            let cluster = PrivatePostgres::start()?;
            let outbox = Outbox {
                shown: format!(
                    "a private PostgreSQL cluster on 127.0.0.1:{} (a temporary directory, \
                     removed at exit)",
                    cluster.port()
                ),
                database: cluster.url(),
            };
            // The cluster is stopped when dropped, after the run, however it ends.
            postgres(args, config, scratch, &outbox).await
        }
    }
}

async fn postgres(
    args: &DemoArgs,
    config: &retrykit_config::Config,
    scratch: &Path,
    outbox: &Outbox,
) -> Fallible<()> {
    let connect = || async {
        PostgresStore::connect(&outbox.database).await.map_err(|e| {
            format!(
                "cannot open the outbox at {}: {e}; check the URL and that the server is \
                 running, or pass --database postgres for a private cluster",
                outbox.database
            )
        })
    };
    let monitor = connect().await?;
    let relay_store = connect().await?;
    relay_all(args, config, scratch, outbox, monitor, relay_store).await
}

/// Places the orders, relays them, prints the summary. `monitor` reads
/// progress; `relay_store` is the in-process relay's own connection.
async fn relay_all<S: OutboxStore>(
    args: &DemoArgs,
    config: &retrykit_config::Config,
    scratch: &Path,
    outbox: &Outbox,
    monitor: S,
    relay_store: S,
) -> Fallible<()> {
    let orders = if args.events == 1 { "order" } else { "orders" };
    println(&format!(
        "placing {} {orders} (order row + outbox event, one transaction each) in {}",
        args.events, outbox.shown
    ))?;
    seed(&monitor, args.events).await?;

    let broker_db = scratch.join("broker.db");
    let started = Instant::now();
    let live = std::io::stdout().is_terminal();
    if args.relays == 1 {
        in_process(args, &broker_db, &monitor, relay_store, started, live).await?;
    } else {
        println(&format!(
            "running {} relay processes side by side (leases of {})",
            args.relays,
            retrykit_config::show_duration(args.lease.lease)
        ))?;
        let fleet = Fleet::start(args, outbox, &broker_db)?;
        fleet.watch(&monitor, started, live).await?;
    }
    let elapsed = started.elapsed();
    if live {
        println("")?;
    }
    let max_attempts = |name| config.policy(name).and_then(|p| p.max_attempts());
    let broker = FakeBroker::open(&broker_db, Default::default())?;
    // As installed: `--no-breaker` takes the breaker off.
    let publish = retrykit_core::registry::policy("publish");
    let outage = !args.broker.outage.is_zero();
    let events = monitor.events().await?;
    let delivered = broker.deliveries()?;
    let chaos = publish
        .as_ref()
        .and_then(|p| p.chaos())
        .map(|c| c.to_string());
    let summary = Summary {
        events: &events,
        deliveries: delivered.len(),
        lost: examples::outbox::lost(&events, &delivered),
        chaos: chaos.as_deref().map(|c| {
            let faults = examples::outbox::CHAOS_FAULTS.load(std::sync::atomic::Ordering::Relaxed);
            (c, faults)
        }),
        elapsed,
        outbox_max_attempts: max_attempts("outbox"),
        publish_max_attempts: max_attempts("publish"),
        outage_calls: outage.then(|| broker.outage_calls()).transpose()?,
        breaker: publish
            .as_ref()
            .and_then(|p| p.breaker())
            .and_then(|b| b.name()),
    };
    print(&summary.to_string())?;
    Ok(())
}

/// One relay in this process, with the progress line refreshed beside it.
async fn in_process<S: OutboxStore>(
    args: &DemoArgs,
    broker_db: &Path,
    monitor: &S,
    relay_store: S,
    started: Instant,
    live: bool,
) -> Fallible<()> {
    let broker = Arc::new(FakeBroker::open(broker_db, args.broker.settings())?);
    let relay = Relay::new(relay_store, broker).lease(args.lease.lease);
    if let Some(warning) = relay.lease_warning() {
        eprintln!("warning: {warning}");
    }
    let calls = Cell::new(0u32);
    let done = Cell::new(false);
    let work = async {
        let result = relay
            .run_until_idle(Duration::from_millis(25), |pass| {
                calls.set(calls.get() + pass.calls);
            })
            .await;
        done.set(true);
        result.map_err(Box::<dyn std::error::Error>::from)
    };
    let show = async {
        let mut every = tokio::time::interval(PROGRESS_EVERY);
        loop {
            every.tick().await;
            if done.get() {
                return Ok(());
            }
            if let Ok(c) = monitor.counts(now_ms()).await {
                let tail = format!("publish calls {:>5}", calls.get());
                // A closed stdout ends the run, the relay with it.
                progress(&c, &tail, started.elapsed(), live)?;
            }
        }
    };
    let _: ((), ()) = tokio::try_join!(work, show)?;
    let c = monitor.counts(now_ms()).await?;
    progress(
        &c,
        &format!("publish calls {:>5}", calls.get()),
        started.elapsed(),
        live,
    )?;
    Ok(())
}

/// Relay processes; killed if the demo ends before they do.
struct Fleet {
    relays: Vec<(String, Option<Child>)>,
}

impl Fleet {
    fn start(args: &DemoArgs, outbox: &Outbox, broker_db: &Path) -> Fallible<Self> {
        let exe = std::env::current_exe()?;
        let lease = retrykit_config::show_duration(args.lease.lease).to_string();
        let mut fleet = Fleet { relays: Vec::new() };
        for i in 1..=args.relays {
            let name = format!("relay-{i}");
            let child = Command::new(&exe)
                .arg("relay")
                .arg(format!("--database={}", outbox.database))
                .arg(format!("--broker-db={}", broker_db.display()))
                .arg(format!("--name={name}"))
                .arg(format!("--lease={lease}"))
                .args(args.broker.flags(args.broker.seed + u64::from(i)))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .spawn()?;
            fleet.relays.push((name, Some(child)));
        }
        Ok(fleet)
    }

    /// Shows progress until every relay has exited; fails if one failed.
    async fn watch(
        mut self,
        monitor: &impl OutboxStore,
        started: Instant,
        live: bool,
    ) -> Fallible<()> {
        let total = self.relays.len();
        let mut every = tokio::time::interval(PROGRESS_EVERY);
        loop {
            every.tick().await;
            let running = self.running()?;
            let c = monitor.counts(now_ms()).await?;
            progress(
                &c,
                &format!("relays running {running}/{total}"),
                started.elapsed(),
                live,
            )?;
            if running == 0 {
                return Ok(());
            }
        }
    }

    /// How many relays are still running; an error names one that failed.
    fn running(&mut self) -> Fallible<usize> {
        let mut running = 0;
        for (name, slot) in &mut self.relays {
            let Some(child) = slot else { continue };
            match child.try_wait()? {
                None => running += 1,
                Some(status) if status.success() => *slot = None,
                Some(status) => {
                    *slot = None;
                    return Err(format!("{name} failed ({status}); its error is above").into());
                }
            }
        }
        Ok(running)
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        for child in self.relays.iter_mut().filter_map(|(_, c)| c.as_mut()) {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Prints the progress line: in place on a terminal, one line each otherwise.
fn progress(c: &Counts, tail: &str, elapsed: Duration, live: bool) -> std::io::Result<()> {
    let line = format!(
        "[{:>5.1}s] published {:>4}/{} | due {:>4} | waiting {:>4} | dead-lettered {:>3} | {tail}",
        elapsed.as_secs_f64(),
        c.published,
        c.total(),
        c.due,
        c.waiting,
        c.dead,
    );
    if live {
        print(&format!("\r{line}"))
    } else {
        println(&line)
    }
}
