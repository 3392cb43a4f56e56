//! gRPC through the tower layer's `grpc` mode: a real tonic server on
//! 127.0.0.1 answering from a script ([`server`]), and a tonic client whose
//! `Channel` the layer wraps as it is ([`call`]). The messages are written
//! with prost's derive: no protoc, nothing generated at build time.

pub mod demo;
pub mod server;

use http::uri::PathAndQuery;
use tonic::transport::Channel;

/// The request message.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Ask {
    /// Who asks.
    #[prost(string, tag = "1")]
    pub name: String,
}

/// The response message.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Answer {
    /// The greeting.
    #[prost(string, tag = "1")]
    pub text: String,
}

/// A channel to the server at `addr` (127.0.0.1).
pub async fn channel(addr: std::net::SocketAddr) -> Result<Channel, tonic::transport::Error> {
    tonic::transport::Endpoint::from_shared(format!("http://{addr}"))?
        .connect()
        .await
}

/// One unary call of [`server::METHOD`] through `service` (a tonic
/// `Channel`, or the layer over one).
pub async fn call<S>(service: S, name: &str) -> Result<tonic::Response<Answer>, tonic::Status>
where
    S: tonic::client::GrpcService<tonic::body::Body>,
    S::ResponseBody: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    <S::ResponseBody as http_body::Body>::Error:
        Into<Box<dyn std::error::Error + Send + Sync>> + Send,
{
    call_on(&mut tonic::client::Grpc::new(service), name).await
}

/// The same call on a client kept from call to call, as a generated tonic
/// client makes it: `ready`, then `unary`.
pub async fn call_on<S>(
    client: &mut tonic::client::Grpc<S>,
    name: &str,
) -> Result<tonic::Response<Answer>, tonic::Status>
where
    S: tonic::client::GrpcService<tonic::body::Body>,
    S::ResponseBody: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    <S::ResponseBody as http_body::Body>::Error:
        Into<Box<dyn std::error::Error + Send + Sync>> + Send,
{
    client
        .ready()
        .await
        .map_err(|e| tonic::Status::unavailable(format!("not ready: {}", e.into())))?;
    let request = tonic::Request::new(Ask {
        name: name.to_owned(),
    });
    let codec = tonic_prost::ProstCodec::<Ask, Answer>::default();
    client
        .unary(request, PathAndQuery::from_static(server::METHOD), codec)
        .await
}
