//! The gRPC demo: a tonic client whose `Channel` the tower layer's `grpc`
//! mode wraps as it is, against a scripted tonic server on 127.0.0.1
//! (UNAVAILABLE as Trailers-Only, RESOURCE_EXHAUSTED with pushback, a
//! failure after the body began, a slow answer that is hedged); one line
//! per call says what the layer did.

use clap::Parser;
use examples::grpc::demo::{demo_script, run_demo};
use examples::output::{Stdout, exit_with};
use retrykit_core::Policy;
use retrykit_core::hedge::{HedgeAfter, HedgeSettings};
use std::time::Duration;

/// A tonic client under the retry layer's gRPC mode calls a flaky tonic
/// server on 127.0.0.1; each line says what the server did and what the
/// layer did about it.
#[derive(Parser)]
#[command(name = "grpc")]
struct Cli {}

fn main() {
    let Cli {} = Cli::parse();
    demo();
}

/// The demo's policy: four attempts, waits from 50 ms, a hedge after
/// 200 ms (at most one per call).
fn policy() -> Policy {
    let mut hedge = HedgeSettings::new(HedgeAfter::Fixed(Duration::from_millis(200)));
    hedge.share = 1.0;
    let built = Policy::builder()
        .max_attempts(4)
        .base(Duration::from_millis(50))
        .cap(Duration::from_millis(500))
        .hedge(Some(hedge))
        .build();
    built.unwrap_or_else(|e| exit_with(&e, 1))
}

#[tokio::main(flavor = "current_thread")]
async fn demo() {
    let result = run_demo(policy().into(), demo_script(), &mut Stdout).await;
    if let Err(e) = result {
        exit_with(&*e, 1);
    }
}
