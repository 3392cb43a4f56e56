//! The tail harness's servers: every request answered after a latency drawn
//! from retrykit-sim's [`TailServer`] model (the simulator's), from one
//! seeded generator ([`Latencies`]): hyper on 127.0.0.1 answering 200 here,
//! a tonic server answering OK in `grpc`. They count every request they
//! receive (so extra requests are measured on the server's side) and how
//! late each one's sleep ended, to tell whether the machine kept up. A
//! request whose client went away (a cancelled hedge) stops being served:
//! hyper drops its future with the connection (HTTP/1.1) or the stream's
//! reset (HTTP/2).

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use retrykit_sim::TailServer;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::time::Instant;

/// What the server saw.
#[derive(Debug, Default)]
pub(crate) struct Counts {
    /// Requests received.
    pub(crate) requests: AtomicU64,
    /// Requests in progress now (the load the model slows by).
    in_progress: AtomicU64,
    /// Requests whose sleep ended more than the tolerance late.
    pub(crate) late: AtomicU64,
    /// Requests served to the end.
    pub(crate) served: AtomicU64,
}

/// Counts a request as in progress until dropped (served or cancelled).
struct InProgress(Arc<Counts>);

impl Drop for InProgress {
    fn drop(&mut self) {
        self.0.in_progress.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The running server: its address and counts.
pub(crate) struct Server {
    pub(crate) addr: SocketAddr,
    pub(crate) counts: Arc<Counts>,
}

/// Each request's latency, drawn from the model with one seeded generator,
/// and the counts; shared by all of a server's requests.
#[derive(Clone)]
pub(crate) struct Latencies {
    model: TailServer,
    rng: Arc<Mutex<SmallRng>>,
    pub(crate) counts: Arc<Counts>,
    /// A sleep ending later than this counts as late.
    tolerance: Duration,
}

impl Latencies {
    pub(crate) fn new(model: TailServer, seed: u64, tolerance: Duration) -> Self {
        Latencies {
            model,
            rng: Arc::new(Mutex::new(SmallRng::seed_from_u64(seed))),
            counts: Arc::default(),
            tolerance,
        }
    }

    /// One request's wait: counted as received, then the drawn latency
    /// slept on tokio's clock (virtual when paused), then counted as
    /// served, and as late if the sleep ended past the tolerance. Dropped
    /// (the request cancelled), it stops where it is.
    pub(crate) async fn wait(&self) {
        let counts = &self.counts;
        counts.requests.fetch_add(1, Ordering::Relaxed);
        let busy = counts.in_progress.fetch_add(1, Ordering::Relaxed);
        let _guard = InProgress(counts.clone());
        let latency = {
            let mut rng = self.rng.lock().unwrap_or_else(PoisonError::into_inner);
            self.model.latency(rng.random(), rng.random(), busy)
        };
        let due = Instant::now() + latency;
        tokio::time::sleep_until(due).await;
        if Instant::now().saturating_duration_since(due) > self.tolerance {
            counts.late.fetch_add(1, Ordering::Relaxed);
        }
        counts.served.fetch_add(1, Ordering::Relaxed);
    }
}

/// Starts the HTTP/1.1 server on 127.0.0.1 (an OS-chosen port) in the
/// current tokio runtime.
pub(crate) async fn start(latencies: Latencies) -> std::io::Result<Server> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let counts = latencies.counts.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let _ = stream.set_nodelay(true);
            let latencies = latencies.clone();
            let service = service_fn(move |_req: Request<Incoming>| {
                let latencies = latencies.clone();
                async move {
                    latencies.wait().await;
                    Ok::<_, Infallible>(Response::new(Full::new(Bytes::from_static(b"ok"))))
                }
            });
            tokio::spawn(async move {
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Ok(Server { addr, counts })
}
