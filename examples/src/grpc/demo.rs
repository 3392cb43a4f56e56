//! The gRPC demo: a tonic client, its `Channel` under the tower layer's
//! `grpc` mode, calls a scripted tonic server on 127.0.0.1 under the
//! policies `retry-policy import grpc` made of a service config
//! (`examples/grpc_service_config.json` into `examples/grpc.toml`, which
//! retrykit-policy's `import_grpc` test keeps in step); each call's line
//! says what the server did, what the layer did about it (attempts, hedges,
//! waits, how it ended) and the `grpc-previous-rpc-attempts` the server saw.

use super::server::{Flaky, Seen, Step};
use super::{call, channel};
use retrykit_core::tower::{GrpcFailedAttempt, RetryLayer};
use retrykit_core::{GiveUpEvent, HookSet, Hooks, Report};
use std::error::Error;
use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tonic::Code;
use tower::Layer;

/// One scripted call of the demo: what the server does, in words and as steps.
#[derive(Debug, Clone)]
pub struct Scene {
    /// What the server does, for the report.
    pub what: &'static str,
    /// The server's steps for this call.
    pub steps: Vec<Step>,
    /// The policy the call runs under (a name from `examples/grpc.toml`).
    pub policy: &'static str,
}

/// The imported policies: `retry-policy import grpc examples/grpc_service_config.json`.
pub const POLICIES: &str = include_str!("../../grpc.toml");

/// The policy of `retrykit.demo.Flaky/Call` (a retryPolicy).
pub const RETRY: &str = "retrykit-demo-Flaky-Call";

/// The policy of the rest of `retrykit.demo.Flaky` (a hedgingPolicy).
pub const HEDGE: &str = "retrykit-demo-Flaky";

/// Installs [`POLICIES`] in the registry.
///
/// ```
/// examples::grpc::demo::install().unwrap();
/// assert_eq!(retrykit_core::registry::policy(examples::grpc::demo::RETRY).unwrap().max_attempts(), Some(4));
/// ```
pub fn install() -> Result<(), retrykit_config::Diagnostics> {
    let options = retrykit_config::Options::new();
    let config = retrykit_config::Config::load_str(POLICIES, "examples/grpc.toml", &options)?;
    retrykit_core::registry::install(config.registry(None));
    Ok(())
}

/// What one call did.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The scene.
    pub what: &'static str,
    /// The status code the client got (`Ok` for an answer).
    pub code: Code,
    /// The call's report (from the response, or from the give-up hook).
    pub report: Option<Report>,
    /// The `grpc-previous-rpc-attempts` of each request the server saw.
    pub previous: Vec<Option<String>>,
}

fn fail(code: Code, pushback: Option<&str>) -> Step {
    let pushback = pushback.map(str::to_owned);
    Step::Fail { code, pushback }
}

/// The demo's scenes.
pub fn demo_script() -> Vec<Scene> {
    let unavailable = fail(Code::Unavailable, None);
    vec![
        Scene {
            what: "UNAVAILABLE (Trailers-Only) twice, then OK",
            steps: vec![unavailable.clone(), unavailable, Step::Ok],
            policy: RETRY,
        },
        Scene {
            what: "RESOURCE_EXHAUSTED, pushback 300 ms, then OK",
            steps: vec![fail(Code::ResourceExhausted, Some("300")), Step::Ok],
            policy: RETRY,
        },
        Scene {
            what: "a message, then UNAVAILABLE in the trailers",
            steps: vec![Step::UnavailableAfterBody, Step::Ok],
            policy: RETRY,
        },
        Scene {
            what: "UNAVAILABLE with pushback -1 (do not retry)",
            steps: vec![fail(Code::Unavailable, Some("-1")), Step::Ok],
            policy: RETRY,
        },
        Scene {
            what: "slow (2 s) first answer",
            steps: vec![Step::Slow(Duration::from_secs(2)), Step::Ok],
            policy: HEDGE,
        },
        Scene {
            what: "NOT_FOUND",
            steps: vec![fail(Code::NotFound, None)],
            policy: RETRY,
        },
    ]
}

type Shared = Arc<Mutex<Option<Report>>>;

/// Hooks that keep the report of a call that gave up in `shared`.
fn keep_report(
    shared: &Shared,
) -> impl HookSet<GrpcFailedAttempt<tonic::body::Body>> + Send + Sync + 'static {
    let keep = Arc::clone(shared);
    Hooks::new().on_give_up(
        move |event: &GiveUpEvent<'_, GrpcFailedAttempt<tonic::body::Body>>| {
            *keep.lock().unwrap_or_else(PoisonError::into_inner) = Some(*event.report);
        },
    )
}

/// Runs `scenes` against a fresh server, each call under its scene's policy
/// (looked up in the registry: see [`install`]) through the layer over one
/// tonic `Channel`, and writes a line per call to `out`.
pub async fn run_demo(
    scenes: Vec<Scene>,
    out: &mut impl Write,
) -> Result<Vec<Outcome>, Box<dyn Error + Send + Sync>> {
    let server = Flaky::new([]);
    let addr = server.clone().serve().await?;
    let channel = channel(addr).await?;
    let gave_up = Shared::default();
    let retry = RetryLayer::policy(RETRY)
        .grpc()
        .hooks(keep_report(&gave_up));
    let hedge = RetryLayer::policy(HEDGE)
        .grpc()
        .hooks(keep_report(&gave_up));
    let mut outcomes = Vec::new();
    for (n, scene) in scenes.into_iter().enumerate() {
        server.script(scene.steps);
        let before = server.seen().len();
        let result = match scene.policy {
            HEDGE => call(hedge.layer(channel.clone()), "ada").await,
            _ => call(retry.layer(channel.clone()), "ada").await,
        };
        let taken = gave_up
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let (code, report) = match &result {
            Ok(response) => (Code::Ok, response.extensions().get::<Report>().copied()),
            Err(status) => (status.code(), taken),
        };
        let seen: Vec<Seen> = server.seen().split_off(before);
        let previous = seen.iter().map(|s| s.previous_attempts.clone()).collect();
        let outcome = Outcome {
            what: scene.what,
            code,
            report,
            previous,
        };
        writeln!(out, "call {}: {}", n + 1, line(&outcome))?;
        outcomes.push(outcome);
    }
    Ok(outcomes)
}

/// One outcome as the demo prints it.
pub fn line(o: &Outcome) -> String {
    let previous: Vec<&str> = o
        .previous
        .iter()
        .map(|p| p.as_deref().unwrap_or("-"))
        .collect();
    let report = match &o.report {
        Some(r) => format!(
            "{} after {} attempt(s), {} hedge(s), waited {:?}",
            r.ending, r.attempts, r.hedges, r.waited
        ),
        None => "no report".to_owned(),
    };
    format!(
        "{:<46} -> {:?}: {report}; server saw grpc-previous-rpc-attempts [{}]",
        o.what,
        o.code,
        previous.join(", ")
    )
}
