//! The coordinator: serves, starts the client processes, sends them the
//! common start, and collects what every client and the server saw.

use super::child::{instant_of, wall_ns};
use super::clients::ClientOutcome;
use super::options::{FleetArgs, Plan};
use super::server::{FleetServer, ServerCounts, Service};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

/// How long client processes may take to connect their clients.
const READY_WITHIN: Duration = Duration::from_secs(60);
/// Time between the last process's ready and the common start: enough for
/// every process to read `go` and spawn its clients.
const START_AFTER: Duration = Duration::from_millis(300);
/// How long after the horizon client processes may take to report.
const REPORT_WITHIN: Duration = Duration::from_secs(30);

/// What a real fleet did.
#[derive(Debug, Clone)]
pub(crate) struct Measurement {
    /// What the server counted.
    pub(crate) server: ServerCounts,
    /// Every client's ending, by index.
    pub(crate) clients: Vec<ClientOutcome>,
    /// Times the processes' fleet breakers fell back to their local ones,
    /// when they had fleet breakers.
    pub(crate) fallbacks: Option<u64>,
}

/// A line from a client process, or its end.
enum Said {
    Line(String),
    Closed,
}

/// The client processes, killed if they are still running when dropped.
struct Children(Vec<Child>);

impl Drop for Children {
    fn drop(&mut self) {
        for child in &mut self.0 {
            if matches!(child.try_wait(), Ok(None)) {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }
}

/// Runs the fleet of `args` in `processes` client processes of `exe`,
/// each given `extra` flags besides its share (a breaker's scope).
pub(crate) fn measure(
    args: &FleetArgs,
    plan: Plan,
    exe: &std::path::Path,
    extra: &[String],
) -> Result<Measurement, Box<dyn std::error::Error>> {
    // One worker: the server is the measuring instrument, and one thread
    // takes the least CPU from the clients and wakes no other thread.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    let service = Service {
        tick: args.tick,
        outage: args.outage,
        capacity: args.capacity,
        ticks: args.ticks(),
        clients: args.clients,
    };
    let server = runtime.block_on(FleetServer::bind(service, args.timer_resolution))?;
    let (tx, rx) = channel::<(usize, Said)>();
    let mut children = Children(Vec::new());
    let processes = plan.processes;
    for p in 0..processes {
        // Contiguous shares, so client i is simulated client i.
        let (first, end) = plan.share(p, args.clients);
        let (c0, c1) = plan.share(p, plan.connections);
        let mut child = Command::new(exe)
            .arg("--config")
            .arg(&args.config)
            .args(["--policy", &args.policy])
            .args(["--seed", &args.seed.to_string()])
            .args(["--horizon", &format!("{}ms", args.horizon.as_millis())])
            .args(["--clients", &args.clients.to_string()])
            .args(["--child-of", &server.addr().to_string()])
            .args(["--child-clients", &format!("{first}..{end}")])
            .args(["--connections", &(c1 - c0).to_string()])
            .args(
                args.throttle
                    .iter()
                    .flat_map(|t| ["--throttle".to_owned(), t.to_string()]),
            )
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let stdout = child
            .stdout
            .take()
            .ok_or("no stdout from a client process")?;
        let tx = tx.clone();
        let index = p as usize;
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send((index, Said::Line(line))).is_err() {
                    return;
                }
            }
            let _ = tx.send((index, Said::Closed));
        });
        children.0.push(child);
    }
    drop(tx);
    // Everyone connected: line tick 0 up with the first process's timer.
    let epochs = wait_ready(&rx, processes as usize)?;
    let first_epoch = epochs.first().copied().unwrap_or_default();
    let earliest = wall_ns(Instant::now() + START_AFTER);
    let ms = 1_000_000;
    let start_ns = first_epoch + (earliest.saturating_sub(first_epoch)).div_ceil(ms) * ms;
    let start = instant_of(start_ns);
    server.start(start);
    for child in &mut children.0 {
        let stdin = child.stdin.as_mut().ok_or("no stdin to a client process")?;
        writeln!(stdin, "go {start_ns}")?;
        stdin.flush()?;
    }
    let (clients, fallbacks) = collect(
        &rx,
        processes as usize,
        start + args.horizon + REPORT_WITHIN,
    )?;
    for (p, child) in children.0.iter_mut().enumerate() {
        let status = child.wait()?;
        if !status.success() {
            return Err(format!("client process {p} failed ({status})").into());
        }
    }
    Ok(Measurement {
        server: server.counts(),
        clients,
        fallbacks,
    })
}

/// Each process's timer epoch, once all have said ready.
fn wait_ready(
    rx: &Receiver<(usize, Said)>,
    processes: usize,
) -> Result<Vec<u64>, Box<dyn std::error::Error>> {
    let mut epochs = vec![None; processes];
    let until = Instant::now() + READY_WITHIN;
    while epochs.iter().any(Option::is_none) {
        let left = until.saturating_duration_since(Instant::now());
        let (p, said) = rx
            .recv_timeout(left)
            .map_err(|_| "client processes did not connect their clients within 60s")?;
        match said {
            Said::Line(line) => {
                let epoch = line
                    .strip_prefix("ready ")
                    .and_then(|n| n.parse().ok())
                    .ok_or_else(|| format!("client process {p} said {line:?}, not `ready`"))?;
                epochs[p] = Some(epoch);
            }
            Said::Closed => {
                return Err(format!(
                    "client process {p} ended before it was ready (its error is above)"
                )
                .into());
            }
        }
    }
    Ok(epochs.into_iter().flatten().collect())
}

/// Every client's outcome, once all processes have said `done`, and the
/// fleet breakers' fall-backs summed when any process reported them.
fn collect(
    rx: &Receiver<(usize, Said)>,
    processes: usize,
    until: Instant,
) -> Result<(Vec<ClientOutcome>, Option<u64>), Box<dyn std::error::Error>> {
    let mut outcomes = Vec::new();
    let mut fallbacks = None;
    let mut done = vec![false; processes];
    while done.iter().any(|d| !d) {
        let left = until.saturating_duration_since(Instant::now());
        let (p, said) = rx
            .recv_timeout(left)
            .map_err(|_| "client processes did not report within 30s of the horizon")?;
        match said {
            Said::Line(line) if line == "done" => done[p] = true,
            Said::Line(line) if line.starts_with("fallbacks ") => {
                let n: u64 = line["fallbacks ".len()..]
                    .parse()
                    .map_err(|_| format!("client process {p} said {line:?}"))?;
                fallbacks = Some(fallbacks.unwrap_or(0u64).saturating_add(n));
            }
            Said::Line(line) => outcomes.push(ClientOutcome::parse(&line).ok_or_else(|| {
                format!("client process {p} said {line:?}, not a client's outcome")
            })?),
            Said::Closed => {
                if !done[p] {
                    return Err(format!(
                        "client process {p} ended before reporting (its error is above)"
                    )
                    .into());
                }
            }
        }
    }
    outcomes.sort_by_key(|o| o.index);
    Ok((outcomes, fallbacks))
}
