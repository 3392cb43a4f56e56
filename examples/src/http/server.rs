//! A scripted HTTP server on 127.0.0.1: each request gets the next scripted
//! reply; once the script runs out, every request gets 200.

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};
use tokio::net::TcpListener;

/// How a reply states its `Retry-After`.
///
/// ```
/// let r = examples::http::RetryAfter::Seconds(3);
/// assert_eq!(r.header_value(std::time::SystemTime::now()), "3");
/// let later = examples::http::RetryAfter::In(std::time::Duration::from_secs(2));
/// assert_eq!(later.to_string(), "an HTTP-date 2s after the reply is written");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RetryAfter {
    /// `Retry-After: <delay-seconds>`.
    Seconds(u64),
    /// `Retry-After: <HTTP-date>`, this far from the moment of the reply
    /// (negative offsets are not expressible; use `Date` with a past time).
    In(Duration),
    /// `Retry-After: <HTTP-date>` at a fixed time.
    Date(SystemTime),
    /// Any text, verbatim (for garbage and negative values).
    Raw(String),
}

impl RetryAfter {
    /// The header's text at `now`.
    ///
    /// ```
    /// use examples::http::RetryAfter;
    /// assert_eq!(RetryAfter::Raw("soon".into()).header_value(std::time::SystemTime::now()), "soon");
    /// ```
    pub fn header_value(&self, now: SystemTime) -> String {
        match self {
            RetryAfter::Seconds(s) => s.to_string(),
            RetryAfter::In(d) => httpdate::fmt_http_date(now.checked_add(*d).unwrap_or(now)),
            RetryAfter::Date(t) => httpdate::fmt_http_date(*t),
            RetryAfter::Raw(s) => s.clone(),
        }
    }
}

/// What the reply will carry, before it is sent: an `In` date is only
/// known once the reply is written, so it is described, not computed.
impl std::fmt::Display for RetryAfter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RetryAfter::In(d) => write!(
                f,
                "an HTTP-date {} after the reply is written",
                retrykit_config::show_duration(*d)
            ),
            other => f.write_str(&other.header_value(SystemTime::UNIX_EPOCH)),
        }
    }
}

/// One scripted reply.
///
/// ```
/// let r = examples::http::Reply::status(503);
/// assert_eq!(r.status, 503);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// The status code.
    pub status: u16,
    /// The `Retry-After` header, if any.
    pub retry_after: Option<RetryAfter>,
    /// How long the server takes before it answers (on tokio's clock).
    pub delay: Duration,
}

impl Reply {
    /// A reply with no `Retry-After`.
    ///
    /// ```
    /// assert!(examples::http::Reply::status(500).retry_after.is_none());
    /// ```
    pub const fn status(status: u16) -> Self {
        Reply {
            status,
            retry_after: None,
            delay: Duration::ZERO,
        }
    }

    /// A reply sent after `delay`: a server slowing down.
    ///
    /// ```
    /// let r = examples::http::Reply::slow(200, std::time::Duration::from_secs(30));
    /// assert_eq!(r.delay.as_secs(), 30);
    /// ```
    pub const fn slow(status: u16, delay: Duration) -> Self {
        Reply {
            status,
            retry_after: None,
            delay,
        }
    }

    /// A reply with a `Retry-After`.
    ///
    /// ```
    /// use examples::http::{Reply, RetryAfter};
    /// let r = Reply::with_retry_after(429, RetryAfter::Seconds(1));
    /// assert_eq!(r.status, 429);
    /// ```
    pub const fn with_retry_after(status: u16, retry_after: RetryAfter) -> Self {
        Reply {
            status,
            retry_after: Some(retry_after),
            delay: Duration::ZERO,
        }
    }
}

/// One request the server answered: what it sent, and when.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use examples::http::{fetch_once, Reply, RetryAfter, ScriptedServer};
/// let server = ScriptedServer::start(vec![Reply::with_retry_after(503, RetryAfter::Seconds(4))])
///     .await
///     .unwrap();
/// let _ = fetch_once(server.addr(), "/").await;
/// let sent = &server.exchanges()[0];
/// assert_eq!((sent.status, sent.retry_after.as_deref()), (503, Some("4")));
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exchange {
    /// The status sent.
    pub status: u16,
    /// The `Retry-After` header exactly as sent, if any.
    pub retry_after: Option<String>,
    /// The wall-clock time the reply was written: what an HTTP-date in it
    /// was computed from.
    pub sent_at: SystemTime,
    /// When the request arrived, on tokio's clock (virtual time under a
    /// paused clock).
    pub arrived: tokio::time::Instant,
}

struct State {
    script: Mutex<VecDeque<Reply>>,
    requests: AtomicU32,
    log: Mutex<Vec<Exchange>>,
}

impl State {
    /// The next reply, and how long to wait before sending it.
    fn respond(&self) -> (Response<Full<Bytes>>, Duration) {
        self.requests.fetch_add(1, Ordering::SeqCst);
        let arrived = tokio::time::Instant::now();
        let next = self.script.lock().ok().and_then(|mut s| s.pop_front());
        let reply = next.unwrap_or(Reply::status(200));
        let status = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::OK);
        let body = if status.is_success() {
            "hello from 127.0.0.1"
        } else {
            "try again"
        };
        let sent_at = SystemTime::now();
        // Computed once and logged as sent, so a report shows this very text.
        let retry_after = reply.retry_after.as_ref().map(|r| r.header_value(sent_at));
        if let Ok(mut log) = self.log.lock() {
            log.push(Exchange {
                status: status.as_u16(),
                retry_after: retry_after.clone(),
                sent_at,
                arrived,
            });
        }
        let mut response = Response::builder().status(status);
        if let Some(value) = retry_after {
            response = response.header("retry-after", value);
        }
        let response = response
            .body(Full::new(Bytes::from_static(body.as_bytes())))
            .unwrap_or_else(|_| Response::new(Full::new(Bytes::new())));
        (response, reply.delay)
    }
}

/// A running scripted server.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use examples::http::{Reply, ScriptedServer};
/// let server = ScriptedServer::start(vec![Reply::status(503)]).await.unwrap();
/// assert!(server.addr().ip().is_loopback());
/// # }
/// ```
pub struct ScriptedServer {
    addr: SocketAddr,
    state: Arc<State>,
    task: tokio::task::JoinHandle<()>,
}

impl ScriptedServer {
    /// Binds 127.0.0.1 on a free port and serves `script` in order.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let s = examples::http::ScriptedServer::start(vec![]).await.unwrap();
    /// assert_eq!(s.requests(), 0);
    /// # }
    /// ```
    pub async fn start(script: Vec<Reply>) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let state = Arc::new(State {
            script: Mutex::new(script.into()),
            requests: AtomicU32::new(0),
            log: Mutex::new(Vec::new()),
        });
        let shared = state.clone();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let state = shared.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |_req: Request<Incoming>| {
                        let (response, delay) = state.respond();
                        async move {
                            tokio::time::sleep(delay).await;
                            Ok::<_, Infallible>(response)
                        }
                    });
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Ok(ScriptedServer { addr, state, task })
    }

    /// Where it listens.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let s = examples::http::ScriptedServer::start(vec![]).await.unwrap();
    /// assert_ne!(s.addr().port(), 0);
    /// # }
    /// ```
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Requests served so far.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let s = examples::http::ScriptedServer::start(vec![]).await.unwrap();
    /// assert_eq!(s.requests(), 0);
    /// # }
    /// ```
    pub fn requests(&self) -> u32 {
        self.state.requests.load(Ordering::SeqCst)
    }

    /// The gaps between consecutive requests, on tokio's clock (virtual
    /// time under a paused clock): the waits the client actually took.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let s = examples::http::ScriptedServer::start(vec![]).await.unwrap();
    /// assert!(s.gaps().is_empty());
    /// # }
    /// ```
    pub fn gaps(&self) -> Vec<Duration> {
        self.exchanges()
            .windows(2)
            .map(|w| w[1].arrived - w[0].arrived)
            .collect()
    }

    /// Every request answered so far, in order, with what was sent.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let s = examples::http::ScriptedServer::start(vec![]).await.unwrap();
    /// assert!(s.exchanges().is_empty());
    /// # }
    /// ```
    pub fn exchanges(&self) -> Vec<Exchange> {
        self.state
            .log
            .lock()
            .map(|log| log.clone())
            .unwrap_or_default()
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}
