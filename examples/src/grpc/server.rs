//! A real tonic server on 127.0.0.1 that answers from a script: each call
//! takes the next [`Step`] (the last one repeats), and the server records
//! what it saw of each call.

use super::{Answer, Ask};
use bytes::{BufMut, Bytes, BytesMut};
use http_body::Frame;
use prost::Message;
use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;
use tonic::body::Body;
use tonic::server::NamedService;
use tonic::transport::server::TcpIncoming;

/// The method the demo and the tests call.
pub const METHOD: &str = "/retrykit.demo.Flaky/Call";

/// What the server does with one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Answers OK at once.
    Ok,
    /// Answers OK after this long.
    Slow(Duration),
    /// Fails with this code as a Trailers-Only response (the form a tonic
    /// handler's `Err(Status)` takes), with `grpc-retry-pushback-ms` if given.
    Fail {
        /// The status code.
        code: tonic::Code,
        /// The pushback header's value, as sent.
        pushback: Option<String>,
    },
    /// Sends a message, then `grpc-status: UNAVAILABLE` in the trailers:
    /// the response had begun (a committed call).
    UnavailableAfterBody,
    /// Sends a message, then trailers with this `grpc-status` value as it
    /// is (malformed, say), or none at all.
    RawTrailers(Option<String>),
    /// Sends a message at once, then `grpc-status: OK` in the trailers
    /// after this long: a call committed long before it ends.
    SlowTrailers(Duration),
}

/// What the server saw of one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    /// The request's `grpc-previous-rpc-attempts`, if any.
    pub previous_attempts: Option<String>,
    /// The request's `grpc-timeout`, if any.
    pub timeout: Option<String>,
    /// The request message's `name`.
    pub name: String,
    /// Whether the call ran to its end (false: the client reset it first).
    pub finished: bool,
}

#[derive(Debug, Default)]
struct State {
    script: VecDeque<Step>,
    seen: Vec<Seen>,
}

/// The scripted server: clone it to read what it saw.
#[derive(Debug, Clone, Default)]
pub struct Flaky {
    state: Arc<Mutex<State>>,
}

impl NamedService for Flaky {
    const NAME: &'static str = "retrykit.demo.Flaky";
}

impl Flaky {
    /// A server that takes `script`'s steps in order, then repeats the last
    /// (`Ok` when empty).
    pub fn new(script: impl IntoIterator<Item = Step>) -> Self {
        let state = State {
            script: script.into_iter().collect(),
            seen: Vec::new(),
        };
        Flaky {
            state: Arc::new(Mutex::new(state)),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The calls seen so far, in order.
    pub fn seen(&self) -> Vec<Seen> {
        self.lock().seen.clone()
    }

    /// Replaces the script (the calls seen are kept).
    pub fn script(&self, script: impl IntoIterator<Item = Step>) {
        self.lock().script = script.into_iter().collect();
    }

    fn next_step(&self) -> Step {
        let mut state = self.lock();
        match state.script.len() {
            0 => Step::Ok,
            1 => state.script[0].clone(),
            _ => state.script.pop_front().unwrap_or(Step::Ok),
        }
    }

    /// Serves on a free port of 127.0.0.1 until the runtime ends; returns
    /// the address.
    pub async fn serve(self) -> std::io::Result<SocketAddr> {
        let incoming = TcpIncoming::bind(SocketAddr::from(([127, 0, 0, 1], 0)))?;
        let addr = incoming.local_addr()?;
        tokio::spawn(async move {
            let served = tonic::transport::Server::builder()
                .serve_with_incoming(self, incoming)
                .await;
            if let Err(e) = served {
                eprintln!("grpc demo server: {e}");
            }
        });
        Ok(addr)
    }
}

/// Marks the call finished when its handler ran to the end; a handler
/// dropped first (the client reset the stream) leaves it unfinished.
struct Finish {
    flaky: Flaky,
    index: usize,
}

impl Finish {
    fn done(self) {
        if let Some(seen) = self.flaky.lock().seen.get_mut(self.index) {
            seen.finished = true;
        }
    }
}

impl tower::Service<http::Request<Body>> for Flaky {
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<http::Response<Body>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        let flaky = self.clone();
        Box::pin(async move {
            if request.uri().path() != METHOD {
                let unimplemented = tonic::Status::unimplemented(request.uri().path().to_owned());
                return Ok(unimplemented.into_http());
            }
            let previous_attempts = request
                .headers()
                .get(retrykit_core::grpc::GRPC_PREVIOUS_RPC_ATTEMPTS)
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
            let timeout = request
                .headers()
                .get(retrykit_core::grpc::GRPC_TIMEOUT)
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
            let step = flaky.next_step();
            let handler = Handler {
                flaky: flaky.clone(),
                previous_attempts,
                timeout,
                step: step.clone(),
            };
            let mut grpc =
                tonic::server::Grpc::new(tonic_prost::ProstCodec::<Answer, Ask>::default());
            let response = grpc.unary(handler, request).await;
            Ok(match step {
                Step::UnavailableAfterBody => raw(Some("14".into()), None),
                Step::RawTrailers(status) => raw(status, None),
                Step::SlowTrailers(wait) => raw(Some("0".into()), Some(wait)),
                _ => response,
            })
        })
    }
}

/// Runs a step for one decoded request.
#[derive(Clone)]
struct Handler {
    flaky: Flaky,
    previous_attempts: Option<String>,
    timeout: Option<String>,
    step: Step,
}

impl tower::Service<tonic::Request<Ask>> for Handler {
    type Response = tonic::Response<Answer>;
    type Error = tonic::Status;
    type Future =
        Pin<Box<dyn Future<Output = Result<tonic::Response<Answer>, tonic::Status>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), tonic::Status>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: tonic::Request<Ask>) -> Self::Future {
        let Handler {
            flaky,
            previous_attempts,
            timeout,
            step,
        } = self.clone();
        Box::pin(async move {
            let name = request.into_inner().name;
            let index = {
                let mut state = flaky.lock();
                state.seen.push(Seen {
                    previous_attempts,
                    timeout,
                    name: name.clone(),
                    finished: false,
                });
                state.seen.len() - 1
            };
            let finish = Finish { flaky, index };
            let answer = |text: String| tonic::Response::new(Answer { text });
            let result = match step {
                Step::Slow(wait) => {
                    tokio::time::sleep(wait).await;
                    Ok(answer(format!("hello {name}, slowly")))
                }
                Step::Fail { code, pushback } => {
                    let mut status = tonic::Status::new(code, "scripted failure");
                    if let Some(value) = pushback.and_then(|v| v.parse().ok()) {
                        status
                            .metadata_mut()
                            .insert("grpc-retry-pushback-ms", value);
                    }
                    Err(status)
                }
                _ => Ok(answer(format!("hello {name}"))),
            };
            finish.done();
            result
        })
    }
}

/// Answers a unary call at once with `hello NAME` (whatever its path), as a
/// tonic handler does (the request decoded and the answer encoded by prost's
/// codec): the server of the instruction bench's gRPC rows and, after its
/// latency, of `tail --transport grpc`.
pub async fn greet(request: http::Request<Body>) -> http::Response<Body> {
    let codec = tonic_prost::ProstCodec::<Answer, Ask>::default();
    tonic::server::Grpc::new(codec).unary(Greet, request).await
}

/// [`greet`]'s handler, for the decoded request.
#[derive(Debug, Clone, Copy)]
struct Greet;

impl tonic::server::UnaryService<Ask> for Greet {
    type Response = Answer;
    type Future = std::future::Ready<Result<tonic::Response<Answer>, tonic::Status>>;

    fn call(&mut self, request: tonic::Request<Ask>) -> Self::Future {
        let text = format!("hello {}", request.into_inner().name);
        std::future::ready(Ok(tonic::Response::new(Answer { text })))
    }
}

/// A response that has begun: one message, then (after `wait`, if given)
/// trailers with `status` as `grpc-status` (none when `None`).
fn raw(status: Option<String>, wait: Option<Duration>) -> http::Response<Body> {
    let message = Answer {
        text: "partial".into(),
    }
    .encode_to_vec();
    let mut frame = BytesMut::with_capacity(5 + message.len());
    frame.put_u8(0);
    frame.put_u32(message.len() as u32);
    frame.put_slice(&message);
    let mut trailers = http::HeaderMap::new();
    if let Some(value) = status.and_then(|s| http::HeaderValue::from_str(&s).ok()) {
        trailers.insert("grpc-status", value);
    }
    let frames = VecDeque::from([Frame::data(frame.freeze()), Frame::trailers(trailers)]);
    http::Response::builder()
        .header("content-type", "application/grpc")
        .body(Body::new(Frames {
            frames,
            wait: wait.map(|wait| Box::pin(tokio::time::sleep(wait))),
        }))
        .unwrap_or_default()
}

/// A body of frames given up front, its last one sent once `wait` is over.
struct Frames {
    frames: VecDeque<Frame<Bytes>>,
    wait: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl http_body::Body for Frames {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if self.frames.len() == 1
            && let Some(wait) = self.wait.as_mut()
        {
            std::task::ready!(wait.as_mut().poll(cx));
            self.wait = None;
        }
        Poll::Ready(self.frames.pop_front().map(Ok))
    }

    fn is_end_stream(&self) -> bool {
        self.frames.is_empty()
    }
}
