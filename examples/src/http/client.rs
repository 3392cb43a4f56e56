//! One HTTP GET over a fresh connection, with its failure classified.

use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper::client::conn::http1;
use hyper::{Request, StatusCode};
use hyper_util::rt::TokioIo;
use retrykit_core::http::parse_retry_after;
use retrykit_core::{Classify, retry};
use std::fmt;
use std::net::SocketAddr;
use std::time::{Duration, SystemTime};
use tokio::net::TcpStream;

/// Why a request failed, classified for the retry engine: 5xx and
/// transport errors are transient, 429 is throttled, other 4xx permanent;
/// a parsed `Retry-After` is the server's hint.
///
/// ```
/// use examples::http::HttpError;
/// use retrykit_core::{Class, Classify};
/// use std::time::Duration;
/// let e = HttpError::from_status(429, Some(Duration::from_secs(2)));
/// assert_eq!((e.class(), e.retry_after()), (Class::THROTTLED, Some(Duration::from_secs(2))));
/// assert_eq!(HttpError::from_status(503, None).class(), Class::TRANSIENT);
/// assert_eq!(HttpError::from_status(404, None).class(), Class::Permanent);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Classify)]
pub enum HttpError {
    /// 5xx: the server is failing; try again.
    #[classify(transient, retry_after = retry_after)]
    Server {
        /// The status code.
        status: u16,
        /// The parsed `Retry-After`, if present and valid.
        retry_after: Option<Duration>,
    },
    /// 429: the server asks the client to slow down.
    #[classify(class = "throttled", retry_after = retry_after)]
    Throttled {
        /// The parsed `Retry-After`, if present and valid.
        retry_after: Option<Duration>,
    },
    /// Any other 4xx (and unexpected statuses): retrying will not help.
    #[classify(permanent)]
    Client {
        /// The status code.
        status: u16,
    },
    /// The connection failed.
    #[classify(transient)]
    Transport(String),
    /// The attempt was cut short by the policy's `attempt_timeout` or, in
    /// flight, by its `deadline`.
    #[classify(timeout)]
    TimedOut,
}

impl HttpError {
    /// Classifies a non-success status.
    ///
    /// ```
    /// use examples::http::HttpError;
    /// assert_eq!(HttpError::from_status(418, None), HttpError::Client { status: 418 });
    /// ```
    pub fn from_status(status: u16, retry_after: Option<Duration>) -> Self {
        match status {
            429 => HttpError::Throttled { retry_after },
            500..=599 => HttpError::Server {
                status,
                retry_after,
            },
            _ => HttpError::Client { status },
        }
    }
}

impl fmt::Display for HttpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HttpError::Server { status, .. } => write!(f, "HTTP {status}")?,
            HttpError::Throttled { .. } => write!(f, "HTTP 429")?,
            HttpError::Client { status } => write!(f, "HTTP {status}")?,
            HttpError::Transport(e) => return write!(f, "transport: {e}"),
            HttpError::TimedOut => return write!(f, "timed out"),
        }
        match self.retry_after() {
            Some(d) => write!(f, " (Retry-After {d:?})"),
            None => Ok(()),
        }
    }
}

impl std::error::Error for HttpError {}

/// One GET of `path` on `addr` over a fresh connection, returning the body
/// on success. [`fetch`] is the same call with the `http` policy around it.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use examples::http::{fetch_once, ScriptedServer};
/// let server = ScriptedServer::start(vec![]).await.unwrap();
/// assert!(fetch_once(server.addr(), "/").await.unwrap().contains("hello"));
/// # }
/// ```
pub async fn fetch_once(addr: SocketAddr, path: &str) -> Result<String, HttpError> {
    let transport = |e: &dyn fmt::Display| HttpError::Transport(e.to_string());
    let stream = TcpStream::connect(addr).await.map_err(|e| transport(&e))?;
    let (mut sender, conn) = http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| transport(&e))?;
    let driver = tokio::spawn(conn);
    let request = Request::get(path)
        .header("host", addr.to_string())
        .body(Empty::<Bytes>::new())
        .map_err(|e| transport(&e))?;
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| transport(&e))?;
    let status = response.status();
    let retry_after = response
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| parse_retry_after(v, SystemTime::now()));
    let body = response
        .into_body()
        .collect()
        .await
        .map_err(|e| transport(&e))?
        .to_bytes();
    driver.abort();
    if status == StatusCode::OK {
        Ok(String::from_utf8_lossy(&body).into_owned())
    } else {
        Err(HttpError::from_status(status.as_u16(), retry_after))
    }
}

/// GET `path` on `addr` with the `http` policy: retried on 5xx, 429 and
/// transport errors, waiting as long as the server's `Retry-After` says
/// (up to the policy's `max_retry_after`), giving up at once when that does
/// not fit the deadline.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use examples::http::{fetch, Reply, ScriptedServer};
/// examples::install_policies("test").unwrap();
/// let server = ScriptedServer::start(vec![Reply::status(503)]).await.unwrap();
/// assert!(fetch(server.addr(), "/").await.is_ok());
/// assert_eq!(server.requests(), 2);
/// # }
/// ```
#[retry(policy = "http")]
pub async fn fetch(addr: SocketAddr, path: &str) -> Result<String, HttpError> {
    fetch_once(addr, path).await
}
