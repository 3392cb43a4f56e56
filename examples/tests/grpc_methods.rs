//! One layer over a tonic `Channel` for every method of a service config
//! (gRFC A6's `name: [{service, method}]`): `RetryLayer::by_grpc_method`
//! picks each call's policy from its path, the method's entry first, then
//! its service's, then `grpc-default`, by the names `retry-policy import
//! grpc` writes; a reload reaches the next call. Real tonic server on
//! 127.0.0.1, tokio's paused clock. Its own binary: it installs registries.

use examples::grpc::server::{Flaky, Step};
use examples::grpc::{call, channel};
use retrykit_core::tower::RetryLayer;
use retrykit_core::{Jitter, Policy, Registry, Report, registry};
use std::time::Duration;
use tonic::Code;
use tower::Layer;

fn attempts(n: u32) -> Policy {
    Policy::builder()
        .max_attempts(n)
        .base(Duration::from_millis(1))
        .jitter(Jitter::None)
        .build()
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn each_call_takes_its_methods_policy_then_its_services_then_the_default() {
    let server = Flaky::new(vec![unavailable()]);
    let addr = server.clone().serve().await.expect("binds 127.0.0.1");
    let channel = channel(addr).await.expect("connects to 127.0.0.1");
    let layer = RetryLayer::by_grpc_method();
    // The demo's method is /retrykit.demo.Flaky/Call.
    let sent = |expected: usize, why: &str| {
        let seen = server.seen().len();
        assert_eq!(seen, expected, "{why}");
    };
    registry::install(
        Registry::builder()
            .policy("retrykit-demo-Flaky-Call", attempts(4))
            .policy("retrykit-demo-Flaky", attempts(3))
            .policy("grpc-default", attempts(2))
            .build(),
    );
    let status = call(layer.layer(channel.clone()), "ada").await.unwrap_err();
    assert_eq!(status.code(), Code::Unavailable);
    sent(4, "the method's own policy");
    registry::install(
        Registry::builder()
            .policy("retrykit-demo-Flaky", attempts(3))
            .policy("grpc-default", attempts(2))
            .build(),
    );
    let _ = call(layer.layer(channel.clone()), "bo").await;
    sent(4 + 3, "the service's policy");
    registry::install(
        Registry::builder()
            .policy("grpc-default", attempts(2))
            .build(),
    );
    let _ = call(layer.layer(channel.clone()), "cy").await;
    sent(7 + 2, "every method's policy");
    registry::install(Registry::builder().build());
    let _ = call(layer.layer(channel.clone()), "di").await;
    sent(9 + 1, "no entry: one attempt, without retry (gRFC A6)");
    // A success carries the report of the policy it ran under.
    server.script([unavailable(), Step::Ok]);
    registry::install(
        Registry::builder()
            .policy("retrykit-demo-Flaky", attempts(3))
            .build(),
    );
    let response = call(layer.layer(channel), "ed").await.unwrap();
    let report = *response.extensions().get::<Report>().unwrap();
    assert_eq!(report.attempts, 2);
}

fn unavailable() -> Step {
    Step::Fail {
        code: Code::Unavailable,
        pushback: None,
    }
}
