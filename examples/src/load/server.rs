//! The load harness's server: hyper on 127.0.0.1 that serves at most
//! `capacity` requests at once, each for a fixed service time, and queues
//! the rest (first come, first served). It measures what the dependency
//! sees: each request's latency from arrival to reply (its queue and its
//! service), and the most requests it held at once (queued and served).

use super::latency::Latencies;
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::time::Instant;

/// What the server saw.
#[derive(Debug, Default)]
pub(crate) struct Seen {
    /// Requests held now, queued or served.
    held: AtomicU64,
    /// The most requests held at once.
    pub(crate) peak: AtomicU64,
    /// Requests served to the end.
    pub(crate) served: AtomicU64,
    /// Their service times summed, in microseconds: a sleep of the service
    /// time takes a little longer on a real timer.
    pub(crate) service_us: AtomicU64,
    /// Each served request's latency, arrival to reply.
    pub(crate) latencies: Mutex<Latencies>,
}

/// Counts a request as held until dropped (served, or its client gone).
struct Held(Arc<Seen>);

impl Held {
    fn new(seen: &Arc<Seen>) -> Self {
        let now = seen.held.fetch_add(1, Ordering::Relaxed) + 1;
        seen.peak.fetch_max(now, Ordering::Relaxed);
        Held(seen.clone())
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.0.held.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A running server: its address and what it saw. It stops when dropped.
pub(crate) struct Server {
    pub(crate) addr: SocketAddr,
    pub(crate) seen: Arc<Seen>,
    accept: tokio::task::JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

impl Server {
    /// Starts serving `capacity` requests at once, each for `service`.
    pub(crate) async fn start(capacity: u32, service: Duration) -> std::io::Result<Server> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let seen = Arc::new(Seen::default());
        let slots = Arc::new(Semaphore::new(capacity as usize));
        let shared = seen.clone();
        let accept = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let _ = stream.set_nodelay(true);
                let (seen, slots) = (shared.clone(), slots.clone());
                tokio::spawn(async move {
                    let serve = service_fn(move |_: Request<Incoming>| {
                        let (seen, slots) = (seen.clone(), slots.clone());
                        async move { Ok::<_, Infallible>(answer(&seen, &slots, service).await) }
                    });
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), serve)
                        .await;
                });
            }
        });
        Ok(Server { addr, seen, accept })
    }
}

/// One request: queued for a slot, served for `service`, answered 200.
async fn answer(seen: &Arc<Seen>, slots: &Semaphore, service: Duration) -> Response<Full<Bytes>> {
    let arrived = Instant::now();
    let _held = Held::new(seen);
    // The semaphore is never closed, so the slot always comes.
    let _slot = slots.acquire().await;
    let began = Instant::now();
    tokio::time::sleep(service).await;
    let took = u64::try_from(began.elapsed().as_micros()).unwrap_or(u64::MAX);
    seen.service_us.fetch_add(took, Ordering::Relaxed);
    seen.served.fetch_add(1, Ordering::Relaxed);
    seen.latencies
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .record(arrived.elapsed());
    Response::new(Full::new(Bytes::from_static(b"ok")))
}
