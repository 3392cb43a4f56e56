//! The `fleet` command's flags, and the checks that keep every value within
//! what one machine can run: each refusal names the flag, the rule and the fix.

use super::breakers::BreakerMode;
pub use crate::output::Format;
use retrykit_config::{parse_duration, show_duration};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// The shortest tick: tokio's timer cannot aim a call at anything finer.
pub(crate) const MIN_TICK: Duration = Duration::from_millis(1);
/// The longest run (the horizon), which bounds the server's per-tick counts.
pub(crate) const MAX_HORIZON: Duration = Duration::from_secs(600);
/// The most client processes.
pub(crate) const MAX_PROCESSES: u32 = 64;
/// File descriptors a process keeps for itself besides the clients' sockets.
pub(crate) const SPARE_FDS: u64 = 64;
/// The most clients: each is a tokio task holding its retry loop.
pub(crate) const MAX_CLIENTS: u32 = 200_000;
/// The most runs `--repeat` makes: each is a real fleet in real time.
pub(crate) const MAX_REPEAT: u32 = 20;
/// Connections when `--connections` is not given (see `wire` for why they are shared).
pub(crate) const DEFAULT_CONNECTIONS: u32 = 16;

/// The flags of `fleet`.
///
/// ```
/// use clap::Parser;
/// let args = examples::fleet::FleetArgs::try_parse_from(
///     ["fleet", "--config", "retry.toml", "--policy", "outbox", "--tick", "10ms"]).unwrap();
/// assert_eq!(args.tick, std::time::Duration::from_millis(10));
/// assert_eq!(args.clients, 10_000);
/// ```
#[derive(Debug, Clone, clap::Parser)]
#[command(
    name = "fleet",
    about = "Runs a real fleet of tokio clients through the retry engine against a local \
             server that is down, then limited, and prints it beside the simulator's prediction",
    // Without this, clap's --help shows the doc comment above (a doc test
    // included) instead of `about`.
    long_about = None,
    after_help = "The server on 127.0.0.1 answers 503 for --outage, then serves --capacity calls \
per --tick and answers 429 to the rest. Every client makes its first call at one common instant. \
The clients run in child processes (this binary again) so that the server's and the clients' \
sockets do not share one process's file limit."
)]
pub struct FleetArgs {
    /// The policy file
    #[arg(long, value_name = "FILE")]
    pub config: PathBuf,
    /// The policy every client follows (RETRY_PROFILE and RETRY_POLICY__* apply, as in a program)
    #[arg(long, value_name = "NAME")]
    pub policy: String,
    /// Clients in the fleet
    #[arg(long, value_name = "N", default_value_t = 10_000,
          value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_CLIENTS)))]
    pub clients: u32,
    /// Keep-alive connections the clients share, requests pipelined
    /// [default: 16, or one per client for fewer clients]
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(1..))]
    pub connections: Option<u32>,
    /// How long the server is down from the start
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = parse_duration)]
    pub outage: Duration,
    /// Calls per tick the server serves once it is back
    #[arg(long, value_name = "C", default_value_t = 20,
          value_parser = clap::value_parser!(u64).range(1..=u64::from(u32::MAX)))]
    pub capacity: u64,
    /// The server's tick (at least 1ms, at most 10s)
    #[arg(long, value_name = "DURATION", default_value = "1ms", value_parser = parse_tick)]
    pub tick: Duration,
    /// Seed of every client's jitter (client i draws what the simulator's client i draws)
    #[arg(long, value_name = "S", default_value_t = 0)]
    pub seed: u64,
    /// Time after the start when clients still retrying are stopped (at most 10m)
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_horizon)]
    pub horizon: Duration,
    /// Client processes [default: as few as the open-file limit allows]
    #[arg(long, value_name = "P", value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_PROCESSES)))]
    pub processes: Option<u32>,
    /// The clients' timer resolution, for the prediction and for telling a
    /// late call (0s: the simulator's plain tick model)
    #[arg(long, value_name = "DURATION", default_value = "1ms", value_parser = parse_duration)]
    pub timer_resolution: Duration,
    /// The share of timer steps the prediction takes as skipped, their
    /// wake-ups merged into the next (0 to 0.9; this fleet measured about
    /// 0.25 on a busy 2-vCPU machine: compare "ticks without a retry")
    #[arg(long, value_name = "SHARE", default_value_t = 0.25, value_parser = parse_share)]
    pub timer_skipped: f64,
    /// Throttle each client process to at most this many calls per ms,
    /// shared by its connections: a machine slower than this one, to
    /// check the send-rate model against [default: as fast as the machine goes]
    #[arg(long, value_name = "CALLS_PER_MS", value_parser = parse_throttle, allow_negative_numbers = true)]
    pub throttle: Option<f64>,
    /// Runs of the same fleet, one after another, each predicted from its
    /// own measured send rate; the report gives each run, the medians and
    /// spreads, and a verdict on the medians (at most 20)
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_REPEAT)))]
    pub repeat: u32,
    /// Runs the outage with the policy's circuit breaker as each scope
    /// says (`none`, `local`: one per client process, `fleet`: one shared
    /// through a private redis-server, `compare`: all three) and prints
    /// predicted beside measured calls during the outage, peak and drain
    /// [default: the policy as loaded, the peak comparison]
    #[arg(long, value_enum, value_name = "SCOPE")]
    pub breaker: Option<BreakerMode>,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Internal: run as a client process of the server at ADDR
    #[arg(long, hide = true, value_name = "ADDR", requires = "child_clients")]
    pub child_of: Option<SocketAddr>,
    /// Internal: the client processes' share of the fleet, FIRST..END
    #[arg(long, hide = true, value_name = "FIRST..END", value_parser = parse_range)]
    pub child_clients: Option<(u32, u32)>,
    /// Internal: the Redis store of a client process's fleet breaker
    #[arg(long, hide = true, value_name = "URL", requires = "child_of")]
    pub child_breaker_store: Option<String>,
}

fn parse_tick(text: &str) -> Result<Duration, String> {
    let tick = parse_duration(text).map_err(|e| e.to_string())?;
    if tick < MIN_TICK {
        return Err(format!(
            "{} is shorter than tokio's 1 ms timer resolution, so no client could aim a call at one tick; use at least 1ms",
            show_duration(tick)
        ));
    }
    if tick > Duration::from_secs(10) {
        return Err(format!(
            "{} is longer than 10s; a tick is the service's accounting step, use 1ms to 10s",
            show_duration(tick)
        ));
    }
    Ok(tick)
}

fn parse_share(text: &str) -> Result<f64, String> {
    let share: f64 = text
        .parse()
        .map_err(|_| format!("{text} is not a number; write a share such as 0.25"))?;
    if !(0.0..=retrykit_sim::TimerModel::MAX_SKIPPED).contains(&share) {
        return Err(format!("{text} is outside 0 to 0.9; use e.g. 0.25"));
    }
    Ok(share)
}

/// The fastest `--throttle`: a call per nanosecond.
pub(crate) const MAX_THROTTLE: f64 = 1e6;

fn parse_throttle(text: &str) -> Result<f64, String> {
    let rate: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("{text} is not a number; write calls per millisecond, e.g. 25"))?;
    if !(0.001..=MAX_THROTTLE).contains(&rate) {
        return Err(format!(
            "{text} is not a rate from 0.001 to 1000000 calls per millisecond (above zero and finite); \
             use e.g. 25, or leave --throttle out to run as fast as the machine goes"
        ));
    }
    Ok(rate)
}

fn parse_horizon(text: &str) -> Result<Duration, String> {
    let horizon = parse_duration(text).map_err(|e| e.to_string())?;
    if horizon > MAX_HORIZON || horizon.is_zero() {
        return Err(format!(
            "{} is outside 1ms to 10m; a real fleet runs in real time, so use at most 10m",
            show_duration(horizon)
        ));
    }
    Ok(horizon)
}

fn parse_range(text: &str) -> Result<(u32, u32), String> {
    let (a, b) = text
        .split_once("..")
        .ok_or("write it as FIRST..END, e.g. 0..5000")?;
    let a: u32 = a.parse().map_err(|e| format!("{a}: {e}"))?;
    let b: u32 = b.parse().map_err(|e| format!("{b}: {e}"))?;
    if a >= b {
        return Err(format!("{text} is empty; END must be above FIRST"));
    }
    Ok((a, b))
}

/// How the fleet is laid out, once the flags are checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Plan {
    /// Client processes.
    pub(crate) processes: u32,
    /// Connections, over all processes.
    pub(crate) connections: u32,
}

impl Plan {
    /// Process `p`'s contiguous share of `total` things, as (first, end).
    pub(crate) fn share(&self, p: u32, total: u32) -> (u32, u32) {
        let cut =
            |k: u32| (u64::from(total) * u64::from(k) / u64::from(self.processes.max(1))) as u32;
        (cut(p), cut(p + 1))
    }
}

/// A refusal of the flags taken together, after each parsed on its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FlagError(pub(crate) String);

impl std::fmt::Display for FlagError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FlagError {}

/// What this machine allows one process and the loopback interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    /// The soft limit on open files (`ulimit -n`), when readable.
    pub(crate) open_files: Option<u64>,
    /// How many ephemeral ports the kernel hands out, when readable.
    pub(crate) ephemeral_ports: Option<u64>,
}

impl Limits {
    /// Reads the limits of this process from /proc (Linux); unknown elsewhere.
    pub(crate) fn of_this_machine() -> Self {
        let open_files = std::fs::read_to_string("/proc/self/limits")
            .ok()
            .and_then(|text| {
                let line = text.lines().find(|l| l.starts_with("Max open files"))?;
                line.split_whitespace().nth(3)?.parse().ok()
            });
        let ephemeral_ports = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
            .ok()
            .and_then(|text| {
                let mut n = text.split_whitespace().map(|w| w.parse::<u64>().ok());
                let (low, high) = (n.next()??, n.next()??);
                Some(high.saturating_sub(low) + 1)
            });
        Limits {
            open_files,
            ephemeral_ports,
        }
    }

    /// Clients one process can hold a socket for.
    pub(crate) fn clients_per_process(&self) -> Option<u64> {
        self.open_files.map(|n| n.saturating_sub(SPARE_FDS))
    }
}

impl FleetArgs {
    /// Checks the flags against each other and against `limits`; returns how
    /// many client processes and connections to run.
    pub(crate) fn check(&self, limits: &Limits) -> Result<Plan, FlagError> {
        let n = u64::from(self.clients);
        if self.outage >= self.horizon {
            return Err(FlagError(format!(
                "--outage {} is not shorter than --horizon {}, so no client could ever get through; \
                 use a longer --horizon or a shorter --outage",
                show_duration(self.outage),
                show_duration(self.horizon)
            )));
        }
        let k = u64::from(
            self.connections
                .unwrap_or(DEFAULT_CONNECTIONS.min(self.clients)),
        );
        if k > n {
            return Err(FlagError(format!(
                "--connections {k} is more than --clients {n}, so some would carry nobody; use at most {n}"
            )));
        }
        if let Some(ports) = limits.ephemeral_ports
            && k > ports
        {
            return Err(FlagError(format!(
                "--connections {k} needs an ephemeral port each, but the kernel hands out only {ports} \
                 (net.ipv4.ip_local_port_range); use at most {ports}"
            )));
        }
        if let Some(per_process) = limits.clients_per_process()
            && k > per_process
        {
            return Err(FlagError(format!(
                "--connections {k} needs {k} open sockets in the server's process, but `ulimit -n` is {}; \
                 use at most {per_process} connections or raise the limit (`ulimit -n {}`)",
                limits.open_files.unwrap_or_default(),
                k + SPARE_FDS
            )));
        }
        let needed = limits
            .clients_per_process()
            .map_or(1, |per| k.div_ceil(per.max(1)));
        let processes = match self.processes {
            None => u32::try_from(needed).unwrap_or(MAX_PROCESSES),
            Some(p) if u64::from(p) > k => {
                // Connections cannot outnumber the clients: raising them is a
                // way out only while --processes is within --clients.
                let fix = if u64::from(p) <= n {
                    format!(
                        "use at most {k}, or raise --connections to {p} or more (at most --clients {n})"
                    )
                } else {
                    format!(
                        "use at most {k}: there are no more connections than clients (--clients {n})"
                    )
                };
                return Err(FlagError(format!(
                    "--processes {p} is more than the {k} connections, so some would have none; {fix}"
                )));
            }
            Some(p) if u64::from(p) < needed => {
                return Err(FlagError(format!(
                    "--processes {p} would put {} connections in one process, over `ulimit -n` ({}); use --processes {needed} or more",
                    k.div_ceil(u64::from(p)),
                    limits.open_files.unwrap_or_default()
                )));
            }
            Some(p) => p,
        };
        Ok(Plan {
            processes,
            connections: k as u32,
        })
    }

    /// The server's per-tick counters: one per tick up to the horizon.
    pub(crate) fn ticks(&self) -> u64 {
        let ticks = self
            .horizon
            .as_nanos()
            .div_ceil(self.tick.as_nanos().max(1));
        u64::try_from(ticks).unwrap_or(u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn args(flags: &[&str]) -> FleetArgs {
        let base = ["fleet", "--config", "f", "--policy", "p"];
        FleetArgs::try_parse_from(base.iter().chain(flags)).unwrap()
    }

    #[test]
    fn a_plan_cuts_the_fleet_into_contiguous_shares() {
        let one = Plan {
            processes: 1,
            connections: 64,
        };
        assert_eq!(one.share(0, 1000), (0, 1000));
        let three = Plan {
            processes: 3,
            connections: 64,
        };
        let shares: Vec<_> = (0..3).map(|p| three.share(p, 10)).collect();
        assert_eq!(shares, [(0, 3), (3, 6), (6, 10)]);
    }

    #[test]
    fn a_flag_error_displays_its_message() {
        let e = FlagError("--x 1 is bad; use 2".into());
        assert_eq!(e.to_string(), "--x 1 is bad; use 2");
    }

    #[test]
    fn limits_keep_file_descriptors_spare() {
        let limits = Limits {
            open_files: Some(1024),
            ephemeral_ports: Some(28232),
        };
        assert_eq!(limits.clients_per_process(), Some(1024 - SPARE_FDS));
        let unknown = Limits {
            open_files: None,
            ephemeral_ports: None,
        };
        assert_eq!(unknown.clients_per_process(), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_machine_s_limits_are_read_from_proc() {
        let limits = Limits::of_this_machine();
        assert!(limits.open_files.is_some_and(|n| n > 0), "{limits:?}");
        assert!(limits.ephemeral_ports.is_some_and(|n| n > 0), "{limits:?}");
    }

    #[test]
    fn connections_over_the_open_file_limit_are_refused_with_the_fix() {
        let small = Limits {
            open_files: Some(1024),
            ephemeral_ports: None,
        };
        let e = args(&["--connections", "5000"]).check(&small).unwrap_err();
        assert!(e.0.contains("--connections 5000"), "{e}");
        assert!(e.0.contains("ulimit -n 5064"), "{e}");
        let plan = args(&["--connections", "900"]).check(&small).unwrap();
        assert_eq!(
            plan,
            Plan {
                processes: 1,
                connections: 900
            }
        );
    }
}
