//! The service the fleet calls: a hyper server on 127.0.0.1 that plays the
//! simulator's herd scenario on the wall clock and counts what arrives.
//!
//! Ticks are counted from the fleet's common start instant. A call in a tick
//! before the outage ends gets 503; after it, the first `capacity` calls of
//! each tick get 200 and the rest 429, with no `Retry-After` (the simulator's
//! rule, so that both see the same service). Each call says which attempt it
//! is (`x-attempt`) and when its client's timer was due (`x-due-us`), so the
//! server counts first calls apart from retries and sees how late each
//! retry arrived.

use super::wire::{ATTEMPT_HEADER, DUE_HEADER};
use http_body_util::Empty;
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use tokio::net::{TcpSocket, TcpStream};

/// Connections waiting to be accepted: the fleet connects thousands of
/// clients before the start, in bounded batches (see `child`).
const BACKLOG: u32 = 4096;

/// What the service does, tick by tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Service {
    /// The tick.
    pub(crate) tick: Duration,
    /// How long the service is down from the start.
    pub(crate) outage: Duration,
    /// Calls per tick it serves once it is back.
    pub(crate) capacity: u64,
    /// Ticks it counts; calls after them get 503 and are counted apart.
    pub(crate) ticks: u64,
    /// Clients in the fleet: the most first calls whose arrival is kept.
    pub(crate) clients: u32,
}

impl Service {
    /// The first tick that starts after the outage (the simulator's rule).
    pub(crate) fn outage_ticks(&self) -> u64 {
        let ticks = self.outage.as_nanos().div_ceil(self.tick.as_nanos().max(1));
        u64::try_from(ticks).unwrap_or(u64::MAX)
    }
}

/// Counts of one tick, updated by every connection's task.
#[derive(Default)]
struct TickCounts {
    first_calls: AtomicU32,
    retries: AtomicU32,
    /// Calls that arrived in a later tick than their timer allowed.
    late: AtomicU32,
    /// Calls admitted to the capacity count, in order of arrival.
    arrived_after_outage: AtomicU64,
}

/// Lateness buckets: bucket `i` holds lateness below `2^i` µs.
const LATENESS_BUCKETS: usize = 40;

/// Everything the server counted; [`FleetServer::counts`] snapshots it.
struct State {
    service: Service,
    /// The timer resolution the clients' wake-ups are rounded up to: a call
    /// is late when it arrives after the tick holding `due + resolution`.
    resolution: Duration,
    origin: OnceLock<Instant>,
    ticks: Vec<TickCounts>,
    /// Calls after the counted ticks, or before the start.
    outside: AtomicU64,
    /// Calls without a readable `x-attempt` header.
    malformed: AtomicU64,
    /// How late calls arrived after their due instant plus the resolution.
    lateness: [AtomicU64; LATENESS_BUCKETS],
    max_lateness_us: AtomicU64,
    /// When each first call arrived, in ns after the start (at most
    /// `first_limit` of them: one per client).
    first_arrivals: Mutex<Vec<u64>>,
    first_limit: usize,
}

/// The server, listening until dropped.
pub(crate) struct FleetServer {
    addr: SocketAddr,
    state: Arc<State>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FleetServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What the server counted, per tick and in total.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ServerCounts {
    /// First calls per tick.
    pub(crate) first_calls: Vec<u32>,
    /// Retries per tick.
    pub(crate) retries: Vec<u32>,
    /// Calls per tick that arrived after the tick their timer allowed.
    pub(crate) late: Vec<u32>,
    /// Calls outside the counted ticks (or before the start).
    pub(crate) outside: u64,
    /// Calls without a readable attempt number.
    pub(crate) malformed: u64,
    /// Lateness beyond the timer's resolution, as a log₂ histogram in µs.
    pub(crate) lateness_buckets: Vec<u64>,
    /// The largest lateness seen, in µs.
    pub(crate) max_lateness_us: u64,
    /// When each first call counted in a tick arrived, in ns after the
    /// start, in order: how this machine delivered the first wave.
    pub(crate) first_arrivals_ns: Vec<u64>,
}

impl ServerCounts {
    /// Every call counted in a tick.
    pub(crate) fn calls(&self) -> u64 {
        let sum = |v: &[u32]| v.iter().map(|&n| u64::from(n)).sum::<u64>();
        sum(&self.first_calls) + sum(&self.retries)
    }

    /// Calls in the ticks before `outage_ticks` (the outage), and in the
    /// busiest tick from it on, first calls included: the simulator's
    /// `outage_calls` and `peak_after_outage`.
    pub(crate) fn around_outage(&self, outage_ticks: u64) -> (u64, u64) {
        let split = usize::try_from(outage_ticks).unwrap_or(usize::MAX);
        let per_tick = self
            .first_calls
            .iter()
            .zip(&self.retries)
            .map(|(&f, &r)| u64::from(f) + u64::from(r));
        let (mut during, mut peak) = (0, 0);
        for (t, n) in per_tick.enumerate() {
            if t < split {
                during += n;
            } else {
                peak = peak.max(n);
            }
        }
        (during, peak)
    }

    /// Ticks from tick 0 to the last a first call reached: the first wave.
    pub(crate) fn first_wave_ticks(&self) -> usize {
        self.first_calls
            .iter()
            .rposition(|&n| n > 0)
            .map_or(0, |i| i + 1)
    }

    /// The `q`-quantile of lateness (upper bound of its power-of-two bucket), in µs.
    pub(crate) fn lateness_quantile_us(&self, q: f64) -> Option<u64> {
        let total: u64 = self.lateness_buckets.iter().sum();
        if total == 0 {
            return None;
        }
        let rank = ((q * total as f64).ceil() as u64).clamp(1, total);
        let mut seen = 0;
        for (i, &n) in self.lateness_buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return Some(1u64 << i.min(63));
            }
        }
        None
    }
}

impl FleetServer {
    /// Binds 127.0.0.1 on a free port and serves `service`; calls are
    /// refused (503, counted outside) until [`start`](Self::start) fixes tick 0.
    pub(crate) async fn bind(service: Service, resolution: Duration) -> std::io::Result<Self> {
        let socket = TcpSocket::new_v4()?;
        socket.bind(SocketAddr::from(([127, 0, 0, 1], 0)))?;
        let listener = socket.listen(BACKLOG)?;
        let addr = listener.local_addr()?;
        let ticks = usize::try_from(service.ticks).unwrap_or(usize::MAX);
        let state = Arc::new(State {
            service,
            resolution,
            origin: OnceLock::new(),
            ticks: (0..ticks).map(|_| TickCounts::default()).collect(),
            outside: AtomicU64::new(0),
            malformed: AtomicU64::new(0),
            lateness: std::array::from_fn(|_| AtomicU64::new(0)),
            max_lateness_us: AtomicU64::new(0),
            first_arrivals: Mutex::new(Vec::new()),
            first_limit: usize::try_from(service.clients).unwrap_or(usize::MAX),
        });
        let shared = state.clone();
        let task = tokio::spawn(async move {
            loop {
                match listener.accept().await {
                    Ok((stream, _)) => {
                        tokio::spawn(serve(stream, shared.clone()));
                    }
                    // Out of file descriptors or similar: the clients that
                    // could not connect say so themselves; keep serving the rest.
                    Err(_) => tokio::time::sleep(Duration::from_millis(1)).await,
                }
            }
        });
        Ok(FleetServer { addr, state, task })
    }

    /// Where it listens.
    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Fixes tick 0 at `origin`, the fleet's common start. Only the first call counts.
    pub(crate) fn start(&self, origin: Instant) {
        let _ = self.state.origin.set(origin);
    }

    /// A snapshot of the counts, trailing ticks without calls left out.
    pub(crate) fn counts(&self) -> ServerCounts {
        let s = &self.state;
        let load = |f: fn(&TickCounts) -> &AtomicU32| -> Vec<u32> {
            s.ticks
                .iter()
                .map(|t| f(t).load(Ordering::Relaxed))
                .collect()
        };
        let mut first_calls = load(|t| &t.first_calls);
        let mut retries = load(|t| &t.retries);
        let mut late = load(|t| &t.late);
        let used = (0..s.ticks.len())
            .rev()
            .find(|&i| first_calls[i] + retries[i] > 0)
            .map_or(0, |i| i + 1);
        for v in [&mut first_calls, &mut retries, &mut late] {
            v.truncate(used);
        }
        ServerCounts {
            first_calls,
            retries,
            late,
            outside: s.outside.load(Ordering::Relaxed),
            malformed: s.malformed.load(Ordering::Relaxed),
            lateness_buckets: s
                .lateness
                .iter()
                .map(|b| b.load(Ordering::Relaxed))
                .collect(),
            max_lateness_us: s.max_lateness_us.load(Ordering::Relaxed),
            first_arrivals_ns: {
                let mut v = s
                    .first_arrivals
                    .lock()
                    .map(|v| v.clone())
                    .unwrap_or_default();
                v.sort_unstable();
                v
            },
        }
    }
}

async fn serve(stream: TcpStream, state: Arc<State>) {
    let _ = stream.set_nodelay(true);
    let service = service_fn(move |request: Request<Incoming>| {
        let status = state.answer(&request, Instant::now());
        async move {
            let mut response = Response::new(Empty::<Bytes>::new());
            *response.status_mut() = status;
            Ok::<_, Infallible>(response)
        }
    });
    let _ = http1::Builder::new()
        .pipeline_flush(true)
        .serve_connection(TokioIo::new(stream), service)
        .await;
}

impl State {
    /// Counts one call arriving at `now` and decides its status.
    fn answer(&self, request: &Request<Incoming>, now: Instant) -> StatusCode {
        let header = |name: &str| -> Option<u64> {
            request.headers().get(name)?.to_str().ok()?.parse().ok()
        };
        let Some(attempt) = header(ATTEMPT_HEADER).filter(|&a| a >= 1) else {
            self.malformed.fetch_add(1, Ordering::Relaxed);
            return StatusCode::BAD_REQUEST;
        };
        let since = self
            .origin
            .get()
            .and_then(|origin| now.checked_duration_since(*origin));
        let tick_ns = self.service.tick.as_nanos().max(1);
        let tick = since.map(|s| s.as_nanos() / tick_ns);
        let Some(counts) = tick
            .and_then(|t| usize::try_from(t).ok())
            .and_then(|t| self.ticks.get(t))
        else {
            self.outside.fetch_add(1, Ordering::Relaxed);
            return StatusCode::SERVICE_UNAVAILABLE;
        };
        let (since, tick) = (since.unwrap_or_default(), tick.unwrap_or_default());
        let kind = if attempt == 1 {
            &counts.first_calls
        } else {
            &counts.retries
        };
        kind.fetch_add(1, Ordering::Relaxed);
        if attempt == 1
            && let Ok(mut arrivals) = self.first_arrivals.lock()
            && arrivals.len() < self.first_limit
        {
            arrivals.push(u64::try_from(since.as_nanos()).unwrap_or(u64::MAX));
        }
        // The earliest tick this call could have reached: its timer was due
        // at `due`, and fires up to one resolution later.
        let due = Duration::from_micros(header(DUE_HEADER).unwrap_or(0));
        let allowed = due.saturating_add(self.resolution);
        if since > allowed {
            let late_us = u64::try_from((since - allowed).as_micros()).unwrap_or(u64::MAX);
            let bucket = (64 - late_us.leading_zeros() as usize).min(LATENESS_BUCKETS - 1);
            self.lateness[bucket].fetch_add(1, Ordering::Relaxed);
            self.max_lateness_us.fetch_max(late_us, Ordering::Relaxed);
            if tick > allowed.as_nanos() / tick_ns {
                counts.late.fetch_add(1, Ordering::Relaxed);
            }
        } else {
            self.lateness[0].fetch_add(1, Ordering::Relaxed);
        }
        let tick = u64::try_from(tick).unwrap_or(u64::MAX);
        if tick < self.service.outage_ticks() {
            return StatusCode::SERVICE_UNAVAILABLE;
        }
        // Admission is per tick, first come first served, as in the simulator.
        let place = counts.arrived_after_outage.fetch_add(1, Ordering::Relaxed);
        if place < self.service.capacity {
            StatusCode::OK
        } else {
            StatusCode::TOO_MANY_REQUESTS
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::wire::Lane;

    fn service(tick_ms: u64, outage_ms: u64, capacity: u64, ticks: u64) -> Service {
        Service {
            tick: Duration::from_millis(tick_ms),
            outage: Duration::from_millis(outage_ms),
            capacity,
            ticks,
            clients: 10,
        }
    }

    #[test]
    fn the_outage_covers_every_tick_that_starts_before_it_ends() {
        // Ticks 0, 1 and 2 start before 25 ms.
        assert_eq!(service(10, 25, 2, 100).outage_ticks(), 3);
        assert_eq!(service(10, 30, 2, 100).outage_ticks(), 3);
        assert_eq!(service(1, 0, 1, 1).outage_ticks(), 0);
    }

    #[test]
    fn counts_add_up_and_lateness_quantiles_are_bucket_bounds() {
        assert_eq!(ServerCounts::default().calls(), 0);
        assert_eq!(ServerCounts::default().lateness_quantile_us(0.5), None);
        let c = ServerCounts {
            first_calls: vec![3],
            retries: vec![0, 2],
            lateness_buckets: vec![0, 0, 9, 1],
            ..Default::default()
        };
        assert_eq!(c.calls(), 5);
        assert_eq!(c.lateness_quantile_us(0.5), Some(4));
        assert_eq!(c.lateness_quantile_us(1.0), Some(8));
    }

    #[tokio::test]
    async fn calls_before_the_start_are_refused_and_counted_outside() {
        // A one-minute tick: every call of this test lands in tick 0.
        let server = FleetServer::bind(service(60_000, 0, 5, 1), Duration::from_millis(1))
            .await
            .unwrap();
        assert!(server.addr().ip().is_loopback());
        assert_eq!(
            server.counts(),
            ServerCounts {
                lateness_buckets: vec![0; LATENESS_BUCKETS],
                ..Default::default()
            }
        );
        let lane = Lane::open(server.addr(), None).await.unwrap();
        let refused = lane.call(1, 0).await.unwrap_err();
        assert_eq!(refused.to_string(), "HTTP 503");
        assert_eq!((server.counts().outside, server.counts().calls()), (1, 0));
        server.start(Instant::now());
        lane.call(1, 0).await.unwrap();
        // Only the first start counts: a later one would move tick 0 away.
        server.start(Instant::now() + Duration::from_secs(3600));
        lane.call(2, 0).await.unwrap();
        let counts = server.counts();
        assert_eq!((counts.first_calls, counts.retries), (vec![1], vec![1]));
        assert_eq!(counts.outside, 1);
    }

    #[tokio::test]
    async fn after_the_outage_a_tick_serves_its_capacity_then_throttles() {
        let server = FleetServer::bind(service(60_000, 0, 1, 1), Duration::from_millis(1))
            .await
            .unwrap();
        server.start(Instant::now());
        let lane = Lane::open(server.addr(), None).await.unwrap();
        assert!(lane.call(1, 0).await.is_ok());
        assert_eq!(lane.call(2, 0).await.unwrap_err().to_string(), "HTTP 429");
        let counts = server.counts();
        assert_eq!((counts.first_calls[0], counts.retries[0]), (1, 1));
        // A call with no attempt number is malformed, not counted in a tick.
        assert_eq!(lane.call(0, 0).await.unwrap_err().to_string(), "HTTP 400");
        assert_eq!(server.counts().malformed, 1);
    }
}
