//! The fleet's HTTP/1.1 client: one keep-alive connection per client, one
//! request at a time, written by hand.
//!
//! Why not hyper's client: its connection runs as a second task that the
//! request is handed to over a channel, so each call costs two task wake-ups
//! instead of one; with 10,000 clients woken in the same millisecond that
//! doubles the work that smears a burst over later ticks, which is exactly
//! what the fleet is trying to measure. The server side is hyper.

use super::super::http::HttpError;
use std::net::SocketAddr;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The request header carrying the attempt number (1 is the first call).
pub const ATTEMPT_HEADER: &str = "x-attempt";
/// The request header carrying when the client's timer was due, in µs
/// after the fleet's start (0 for a first call).
pub const DUE_HEADER: &str = "x-due-us";

/// The most bytes of a response this client reads: the server sends an
/// empty body, so anything longer is not the fleet's server.
const MAX_RESPONSE: usize = 4096;

/// One client's connection to the fleet's server.
pub struct Connection {
    addr: SocketAddr,
    stream: Option<TcpStream>,
    buf: Vec<u8>,
}

impl Connection {
    /// Connects to `addr`.
    ///
    /// ```no_run
    /// # async fn f() -> std::io::Result<()> {
    /// let c = examples::fleet::Connection::open("127.0.0.1:8080".parse().unwrap()).await?;
    /// # Ok(()) }
    /// ```
    pub async fn open(addr: SocketAddr) -> std::io::Result<Self> {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        Ok(Connection {
            addr,
            stream: Some(stream),
            buf: Vec::with_capacity(256),
        })
    }

    /// Sends one call and classifies the answer: 200 is `Ok`, 503 transient,
    /// 429 throttled. A broken connection is a transport error, and the next
    /// call connects again.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use examples::fleet::{Connection, FleetServer, Service};
    /// use std::time::{Duration, Instant};
    /// let service = Service { tick: Duration::from_secs(1), outage: Duration::ZERO, capacity: 1, ticks: 10 };
    /// let server = FleetServer::bind(service, Duration::from_millis(1)).await.unwrap();
    /// server.start(Instant::now());
    /// let mut c = Connection::open(server.addr()).await.unwrap();
    /// assert!(c.call(1, 0).await.is_ok());
    /// assert_eq!(c.call(2, 0).await.unwrap_err().to_string(), "HTTP 429");
    /// assert_eq!(server.counts().retries[0], 1);
    /// # }
    /// ```
    pub async fn call(&mut self, attempt: u32, due_us: u64) -> Result<(), HttpError> {
        let status = self
            .exchange(attempt, due_us)
            .await
            .inspect_err(|_| self.stream = None)
            .map_err(|e| HttpError::Transport(e.to_string()))?;
        if status == 200 {
            Ok(())
        } else {
            Err(HttpError::from_status(status, None))
        }
    }

    async fn exchange(&mut self, attempt: u32, due_us: u64) -> std::io::Result<u16> {
        let stream = match &mut self.stream {
            Some(s) => s,
            None => {
                let s = TcpStream::connect(self.addr).await?;
                s.set_nodelay(true)?;
                self.stream.insert(s)
            }
        };
        let request = format!(
            "GET /call HTTP/1.1\r\nhost: {}\r\n{ATTEMPT_HEADER}: {attempt}\r\n{DUE_HEADER}: {due_us}\r\n\r\n",
            self.addr
        );
        stream.write_all(request.as_bytes()).await?;
        self.buf.clear();
        loop {
            if let Some(head) = find_head(&self.buf) {
                let (status, body) = parse_head(&self.buf[..head])?;
                let have = self.buf.len() - head;
                if have > body {
                    return Err(invalid("more bytes than one response"));
                }
                if have == body {
                    return Ok(status);
                }
            }
            if self.buf.len() >= MAX_RESPONSE {
                return Err(invalid("a response longer than 4 KiB"));
            }
            let mut chunk = [0u8; 512];
            let n = stream.read(&mut chunk).await?;
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }
}

fn invalid(what: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, format!("the server sent {what}"))
}

/// The length of the head (status line and headers, blank line included), once complete.
fn find_head(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4)
}

/// The status and the body's length from a response head.
fn parse_head(head: &[u8]) -> std::io::Result<(u16, usize)> {
    let text = std::str::from_utf8(head).map_err(|_| invalid("a head that is not UTF-8"))?;
    let mut lines = text.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.strip_prefix("HTTP/1.1 "))
        .and_then(|l| l.get(..3))
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| invalid("no HTTP/1.1 status line"))?;
    let mut body = 0;
    for line in lines {
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            body = value
                .trim()
                .parse()
                .map_err(|_| invalid("an unreadable content-length"))?;
        } else if line.to_ascii_lowercase().starts_with("transfer-encoding") {
            return Err(invalid("a chunked body"));
        }
    }
    Ok((status, body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_status_and_body_length() {
        let head = b"HTTP/1.1 429 Too Many Requests\r\nContent-Length: 12\r\ndate: x\r\n\r\n";
        assert_eq!(find_head(head), Some(head.len()));
        assert_eq!(parse_head(head).unwrap(), (429, 12));
        assert!(parse_head(b"HTTP/1.0 200 OK\r\n\r\n").is_err());
        assert!(parse_head(b"HTTP/1.1 200 OK\r\ncontent-length: x\r\n\r\n").is_err());
        assert!(parse_head(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n").is_err());
        assert_eq!(find_head(b"HTTP/1.1 200 OK\r\n"), None);
    }
}
