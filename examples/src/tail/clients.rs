//! The tail harness's clients: `concurrency` tasks, each making calls one at
//! a time until `calls` are made ([`drive`]), each call recording its
//! latency on tokio's clock and which attempt answered (above 1 with no
//! failed attempt before it: a hedge won).
//!
//! Over HTTP ([`http_call`]) a call goes through [`Retry::call`], and
//! every attempt sends one GET on a connection of its own from a small
//! pool (an attempt running beside another, a hedge, needs its own; a
//! connection whose attempt was cancelled is dropped with it).

use http_body_util::{BodyExt, Empty};
use hyper::Request;
use hyper::body::Bytes;
use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::rt::TokioIo;
use retrykit_core::{Policy, Retry};
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::net::TcpStream;
use tokio::time::Instant;

/// One call's outcome.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CallResult {
    pub(crate) latency: Duration,
    /// The attempt that answered, 1 for the first.
    pub(crate) winner: u32,
    pub(crate) ok: bool,
}

/// Runs `calls` calls from `concurrency` tasks, each calling with its own
/// caller from `new_caller` (the attempt that answered, or `None` for a
/// failed call); the results in no order.
pub(crate) async fn drive<F, Fut>(
    calls: u64,
    concurrency: u32,
    new_caller: impl Fn() -> F,
) -> Vec<CallResult>
where
    F: FnMut() -> Fut + Send + 'static,
    Fut: Future<Output = Option<u32>> + Send,
{
    let next = Arc::new(AtomicU64::new(0));
    let tasks: Vec<_> = (0..concurrency)
        .map(|_| {
            let (mut call, next) = (new_caller(), next.clone());
            tokio::spawn(async move {
                let mut out = Vec::new();
                while next.fetch_add(1, Ordering::Relaxed) < calls {
                    let started = Instant::now();
                    let winner = call().await;
                    out.push(CallResult {
                        latency: started.elapsed(),
                        winner: winner.unwrap_or(0),
                        ok: winner.is_some(),
                    });
                }
                out
            })
        })
        .collect();
    let mut all = Vec::with_capacity(usize::try_from(calls).unwrap_or(0));
    for task in tasks {
        if let Ok(results) = task.await {
            all.extend(results);
        }
    }
    all
}

/// A client task's connections (see the module docs).
pub(crate) type Pool = Arc<Mutex<Vec<SendRequest<Empty<Bytes>>>>>;

/// One call over HTTP: [`Retry::call`] under `policy`, each attempt a GET
/// on a connection of `pool`; the attempt that answered, or `None`.
pub(crate) async fn http_call(policy: Arc<Policy>, pool: Pool, addr: SocketAddr) -> Option<u32> {
    let attempts = AtomicU32::new(0);
    let result = Retry::new(&policy)
        .call(|| {
            let n = attempts.fetch_add(1, Ordering::Relaxed) + 1;
            let pool = pool.clone();
            async move { attempt(pool, addr).await.map(|()| n) }
        })
        .await;
    result.ok()
}

/// A connection from the pool, or a new one.
async fn connection(pool: &Pool, addr: SocketAddr) -> std::io::Result<SendRequest<Empty<Bytes>>> {
    let pooled = pool.lock().unwrap_or_else(PoisonError::into_inner).pop();
    if let Some(sender) = pooled.filter(|s| !s.is_closed()) {
        return Ok(sender);
    }
    let stream = TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    let (sender, conn) = http1::handshake(TokioIo::new(stream))
        .await
        .map_err(std::io::Error::other)?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(sender)
}

/// One attempt: a GET, its body read; the connection goes back to the pool
/// when the attempt completes (a cancelled attempt drops it).
async fn attempt(pool: Pool, addr: SocketAddr) -> std::io::Result<()> {
    let mut sender = connection(&pool, addr).await?;
    sender.ready().await.map_err(std::io::Error::other)?;
    let req = Request::get("/")
        .header("host", "127.0.0.1")
        .body(Empty::new())
        .map_err(std::io::Error::other)?;
    let response = sender
        .send_request(req)
        .await
        .map_err(std::io::Error::other)?;
    response
        .into_body()
        .collect()
        .await
        .map_err(std::io::Error::other)?;
    pool.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(sender);
    Ok(())
}
