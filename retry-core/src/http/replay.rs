//! A request body that can be sent again, kept as it is sent up to a limit
//! (Linkerd's `ReplayBody` idea). Every copy shares one buffer and the one
//! underlying body: a retry replays what was kept, then reads on.

use bytes::{Buf, Bytes};
use http::HeaderMap;
use http_body::{Body, Frame, SizeHint};
use std::fmt;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, ready};

/// The error type HTTP stacks share (as tower's `BoxError`).
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A body that can be sent more than once while it fits the limit.
/// Clone it for each attempt: a clone starts from the beginning.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use http_body_util::{BodyExt, Full};
/// use retrykit_core::http::ReplayBody;
/// let first = ReplayBody::new(Full::new(bytes::Bytes::from("order 17")), 1024);
/// let again = first.clone();
/// assert_eq!(first.collect().await.unwrap().to_bytes(), "order 17");
/// assert!(again.is_replayable());
/// assert_eq!(again.collect().await.unwrap().to_bytes(), "order 17");
///
/// let big = ReplayBody::new(Full::new(bytes::Bytes::from(vec![0u8; 100])), 10);
/// assert!(!big.is_replayable()); // its exact size is known to exceed the limit
/// assert!(ReplayBody::new(http_body_util::Empty::<bytes::Bytes>::new(), 0).is_replayable()); // an empty body fits any limit
/// # }
/// ```
pub struct ReplayBody<B> {
    shared: Arc<Mutex<Shared<B>>>,
    /// Data frames this copy has produced, counted in the body's order.
    read: usize,
    /// Whether this copy has produced the trailers.
    trailers_sent: bool,
    /// The whole body's size, for a copy that has not started.
    whole: SizeHint,
}

struct Shared<B> {
    /// The original body, until it ends or fails.
    inner: Option<Pin<Box<B>>>,
    /// The data frames kept, while they fit `limit`.
    kept: Vec<Bytes>,
    kept_bytes: u64,
    /// Data frames read from `inner` so far.
    pulled: usize,
    limit: u64,
    /// More than `limit` bytes were read: nothing is kept any more.
    overflowed: bool,
    /// The original body failed part-way: a replay would be truncated.
    failed: bool,
    trailers: Option<HeaderMap>,
}

impl<B> Shared<B> {
    fn keep(&mut self, chunk: &Bytes) {
        self.pulled += 1;
        if self.overflowed {
            return;
        }
        let len = chunk.len() as u64;
        if self.kept_bytes.saturating_add(len) <= self.limit {
            self.kept.push(chunk.clone());
            self.kept_bytes += len;
        } else {
            self.overflowed = true;
            self.kept = Vec::new();
        }
    }
}

impl<B: Body> ReplayBody<B> {
    /// Wraps `body`, keeping at most `limit` bytes of it for replays. A body
    /// whose size is known to exceed the limit is never buffered.
    pub fn new(body: B, limit: u64) -> Self {
        let whole = body.size_hint();
        let shared = Shared {
            inner: Some(Box::pin(body)),
            kept: Vec::new(),
            kept_bytes: 0,
            pulled: 0,
            limit,
            overflowed: whole.lower() > limit,
            failed: false,
            trailers: None,
        };
        ReplayBody {
            shared: Arc::new(Mutex::new(shared)),
            read: 0,
            trailers_sent: false,
            whole,
        }
    }
}

impl<B> ReplayBody<B> {
    fn lock(&self) -> MutexGuard<'_, Shared<B>> {
        self.shared.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether a fresh copy could still send the whole body: nothing read so
    /// far went past the limit and the original did not fail.
    pub fn is_replayable(&self) -> bool {
        let shared = self.lock();
        !shared.overflowed && !shared.failed
    }
}

impl<B> Clone for ReplayBody<B> {
    /// A copy that starts from the beginning.
    fn clone(&self) -> Self {
        ReplayBody {
            shared: Arc::clone(&self.shared),
            read: 0,
            trailers_sent: false,
            whole: self.whole,
        }
    }
}

impl<B> fmt::Debug for ReplayBody<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shared = self.lock();
        f.debug_struct("ReplayBody")
            .field("read", &self.read)
            .field("kept_bytes", &shared.kept_bytes)
            .field("limit", &shared.limit)
            .field("replayable", &(!shared.overflowed && !shared.failed))
            .finish()
    }
}

/// A copy whose data was not kept was polled (the loop never sends one).
#[derive(Debug)]
struct NotReplayable;

impl fmt::Display for NotReplayable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "request body not replayable: it was larger than the policy's max_replay_body, \
             or failed while it was first sent",
        )
    }
}

impl std::error::Error for NotReplayable {}

impl<B> Body for ReplayBody<B>
where
    B: Body,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = self.get_mut();
        let shared = Arc::clone(&this.shared);
        let mut shared = shared.lock().unwrap_or_else(PoisonError::into_inner);
        if this.read < shared.pulled {
            // Behind the original: replay what was kept.
            if shared.overflowed {
                return Poll::Ready(Some(Err(NotReplayable.into())));
            }
            let chunk = shared.kept[this.read].clone();
            this.read += 1;
            return Poll::Ready(Some(Ok(Frame::data(chunk))));
        }
        while let Some(inner) = shared.inner.as_mut() {
            match ready!(inner.as_mut().poll_frame(cx)) {
                None => shared.inner = None,
                Some(Err(e)) => {
                    shared.inner = None;
                    shared.failed = true;
                    return Poll::Ready(Some(Err(e.into())));
                }
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(mut data) => {
                        let chunk = data.copy_to_bytes(data.remaining());
                        shared.keep(&chunk);
                        this.read += 1;
                        return Poll::Ready(Some(Ok(Frame::data(chunk))));
                    }
                    Err(frame) => {
                        if let Ok(trailers) = frame.into_trailers() {
                            shared.trailers = Some(trailers.clone());
                            this.trailers_sent = true;
                            return Poll::Ready(Some(Ok(Frame::trailers(trailers))));
                        }
                    }
                },
            }
        }
        if shared.failed {
            return Poll::Ready(Some(Err(NotReplayable.into())));
        }
        match &shared.trailers {
            Some(trailers) if !this.trailers_sent => {
                this.trailers_sent = true;
                Poll::Ready(Some(Ok(Frame::trailers(trailers.clone()))))
            }
            _ => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        let shared = self.lock();
        if self.read < shared.pulled || shared.failed {
            return false;
        }
        match &shared.inner {
            Some(inner) => inner.is_end_stream(),
            None => shared.trailers.is_none() || self.trailers_sent,
        }
    }

    fn size_hint(&self) -> SizeHint {
        if self.read == 0 && !self.trailers_sent {
            self.whole
        } else {
            SizeHint::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// A streamed body of chunks (size unknown), optionally failing at the end.
    struct Chunks {
        frames: VecDeque<Result<Frame<Bytes>, &'static str>>,
    }

    impl Chunks {
        fn new(parts: &[&'static str]) -> Self {
            let frames = parts
                .iter()
                .map(|p| Ok(Frame::data(Bytes::from(*p))))
                .collect();
            Chunks { frames }
        }
        fn then(mut self, frame: Result<Frame<Bytes>, &'static str>) -> Self {
            self.frames.push_back(frame);
            self
        }
    }

    impl Body for Chunks {
        type Data = Bytes;
        type Error = &'static str;
        fn poll_frame(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, &'static str>>> {
            Poll::Ready(self.frames.pop_front())
        }
    }

    fn next<B: Body + Unpin>(body: &mut B) -> Option<Result<Frame<B::Data>, B::Error>> {
        let mut cx = Context::from_waker(std::task::Waker::noop());
        match Pin::new(body).poll_frame(&mut cx) {
            Poll::Ready(frame) => frame,
            Poll::Pending => panic!("a test body is always ready"),
        }
    }

    fn data(body: &mut ReplayBody<Chunks>) -> Vec<String> {
        let mut out = Vec::new();
        while let Some(frame) = next(body) {
            if let Ok(bytes) = frame.unwrap().into_data() {
                out.push(String::from_utf8(bytes.to_vec()).unwrap());
            }
        }
        out
    }

    #[test]
    fn a_retry_replays_what_was_sent_then_reads_the_rest() {
        let mut first = ReplayBody::new(Chunks::new(&["ab", "cd", "ef"]), 6);
        let mut again = first.clone();
        // The first attempt sent two chunks before its server answered.
        assert_eq!(
            next(&mut first).unwrap().unwrap().into_data().unwrap(),
            "ab"
        );
        assert_eq!(
            next(&mut first).unwrap().unwrap().into_data().unwrap(),
            "cd"
        );
        assert!(again.is_replayable());
        assert_eq!(data(&mut again), ["ab", "cd", "ef"]);
        assert!(again.is_end_stream());
        // And a third copy gets all of it from the buffer.
        assert_eq!(data(&mut first.clone()), ["ab", "cd", "ef"]);
    }

    #[test]
    fn a_body_past_the_limit_is_sent_once_and_is_not_replayable() {
        let mut first = ReplayBody::new(Chunks::new(&["abc", "def", "g"]), 6);
        assert_eq!(data(&mut first), ["abc", "def", "g"]);
        assert!(!first.is_replayable());
        let err = next(&mut first.clone()).unwrap().unwrap_err();
        assert!(err.to_string().contains("not replayable"), "{err}");
    }

    #[test]
    fn trailers_are_replayed_and_a_failed_body_is_not() {
        let mut trailers = HeaderMap::new();
        trailers.insert("checksum", "7".parse().unwrap());
        let body = Chunks::new(&["x"]).then(Ok(Frame::trailers(trailers)));
        let mut first = ReplayBody::new(body, 64);
        let _ = data(&mut first);
        let mut again = first.clone();
        assert!(next(&mut again).unwrap().unwrap().is_data());
        let last = next(&mut again).unwrap().unwrap().into_trailers().unwrap();
        assert_eq!(last["checksum"], "7");
        assert!(next(&mut again).is_none());

        let mut broken = ReplayBody::new(Chunks::new(&["x"]).then(Err("reset")), 64);
        let _ = next(&mut broken);
        assert_eq!(next(&mut broken).unwrap().unwrap_err().to_string(), "reset");
        assert!(!broken.is_replayable());
    }
}
