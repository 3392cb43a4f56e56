//! The tail harness's server: hyper on 127.0.0.1, every request answered
//! 200 after a latency drawn from retrykit-sim's [`TailServer`] model (the
//! simulator's), from one seeded generator. It counts every request it
//! receives (so extra requests are measured on the server's side) and how
//! late each one's sleep ended, to tell whether the machine kept up. A
//! request whose client went away (a cancelled hedge) stops being served:
//! hyper drops its future with the connection.

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
use std::time::Instant;
use tokio::net::TcpListener;

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

/// Starts the server on 127.0.0.1 (an OS-chosen port) in the current tokio
/// runtime; a sleep ending later than `tolerance` counts as late.
pub(crate) async fn start(
    model: TailServer,
    seed: u64,
    tolerance: std::time::Duration,
) -> std::io::Result<Server> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let counts = Arc::new(Counts::default());
    let rng = Arc::new(Mutex::new(SmallRng::seed_from_u64(seed)));
    let shared = counts.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let _ = stream.set_nodelay(true);
            let (counts, rng) = (shared.clone(), rng.clone());
            let service = service_fn(move |_req: Request<Incoming>| {
                let (counts, rng) = (counts.clone(), rng.clone());
                async move {
                    counts.requests.fetch_add(1, Ordering::Relaxed);
                    let busy = counts.in_progress.fetch_add(1, Ordering::Relaxed);
                    let _guard = InProgress(counts.clone());
                    let latency = {
                        let mut rng = rng.lock().unwrap_or_else(PoisonError::into_inner);
                        model.latency(rng.random(), rng.random(), busy)
                    };
                    let due = Instant::now() + latency;
                    tokio::time::sleep(latency).await;
                    if Instant::now().saturating_duration_since(due) > tolerance {
                        counts.late.fetch_add(1, Ordering::Relaxed);
                    }
                    counts.served.fetch_add(1, Ordering::Relaxed);
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
