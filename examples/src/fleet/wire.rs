//! The fleet's HTTP/1.1 client: clients share a few keep-alive connections
//! ("lanes"), each carrying its clients' requests pipelined, written by hand.
//!
//! Why shared and pipelined: on the 2-vCPU VM this was built on, one
//! request/response over its own loopback connection costs about 40 µs of
//! CPU (five system calls, strace: a send, a writev, two receives, an
//! epoll wait), so the machine delivers some 25,000 calls a second, while
//! the herd's busiest 10 ms tick asks for 1,500 calls. A lane writes every
//! request queued while it was writing in one system call, and hyper's
//! server answers a pipelined batch with one write, which brings the cost
//! per call down to a few microseconds. The clients still make one call at
//! a time each, and each call is still an HTTP request the server counts
//! on arrival.
//!
//! Why at most [`MAX_IN_FLIGHT`] requests unanswered on a lane: hyper's
//! server, set to flush a pipelined batch's answers in one write, holds
//! them until it has read every request buffered behind them. Unbounded,
//! a lane kept the server's buffer full for as long as a wave lasted, so
//! the calls of a wave's tail got their answers together at its end and
//! their retries fell due together: with no jitter at 10 ms, the first
//! retry wave ended in a tick of 5,315 calls after ticks of 141 and 258,
//! larger than any tick of the first wave (3,584). Real clients bound what
//! they have in flight on a connection too (an HTTP/2 server's stream
//! limit, which RFC 9113 recommends be at least 100); at 32 a lane, 16
//! lanes carry 512 calls at once.
//!
//! Why by hand rather than hyper's client: hyper's client has no pipelining,
//! and its connection is a second task the request is handed to, which
//! costs each call a task wake-up more.

use crate::http::HttpError;
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::{Semaphore, mpsc, oneshot};

/// The request header carrying the attempt number (1 is the first call).
pub(crate) const ATTEMPT_HEADER: &str = "x-attempt";
/// The request header carrying when the client's timer was due, in µs
/// after the fleet's start (0 for a first call).
pub(crate) const DUE_HEADER: &str = "x-due-us";

/// The most bytes of one response head this client accepts: the server
/// sends an empty body and a few headers.
const MAX_HEAD: usize = 4096;
/// The most requests one write carries.
const MAX_BATCH: usize = 1024;
/// The most requests a lane has written and not yet had answered.
pub(crate) const MAX_IN_FLIGHT: usize = 32;

/// A request waiting to be written, and where its status goes.
struct Pending {
    attempt: u32,
    due_us: u64,
    reply: oneshot::Sender<Result<u16, String>>,
}

/// One keep-alive connection shared by many clients, requests pipelined.
/// Cloning it gives another handle to the same connection.
#[derive(Clone)]
pub(crate) struct Lane {
    requests: mpsc::UnboundedSender<Pending>,
}

/// Replies owed, in the order their requests were written.
type Owed = Arc<Mutex<VecDeque<oneshot::Sender<Result<u16, String>>>>>;

/// Room for requests in flight on one lane: the writer takes room before
/// writing, the reader gives it back as answers arrive.
#[derive(Clone)]
struct Window(Arc<Semaphore>);

impl Window {
    fn new() -> Self {
        Window(Arc::new(Semaphore::new(MAX_IN_FLIGHT)))
    }

    /// Waits for room for one request, then takes what else there is, up
    /// to `most` in all.
    async fn take(&self, most: usize) -> usize {
        let Ok(first) = self.0.acquire().await else {
            return 0;
        };
        first.forget();
        let mut taken = 1;
        while taken < most
            && let Ok(more) = self.0.try_acquire()
        {
            more.forget();
            taken += 1;
        }
        taken
    }

    fn give(&self, room: usize) {
        self.0.add_permits(room);
    }
}

impl Lane {
    /// Connects to `addr` and starts the lane's writer and reader tasks
    /// (served and counted in `server`'s tests). With a `pace` (the fleet's
    /// `--throttle`) the writer writes at most one request per `pace`:
    /// requests queue in order, each write sends those whose turn has
    /// come, and an idle lane gains no burst.
    pub(crate) async fn open(addr: SocketAddr, pace: Option<Duration>) -> std::io::Result<Self> {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        let (read, write) = stream.into_split();
        let (tx, rx) = mpsc::unbounded_channel();
        let owed: Owed = Arc::default();
        let window = Window::new();
        tokio::spawn(write_requests(
            write,
            rx,
            owed.clone(),
            addr,
            pace,
            window.clone(),
        ));
        tokio::spawn(read_responses(read, owed, window));
        Ok(Lane { requests: tx })
    }

    /// Sends one call and classifies the answer: 200 is `Ok`, 503 transient,
    /// 429 throttled; a broken connection is a transport error.
    pub(crate) async fn call(&self, attempt: u32, due_us: u64) -> Result<(), HttpError> {
        let (reply, status) = oneshot::channel();
        let lost = || HttpError::Transport("the connection closed".into());
        self.requests
            .send(Pending {
                attempt,
                due_us,
                reply,
            })
            .map_err(|_| lost())?;
        match status.await.map_err(|_| lost())? {
            Ok(200) => Ok(()),
            Ok(status) => Err(HttpError::from_status(status, None)),
            Err(e) => Err(HttpError::Transport(e)),
        }
    }
}

/// Writes every queued request in one write, oldest first, as many as the
/// lane has room in flight for; with a `pace`, only those whose turn has
/// come, one turn per `pace`.
async fn write_requests(
    mut stream: OwnedWriteHalf,
    mut rx: mpsc::UnboundedReceiver<Pending>,
    owed: Owed,
    addr: SocketAddr,
    pace: Option<Duration>,
    window: Window,
) {
    let mut buf = Vec::with_capacity(16 * 1024);
    let mut batch = Vec::with_capacity(MAX_BATCH);
    // When the next request may be written, paced.
    let mut turn = Instant::now();
    loop {
        let room = window.take(MAX_BATCH).await;
        let got = match pace {
            None => rx.recv_many(&mut batch, room).await,
            Some(pace) => {
                if rx.recv_many(&mut batch, 1).await == 0 {
                    return;
                }
                // No credit for idle time: a request that finds the lane
                // idle goes now, not in a burst of turns missed.
                turn = turn.max(Instant::now());
                tokio::time::sleep_until(turn.into()).await;
                // The turns that have come by now (the timer wakes up to a
                // millisecond late), this request's included.
                let late = Instant::now().saturating_duration_since(turn);
                let turns = 1 + late.as_nanos() / pace.as_nanos().max(1);
                let turns = usize::try_from(turns).unwrap_or(room).min(room);
                while batch.len() < turns {
                    match rx.try_recv() {
                        Ok(p) => batch.push(p),
                        Err(_) => break,
                    }
                }
                turn += pace.saturating_mul(u32::try_from(batch.len()).unwrap_or(u32::MAX));
                batch.len()
            }
        };
        window.give(room - got);
        if got == 0 {
            return;
        }
        buf.clear();
        if !queue_batch(&mut batch, &mut buf, &owed, addr) {
            return;
        }
        if let Err(e) = stream.write_all(&buf).await {
            fail_all(&owed, &format!("cannot send: {e}"));
            return;
        }
    }
}

/// Writes the batch's requests into `buf` and queues their replies, in
/// order; false when the queue is gone.
fn queue_batch(batch: &mut Vec<Pending>, buf: &mut Vec<u8>, owed: &Owed, addr: SocketAddr) -> bool {
    use std::io::Write;
    let Ok(mut queue) = owed.lock() else {
        return false;
    };
    for p in batch.drain(..) {
        let _ = write!(
            buf,
            "GET /call HTTP/1.1\r\nhost: {addr}\r\n{ATTEMPT_HEADER}: {}\r\n{DUE_HEADER}: {}\r\n\r\n",
            p.attempt, p.due_us
        );
        queue.push_back(p.reply);
    }
    true
}

/// Reads responses and hands each status to the oldest request owed one.
async fn read_responses(mut stream: OwnedReadHalf, owed: Owed, window: Window) {
    let mut buf: Vec<u8> = Vec::with_capacity(16 * 1024);
    let mut chunk = vec![0u8; 16 * 1024];
    loop {
        let n = match stream.read(&mut chunk).await {
            Ok(0) => return fail_all(&owed, "the server closed the connection"),
            Ok(n) => n,
            Err(e) => return fail_all(&owed, &format!("cannot receive: {e}")),
        };
        buf.extend_from_slice(&chunk[..n]);
        let mut used = 0;
        while let Some(head) = find_head(&buf[used..]) {
            let (status, body) = match parse_head(&buf[used..used + head]) {
                Ok(parsed) => parsed,
                Err(e) => return fail_all(&owed, &e),
            };
            if buf.len() - used - head < body {
                break;
            }
            used += head + body;
            let reply = owed.lock().ok().and_then(|mut q| q.pop_front());
            match reply {
                Some(reply) => {
                    window.give(1);
                    let _ = reply.send(Ok(status));
                }
                None => return fail_all(&owed, "the server sent a response nobody asked for"),
            }
        }
        buf.drain(..used);
        if buf.len() > MAX_HEAD {
            return fail_all(&owed, "the server sent a response head over 4 KiB");
        }
    }
}

/// Fails every request still owed a reply.
fn fail_all(owed: &Owed, why: &str) {
    if let Ok(mut queue) = owed.lock() {
        for reply in queue.drain(..) {
            let _ = reply.send(Err(why.to_owned()));
        }
    }
}

/// The length of the head (status line and headers, blank line included), once complete.
fn find_head(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4)
}

/// The status and the body's length from a response head.
fn parse_head(head: &[u8]) -> Result<(u16, usize), String> {
    let invalid = |what: &str| format!("the server sent {what}");
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
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        if name.eq_ignore_ascii_case("content-length") {
            body = value
                .trim()
                .parse()
                .map_err(|_| invalid("an unreadable content-length"))?;
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            return Err(invalid("a chunked body"));
        }
    }
    if body > MAX_HEAD {
        return Err(invalid("a body over 4 KiB"));
    }
    Ok((status, body))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::net::TcpListener;

    #[tokio::test]
    async fn a_lane_has_at_most_max_in_flight_requests_unanswered() {
        const CALLS: usize = 100;
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let lane = Lane::open(listener.local_addr().unwrap(), None)
            .await
            .unwrap();
        let (mut server, _) = listener.accept().await.unwrap();
        let calls: Vec<_> = (0..CALLS)
            .map(|_| {
                let lane = lane.clone();
                tokio::spawn(async move { lane.call(1, 0).await })
            })
            .collect();
        // The server answers one request each time the lane's window is
        // full, and never sees more requests than answers plus the window.
        let (mut read, mut answered, mut chunk) = (0, 0, [0u8; 4096]);
        while answered < CALLS {
            while read < (answered + MAX_IN_FLIGHT).min(CALLS) {
                let n = server.read(&mut chunk).await.unwrap();
                read += chunk[..n].windows(4).filter(|w| w == b"GET ").count();
                assert!(
                    read <= answered + MAX_IN_FLIGHT,
                    "{read} requests written with {answered} answered"
                );
            }
            server
                .write_all(b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\n\r\n")
                .await
                .unwrap();
            answered += 1;
        }
        for call in calls {
            assert!(matches!(
                call.await.unwrap(),
                Err(HttpError::Server { status: 503, .. })
            ));
        }
    }

    #[test]
    fn reads_the_status_and_body_length() {
        let head = b"HTTP/1.1 429 Too Many Requests\r\nContent-Length: 12\r\ndate: x\r\n\r\n";
        assert_eq!(find_head(head), Some(head.len()));
        assert_eq!(parse_head(head).unwrap(), (429, 12));
        assert!(parse_head(b"HTTP/1.0 200 OK\r\n\r\n").is_err());
        assert!(parse_head(b"HTTP/1.1 200 OK\r\ncontent-length: x\r\n\r\n").is_err());
        assert!(parse_head(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n").is_err());
        assert!(parse_head(b"HTTP/1.1 200 OK\r\ncontent-length: 999999\r\n\r\n").is_err());
        assert_eq!(find_head(b"HTTP/1.1 200 OK\r\n"), None);
    }
}
