//! The tail harness over gRPC: a tonic server on 127.0.0.1 whose every call
//! waits its [`Latencies`] draw, then answers OK ([`greet`]); and a caller
//! that makes each call through the tower layer's gRPC mode over one tonic
//! `Channel` (one HTTP/2 connection, shared by every client task, as a gRPC
//! client shares its channel). A hedge is another stream on the connection;
//! a cancelled one is reset, which drops its handler on the server.

use super::server::{Latencies, Server};
use crate::grpc::server::greet;
use retrykit_core::tower::{Grpc, RetryLayer, RetryService};
use retrykit_core::{Policy, Report};
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tonic::body::Body;
use tonic::transport::Channel;
use tonic::transport::server::TcpIncoming;
use tower::Layer;

/// Starts the gRPC server on 127.0.0.1 (an OS-chosen port) in the current
/// tokio runtime.
pub(crate) async fn start(latencies: Latencies) -> std::io::Result<Server> {
    let incoming =
        TcpIncoming::bind(SocketAddr::from(([127, 0, 0, 1], 0)))?.with_nodelay(Some(true));
    let addr = incoming.local_addr()?;
    let counts = latencies.counts.clone();
    tokio::spawn(async move {
        let served = tonic::transport::Server::builder()
            .serve_with_incoming(Slow(latencies), incoming)
            .await;
        if let Err(e) = served {
            eprintln!("tail: the gRPC server stopped: {e}");
        }
    });
    Ok(Server { addr, counts })
}

/// The server's service: each call waits its latency, then is answered.
#[derive(Clone)]
struct Slow(Latencies);

impl tower::Service<http::Request<Body>> for Slow {
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<http::Response<Body>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        let latencies = self.0.clone();
        Box::pin(async move {
            latencies.wait().await;
            Ok(greet(request).await)
        })
    }
}

/// The clients' service: the layer's gRPC mode over a tonic channel.
pub(crate) type Client = RetryService<Channel, Grpc>;

/// One channel to `addr` (one HTTP/2 connection) under the layer with
/// `policy`; every client task calls on a clone of it.
pub(crate) async fn client(
    policy: Arc<Policy>,
    addr: SocketAddr,
) -> Result<Client, tonic::transport::Error> {
    let channel = crate::grpc::channel(addr).await?;
    Ok(RetryLayer::new(policy).grpc().layer(channel))
}

/// One call through `client`: the attempt that answered (its report's
/// winner), or `None` when the call failed.
pub(crate) async fn call(client: Client) -> Option<u32> {
    let response = crate::grpc::call(client, "tail").await.ok()?;
    let report = response.extensions().get::<Report>()?;
    Some(report.winner)
}
