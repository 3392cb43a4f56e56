//! The gRPC rows: one unary call that succeeds first time, through a tonic
//! `Channel` alone (the limit) and through `RetryLayer::policy(..).grpc()`
//! over the same channel (ours), and the ratio between them (issue 33's
//! target: through the layer at most 10% more instructions than tonic
//! alone), reported, not gated.
//!
//! Everything is real but the wire: tonic's `Endpoint` and `Channel`
//! (hyper's HTTP/2 client behind tower's buffer), and the examples' tonic
//! handler `greet` (`tonic::server::Grpc::unary`, prost's codec) served by
//! hyper's HTTP/2 server, as tonic's `Server` serves each connection. Between them is a
//! `tokio::io::duplex` pipe, on a current-thread runtime: each call takes
//! the same path every time, so Callgrind's count repeats, where loopback
//! TCP would add system calls and wake-ups that vary from run to run. Both
//! rows build the same runtime, connection and client before their
//! counted loop (it cancels), and make each call as a generated tonic
//! client does: `ready`, then `unary` on the same `Grpc` client.

use crate::Counted;
use crate::common::LOOP_POLICY;
use crate::rows::{Kind, Row};
use examples::grpc::call_on;
use examples::grpc::server::greet;
use hyper_util::rt::{TokioExecutor, TokioIo};
use retrykit_core::tower::RetryLayer;
use std::convert::Infallible;
use std::future::ready;
use std::hint::black_box;
use tonic::body::Body;
use tonic::transport::{Channel, Endpoint};
use tower::Layer;

/// The limit: the call through tonic's channel alone.
pub(crate) const TONIC_ROW: Row = Row {
    name: "grpc/tonic-channel",
    kind: Kind::Limit,
    run: |_, n| calls(n, |channel| channel),
};

/// Ours: the same call through the layer's gRPC mode over that channel,
/// with the registry's policy `publish` (three attempts; the call succeeds
/// first time).
pub(crate) const LAYER_ROW: Row = Row {
    name: "grpc/retry-core-layer",
    kind: Kind::Ours,
    run: |_, n| {
        calls(n, |channel| {
            RetryLayer::policy(LOOP_POLICY).grpc().layer(channel)
        })
    },
};

/// What the request says.
const NAME: &str = "ada";

/// Prints the two rows' ratio; a problem when the layer is over the target.
pub(crate) fn report(counted: &[Counted]) -> Option<()> {
    let per_call = |row: &Row| {
        counted
            .iter()
            .find(|c| c.row.name == row.name)
            .map(|c| c.per_call)
    };
    let (alone, layered) = (per_call(&TONIC_ROW)?, per_call(&LAYER_ROW)?);
    println!(
        "\ngRPC: {layered:.1} instructions per call through the layer, {alone:.1} through tonic alone: {:+.1}%",
        100.0 * (layered / alone - 1.0)
    );
    Some(())
}

/// `iters` calls through `wrap(channel)`, on a runtime, connection and
/// client of their own.
fn calls<S>(iters: u64, wrap: impl FnOnce(Channel) -> S)
where
    S: tonic::client::GrpcService<Body>,
    S::ResponseBody: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    <S::ResponseBody as http_body::Body>::Error:
        Into<Box<dyn std::error::Error + Send + Sync>> + Send,
{
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(async {
        let mut client = tonic::client::Grpc::new(wrap(connect().await));
        for _ in 0..iters {
            let answer = call_on(&mut client, black_box(NAME)).await;
            black_box(answer.expect("the call succeeds"));
        }
    });
}

/// A channel to [`greet`] over an in-process pipe, served by hyper's HTTP/2
/// server.
async fn connect() -> Channel {
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    let service =
        hyper::service::service_fn(|request: http::Request<hyper::body::Incoming>| async move {
            Ok::<_, Infallible>(greet(request.map(Body::new)).await)
        });
    // Served until the client goes (the runtime ends with the row).
    tokio::spawn(
        hyper::server::conn::http2::Builder::new(TokioExecutor::new())
            .serve_connection(TokioIo::new(server_io), service),
    );
    let mut client_io = Some(client_io);
    let connector = tower::service_fn(move |_: http::Uri| {
        let io = client_io.take().map(TokioIo::new);
        ready(io.ok_or_else(|| std::io::Error::other("the one in-process connection is gone")))
    });
    Endpoint::from_static("http://in-process.invalid")
        .connect_with_connector(connector)
        .await
        .expect("connects over the in-process pipe")
}
