//! A small demo: retries a flaky async operation with a policy built in code,
//! printing each retry and the final report.

use clap::Parser;
use examples::output::{exit_with, println};
use retrykit_core::{Hooks, Jitter, Policy, Retry, RetryEvent};
use std::io::{Error, ErrorKind};
use std::time::Duration;

/// Retries a flaky async operation (three dropped connections, then a
/// success) with a policy built in code, printing each retry and the report.
#[derive(Parser)]
#[command(name = "flaky")]
struct Cli {}

fn main() {
    let Cli {} = Cli::parse();
    // A closed stdout (`flaky | head -1`) ends quietly.
    if let Err(e) = demo() {
        exit_with(&*e, 1);
    }
}

#[tokio::main(flavor = "current_thread")]
async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    let policy = Policy::builder()
        .name("flaky-demo")
        .base(Duration::from_millis(20))
        .cap(Duration::from_millis(200))
        .jitter(Jitter::Equal)
        .max_attempts(6)
        .deadline(Some(Duration::from_secs(5)))
        .build()?;

    let mut calls = 0u32;
    let (result, report) = Retry::new(&policy)
        .hooks(Hooks::new().on_retry(|e: &RetryEvent<'_, Error>| {
            // A hook cannot fail the call: a closed stdout is noticed by the
            // report's lines below, which end the demo quietly.
            let _ = println(&format!(
                "attempt {} failed ({}); retrying in {:?}",
                e.attempt, e.error, e.wait
            ));
        }))
        .call_with_report(|| {
            calls += 1;
            let n = calls;
            async move {
                if n < 4 {
                    Err(Error::new(
                        ErrorKind::ConnectionReset,
                        "broker dropped the connection",
                    ))
                } else {
                    Ok(format!("published on call {n}"))
                }
            }
        })
        .await;
    println(&format!("result: {result:?}"))?;
    println(&format!(
        "ended: {} after {} attempts, waited {:?} in {:?}",
        report.ending, report.attempts, report.waited, report.elapsed
    ))?;
    result.map(drop).map_err(Into::into)
}
