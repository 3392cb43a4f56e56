//! The gRPC demo: a tonic client whose `Channel` the tower layer's `grpc`
//! mode wraps as it is, against a scripted tonic server on 127.0.0.1
//! (UNAVAILABLE as Trailers-Only, RESOURCE_EXHAUSTED with pushback, a
//! failure after the body began, a slow answer that is hedged), under the
//! policies imported from `examples/grpc_service_config.json`; one line per
//! call says what the layer did.

use clap::Parser;
use examples::grpc::demo::{demo_script, install, run_demo};
use examples::output::{Stdout, exit_with};

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

#[tokio::main(flavor = "current_thread")]
async fn demo() {
    // The policies `retry-policy import grpc` made of examples/grpc_service_config.json.
    if let Err(diags) = install() {
        exit_with(&diags, 1);
    }
    let result = run_demo(demo_script(), &mut Stdout).await;
    if let Err(e) = result {
        exit_with(&*e, 1);
    }
}
