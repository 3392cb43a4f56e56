//! The tower layer's gRPC mode over a real tonic `Channel`, wrapped as it
//! is, against a real tonic server on 127.0.0.1 answering from a script,
//! under tokio's paused clock: what the server saw of each attempt
//! (`grpc-previous-rpc-attempts`, whether it ran to its end), and the
//! report of each call.

use examples::grpc::server::{Flaky, Seen, Step};
use examples::grpc::{call, channel};
use retrykit_core::hedge::{HedgeAfter, HedgeSettings};
use retrykit_core::tower::{GrpcFailedAttempt, RetryLayer};
use retrykit_core::{Ending, GiveUpEvent, Hooks, Jitter, Policy, Report};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tonic::Code;
use tower::Layer;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Small computed waits, so a wait the tests see is the server's pushback.
fn policy() -> retrykit_core::PolicyBuilder {
    Policy::builder()
        .jitter(Jitter::None)
        .base(ms(1))
        .cap(ms(10))
        .max_attempts(4)
        .max_retry_after(Some(Duration::from_secs(10)))
}

fn fail(code: Code, pushback: Option<&str>) -> Step {
    let pushback = pushback.map(str::to_owned);
    Step::Fail { code, pushback }
}

/// The `grpc-previous-rpc-attempts` of each call the server saw.
fn previous(seen: &[Seen]) -> Vec<Option<&str>> {
    seen.iter()
        .map(|s| s.previous_attempts.as_deref())
        .collect()
}

type GaveUp = Arc<Mutex<Vec<(Report, String)>>>;

/// Hooks that keep each give-up's report and error, as text.
fn recording() -> (
    GaveUp,
    impl Fn(&GiveUpEvent<'_, GrpcFailedAttempt<tonic::body::Body>>) + Send + Sync,
) {
    let gave_up = GaveUp::default();
    let keep = Arc::clone(&gave_up);
    let hook = move |event: &GiveUpEvent<'_, GrpcFailedAttempt<tonic::body::Body>>| {
        let error = format!("{:?}", event.error);
        keep.lock().unwrap().push((*event.report, error));
    };
    (gave_up, hook)
}

async fn start(script: Vec<Step>) -> (Flaky, tonic::transport::Channel) {
    let server = Flaky::new(script);
    let addr = server.clone().serve().await.expect("binds 127.0.0.1");
    let channel = channel(addr).await.expect("connects to 127.0.0.1");
    (server, channel)
}

#[tokio::test(start_paused = true)]
async fn trailers_only_unavailable_is_retried_with_previous_attempts_until_ok() {
    let unavailable = fail(Code::Unavailable, None);
    let (server, channel) = start(vec![unavailable.clone(), unavailable, Step::Ok]).await;
    // The channel as it is: no adapter.
    let client = RetryLayer::new(policy().build().unwrap())
        .grpc()
        .layer(channel);
    let response = call(client, "ada")
        .await
        .expect("the third attempt answers");
    assert_eq!(response.get_ref().text, "hello ada");
    let report = *response.extensions().get::<Report>().unwrap();
    assert_eq!((report.ending, report.attempts), (Ending::Success, 3));
    assert_eq!(previous(&server.seen()), [None, Some("1"), Some("2")]);
}

#[tokio::test(start_paused = true)]
async fn without_the_layer_the_same_script_fails_once() {
    let (server, channel) = start(vec![fail(Code::Unavailable, None), Step::Ok]).await;
    let status = call(channel, "ada").await.unwrap_err();
    assert_eq!((status.code(), server.seen().len()), (Code::Unavailable, 1));
}

#[tokio::test(start_paused = true)]
async fn a_failure_after_the_body_began_is_committed_and_never_retried() {
    let (server, channel) = start(vec![Step::UnavailableAfterBody, Step::Ok]).await;
    let (gave_up, hook) = recording();
    let client = RetryLayer::new(policy().build().unwrap())
        .grpc()
        .hooks(Hooks::new().on_give_up(hook))
        .layer(channel);
    let status = call(client, "ada").await.unwrap_err();
    assert_eq!(status.code(), Code::Unavailable);
    assert_eq!(server.seen().len(), 1, "a committed call is not sent again");
    let gave_up = gave_up.lock().unwrap();
    let (report, error) = &gave_up[0];
    assert_eq!((report.ending, report.attempts), (Ending::Committed, 1));
    assert!(error.contains("UNAVAILABLE (14)"), "{error}");
}

/// gRFC A6 retries only the codes a policy lists; a policy that names
/// none retries `UNAVAILABLE` alone.
#[tokio::test(start_paused = true)]
async fn resource_exhausted_is_retried_only_when_named() {
    for code in [Code::ResourceExhausted, Code::DeadlineExceeded] {
        let (server, channel) = start(vec![fail(code, None), Step::Ok]).await;
        let client = RetryLayer::new(policy().build().unwrap())
            .grpc()
            .layer(channel.clone());
        let status = call(client, "ada").await.unwrap_err();
        assert_eq!((status.code(), server.seen().len()), (code, 1), "{code:?}");
        let named = policy().grpc_retry_on([8, 4, 14]).build().unwrap();
        let client = RetryLayer::new(named).grpc().layer(channel);
        server.script([fail(code, None), Step::Ok]);
        call(client, "bo").await.unwrap();
        assert_eq!(server.seen().len(), 3, "{code:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn resource_exhausted_waits_for_its_pushback_clamped_and_a_bad_pushback_stops() {
    let exhausted = fail(Code::ResourceExhausted, Some("2000"));
    let (server, channel) = start(vec![exhausted, Step::Ok]).await;
    let named = policy().grpc_retry_on([8, 14]).build().unwrap();
    let client = RetryLayer::new(named).grpc().layer(channel.clone());
    let response = call(client.clone(), "ada").await.unwrap();
    let report = *response.extensions().get::<Report>().unwrap();
    assert_eq!((report.attempts, report.waited), (2, ms(2000)));

    // A pushback past max_retry_after (10 s) is clamped to it.
    server.script([
        fail(Code::ResourceExhausted, Some("999999999999")),
        Step::Ok,
    ]);
    let response = call(client.clone(), "bo").await.unwrap();
    let report = *response.extensions().get::<Report>().unwrap();
    assert_eq!(
        (report.attempts, report.waited),
        (2, Duration::from_secs(10))
    );

    // A negative or malformed pushback: no retry at all (gRFC A6).
    for bad in ["-1", "soon"] {
        server.script([fail(Code::Unavailable, Some(bad)), Step::Ok]);
        let before = server.seen().len();
        let (gave_up, hook) = recording();
        let client = RetryLayer::new(policy().build().unwrap())
            .grpc()
            .hooks(Hooks::new().on_give_up(hook))
            .layer(channel.clone());
        let status = call(client, "cy").await.unwrap_err();
        assert_eq!(status.code(), Code::Unavailable);
        assert_eq!(server.seen().len() - before, 1, "{bad}");
        let gave_up = gave_up.lock().unwrap();
        assert_eq!(gave_up[0].0.ending, Ending::Permanent, "{bad}");
        assert!(gave_up[0].1.contains("do not retry"), "{}", gave_up[0].1);
    }
}

#[tokio::test(start_paused = true)]
async fn a_slow_call_is_hedged_with_previous_attempts_and_the_loser_is_reset() {
    let (server, channel) = start(vec![Step::Slow(Duration::from_secs(1)), Step::Ok]).await;
    let client = RetryLayer::new(hedging()).grpc().layer(channel);
    let response = call(client, "ada").await.expect("the hedge answers");
    let report = *response.extensions().get::<Report>().unwrap();
    assert_eq!((report.attempts, report.hedges, report.winner), (2, 1, 2));
    // Long after the slow attempt would have ended had it gone on running.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let seen = server.seen();
    assert_eq!(previous(&seen), [None, Some("1")]);
    assert_eq!(
        seen.iter().map(|s| s.finished).collect::<Vec<_>>(),
        [false, true],
        "the lost attempt was reset on the wire, so its handler never finished"
    );
}

/// gRFC A6's `hedgingPolicy { maxAttempts: 3, hedgingDelay: "0.05s" }`,
/// as `import grpc` writes it (`hedge_share = 2.0`), on a method's first
/// call: both hedges go, 50 ms apart, as A6 sends them.
#[tokio::test(start_paused = true)]
async fn an_imported_hedging_policy_sends_all_its_hedges_on_a_first_call() {
    let slow = Step::Slow(Duration::from_secs(1));
    let (server, channel) = start(vec![slow.clone(), slow, Step::Ok]).await;
    let text = "[policies.hedged]\nmax_attempts = 3\nhedge_after = \"50ms\"\n\
                hedge_share = 2.0\ngrpc_retry_on = [\"UNAVAILABLE\"]\n";
    let options = retrykit_config::Options::new();
    let config = retrykit_config::Config::load_str(text, "retry.toml", &options).unwrap();
    let policy = Arc::clone(config.policy("hedged").unwrap());
    let response = call(RetryLayer::new(policy).grpc().layer(channel), "ada")
        .await
        .expect("the second hedge answers");
    let report = *response.extensions().get::<Report>().unwrap();
    assert_eq!((report.attempts, report.hedges, report.winner), (3, 2, 3));
    assert_eq!(previous(&server.seen()), [None, Some("1"), Some("2")]);
}

#[tokio::test(start_paused = true)]
async fn a_malformed_or_missing_status_is_a_named_failure_never_a_success() {
    for (status, says) in [
        (Some("abc"), "is not a status code"),
        (Some("99"), "is not a status code"),
        (None, "must end every call with grpc-status"),
    ] {
        let (server, channel) = start(vec![Step::RawTrailers(status.map(str::to_owned))]).await;
        let (gave_up, hook) = recording();
        let client = RetryLayer::new(policy().build().unwrap())
            .grpc()
            .hooks(Hooks::new().on_give_up(hook))
            .layer(channel);
        assert!(call(client, "ada").await.is_err(), "{status:?}");
        assert_eq!(server.seen().len(), 1);
        let gave_up = gave_up.lock().unwrap();
        assert_eq!(gave_up[0].0.ending, Ending::Permanent, "{status:?}");
        assert!(gave_up[0].1.contains(says), "{}", gave_up[0].1);
    }
}

#[tokio::test(start_paused = true)]
async fn a6_throttling_stops_retries_once_half_the_tokens_are_gone() {
    use retrykit_core::RetryBudget;
    let (server, channel) = start(vec![fail(Code::Unavailable, None)]).await;
    // maxTokens 4, tokenRatio 1: retries while more than 2 tokens are left.
    let budget = Arc::new(RetryBudget::grpc_throttling(4.0, 1.0).unwrap());
    let policy = policy().budget(Some(Arc::clone(&budget))).build().unwrap();
    let (gave_up, hook) = recording();
    let layer = RetryLayer::new(policy)
        .grpc()
        .hooks(Hooks::new().on_give_up(hook));
    let tokens = || budget.throttling().unwrap().tokens();
    // 4 -> 3 (retry allowed) -> 2 (not more than half: no retry).
    assert!(call(layer.layer(channel.clone()), "ada").await.is_err());
    assert_eq!((server.seen().len(), tokens()), (2, 2.0));
    // 2 -> 1: no retry at all.
    assert!(call(layer.layer(channel.clone()), "bo").await.is_err());
    assert_eq!((server.seen().len(), tokens()), (3, 1.0));
    let endings: Vec<_> = gave_up
        .lock()
        .unwrap()
        .iter()
        .map(|(r, _)| (r.ending, r.attempts))
        .collect();
    assert_eq!(
        endings,
        [(Ending::BudgetEmpty, 2), (Ending::BudgetEmpty, 1)]
    );
    // Successes fill it back, up to max_tokens: 1 -> 2 -> 3 -> 4 -> 4. A
    // failure then leaves 3, more than half: retries resume.
    server.script([Step::Ok]);
    for _ in 0..4 {
        call(layer.layer(channel.clone()), "cy").await.unwrap();
    }
    assert_eq!(tokens(), 4.0);
    server.script([fail(Code::Unavailable, None), Step::Ok]);
    let response = call(layer.layer(channel.clone()), "di").await.unwrap();
    assert_eq!(response.extensions().get::<Report>().unwrap().attempts, 2);
}

/// A6's throttling over a hedging policy, counted as grpc-java's
/// `RetriableStream` counts it: every attempt that fails with a non-fatal
/// code drains a token, and a pushback that says "do not retry" counts as
/// a failure too (grpc-go's `shouldRetry`).
#[tokio::test(start_paused = true)]
async fn a6_throttling_counts_each_failed_hedge_and_a_stopping_pushback() {
    use retrykit_core::RetryBudget;
    let unavailable = fail(Code::Unavailable, None);
    let (server, channel) = start(vec![unavailable]).await;
    let budget = Arc::new(RetryBudget::grpc_throttling(100.0, 1.0).unwrap());
    let tokens = || budget.throttling().unwrap().tokens();
    let mut hedge = HedgeSettings::new(HedgeAfter::Fixed(ms(50)));
    hedge.share = 2.0;
    let hedged = policy()
        .max_attempts(3)
        .hedge(Some(hedge))
        .budget(Some(Arc::clone(&budget)))
        .build()
        .unwrap();
    let layer = RetryLayer::new(hedged).grpc();
    // Each failure sends the next hedge at once: three attempts, three tokens.
    assert!(call(layer.layer(channel.clone()), "ada").await.is_err());
    assert_eq!((server.seen().len(), tokens()), (3, 97.0));
    // "Do not retry": one attempt, one token.
    server.script([fail(Code::Unavailable, Some("-1"))]);
    let retrying = policy().budget(Some(Arc::clone(&budget))).build().unwrap();
    let status = call(RetryLayer::new(retrying).grpc().layer(channel), "bo")
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::Unavailable);
    assert_eq!((server.seen().len(), tokens()), (4, 96.0));
}

/// The same bucket named in a policy file (`mode = "grpc_throttling"`):
/// the policies naming it share it, and the layer feeds it.
#[tokio::test(start_paused = true)]
async fn a6_throttling_named_in_retry_toml_is_shared_by_the_policies_naming_it() {
    let text = r#"
[defaults]
jitter = "none"
base = "1ms"
cap = "10ms"
max_attempts = 4

[policies.orders]
budget = "grpc"

[policies.search]
budget = "grpc"

[budgets.grpc]
mode = "grpc_throttling"
max_tokens = 4
token_ratio = 1
"#;
    let options = retrykit_config::Options::new().env(retrykit_config::Env::new());
    let config = retrykit_config::Config::load_str(text, "retry.toml", &options).unwrap();
    let (server, channel) = start(vec![fail(Code::Unavailable, None)]).await;
    let layer = |name| RetryLayer::new(Arc::clone(config.policy(name).unwrap())).grpc();
    let tokens = || {
        config
            .budget("grpc")
            .unwrap()
            .throttling()
            .unwrap()
            .tokens()
    };
    // orders: 4 -> 3 (a retry) -> 2, not more than half: no retry.
    assert!(
        call(layer("orders").layer(channel.clone()), "ada")
            .await
            .is_err()
    );
    assert_eq!((server.seen().len(), tokens()), (2, 2.0));
    // search shares the bucket: sent once.
    assert!(
        call(layer("search").layer(channel.clone()), "bo")
            .await
            .is_err()
    );
    assert_eq!((server.seen().len(), tokens()), (3, 1.0));
    // Three successes through search fill it (1 -> 4); a failure of orders
    // then leaves 3, more than half: it retries again.
    server.script([Step::Ok]);
    for _ in 0..3 {
        call(layer("search").layer(channel.clone()), "cy")
            .await
            .unwrap();
    }
    server.script([fail(Code::Unavailable, None), Step::Ok]);
    let response = call(layer("orders").layer(channel.clone()), "di")
        .await
        .unwrap();
    assert_eq!(response.extensions().get::<Report>().unwrap().attempts, 2);
}

#[tokio::test(start_paused = true)]
async fn the_demo_runs_under_the_imported_policies_and_each_call_does_what_its_line_says() {
    use examples::grpc::demo::{demo_script, install, run_demo};
    install().expect("examples/grpc.toml loads");
    let mut out = Vec::new();
    let outcomes = run_demo(demo_script(), &mut out).await.unwrap();
    let summary: Vec<_> = outcomes
        .iter()
        .map(|o| {
            let r = o.report.expect("every call has its report");
            (o.code, r.ending, r.attempts, r.hedges, o.previous.len())
        })
        .collect();
    assert_eq!(
        summary,
        [
            (Code::Ok, Ending::Success, 3, 0, 3),
            (Code::Ok, Ending::Success, 2, 0, 2),
            (Code::Unavailable, Ending::Committed, 1, 0, 1),
            (Code::Unavailable, Ending::Permanent, 1, 0, 1),
            (Code::Ok, Ending::Success, 2, 1, 2),
            (Code::NotFound, Ending::Permanent, 1, 0, 1),
        ]
    );
    let printed = String::from_utf8(out).unwrap();
    assert_eq!(printed.lines().count(), 6, "{printed}");
    assert!(
        printed.contains("server saw grpc-previous-rpc-attempts [-, 1, 2]"),
        "{printed}"
    );
}

#[tokio::test(start_paused = true)]
async fn an_attempt_past_its_timeout_is_reset_and_retried() {
    let (server, channel) = start(vec![Step::Slow(Duration::from_secs(1)), Step::Ok]).await;
    let policy = policy().attempt_timeout(Some(ms(100))).build().unwrap();
    let response = call(RetryLayer::new(policy).grpc().layer(channel), "ada")
        .await
        .unwrap();
    let report = *response.extensions().get::<Report>().unwrap();
    assert_eq!((report.ending, report.attempts), (Ending::Success, 2));
    tokio::time::sleep(Duration::from_secs(3)).await;
    let seen = server.seen();
    assert_eq!(previous(&seen), [None, Some("1")]);
    let finished: Vec<bool> = seen.iter().map(|s| s.finished).collect();
    assert_eq!(
        finished,
        [false, true],
        "the timed-out attempt was reset, not left running"
    );
}

/// grpc-go's deadline: it bounds the whole call, the attempt in flight
/// included; each attempt tells the server what it has left
/// (`grpc-timeout`), and the call ends as `DEADLINE_EXCEEDED`.
#[tokio::test(start_paused = true)]
async fn the_deadline_cuts_the_attempt_in_flight_and_ends_as_deadline_exceeded() {
    let (server, channel) = start(vec![Step::Slow(Duration::from_millis(1_500))]).await;
    let policy = policy().deadline(Some(ms(400))).build().unwrap();
    let started = tokio::time::Instant::now();
    let status = call(RetryLayer::new(policy).grpc().layer(channel), "ada")
        .await
        .unwrap_err();
    let took = started.elapsed();
    assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
    assert_eq!(
        status.message(),
        "attempt 1 was cut short at the call's deadline (400ms)"
    );
    assert!(took >= ms(400) && took < ms(420), "{took:?}");
    let seen = server.seen();
    let timeouts: Vec<_> = seen.iter().map(|s| s.timeout.as_deref()).collect();
    assert_eq!(timeouts, [Some("400000u")]);
}

/// An attempt timeout that ends the call reaches tonic as
/// `DEADLINE_EXCEEDED` too, its message naming the limit; each attempt
/// carries its own `grpc-timeout`.
#[tokio::test(start_paused = true)]
async fn a_call_ended_by_its_attempt_timeout_is_deadline_exceeded() {
    let slow = Step::Slow(Duration::from_secs(1));
    let (server, channel) = start(vec![slow.clone(), slow]).await;
    let policy = policy()
        .attempt_timeout(Some(ms(100)))
        .max_attempts(2)
        .build()
        .unwrap();
    let status = call(RetryLayer::new(policy).grpc().layer(channel), "ada")
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
    assert_eq!(status.message(), "attempt 2 timed out after 100ms");
    let seen = server.seen();
    let timeouts: Vec<_> = seen.iter().map(|s| s.timeout.as_deref()).collect();
    assert_eq!(timeouts, [Some("100000u"), Some("100000u")]);
}

#[tokio::test(start_paused = true)]
async fn a_code_named_in_the_policy_file_is_retried_and_by_default_it_is_not() {
    let aborted = fail(Code::Aborted, None);
    let text = "[policies.named]\nbase = \"1ms\"\njitter = \"none\"\nmax_attempts = 4\n\
                grpc_retry_on = [\"UNAVAILABLE\", \"ABORTED\"]\n\
                [policies.plain]\nbase = \"1ms\"\njitter = \"none\"\nmax_attempts = 4\n";
    let options = retrykit_config::Options::new();
    let config = retrykit_config::Config::load_str(text, "retry.toml", &options).unwrap();
    let named = Arc::clone(config.policy("named").unwrap());
    let plain = Arc::clone(config.policy("plain").unwrap());
    // By default ABORTED is permanent: one request, and the call fails.
    let (server, channel) = start(vec![aborted.clone(), Step::Ok]).await;
    let status = call(RetryLayer::new(plain).grpc().layer(channel), "ada")
        .await
        .expect_err("ABORTED is not retried by default");
    assert_eq!(status.code(), Code::Aborted);
    assert_eq!(server.seen().len(), 1);
    // Named in the file: retried until OK.
    let (server, channel) = start(vec![aborted.clone(), aborted, Step::Ok]).await;
    let response = call(RetryLayer::new(named).grpc().layer(channel), "ada")
        .await
        .expect("the third attempt answers");
    let report = *response.extensions().get::<Report>().unwrap();
    assert_eq!((report.ending, report.attempts), (Ending::Success, 3));
    assert_eq!(previous(&server.seen()), [None, Some("1"), Some("2")]);
}

/// A hedging policy whose hedge goes after 50 ms (one a call: `hedge_share`
/// 1.0).
fn hedging() -> Policy {
    let mut hedge = HedgeSettings::new(HedgeAfter::Fixed(ms(50)));
    hedge.share = 1.0;
    policy().hedge(Some(hedge)).build().unwrap()
}

#[tokio::test(start_paused = true)]
async fn once_an_attempt_commits_no_hedge_follows_and_the_others_are_reset() {
    // The first attempt's message comes at once, its OK 500 ms later: no
    // hedge at 50 ms (gRFC A6), so the server sees one request.
    let (server, channel) = start(vec![Step::SlowTrailers(ms(500)), Step::Ok]).await;
    let client = RetryLayer::new(hedging()).grpc().layer(channel);
    let response = call(client, "ada")
        .await
        .expect("the committed attempt answers");
    let report = *response.extensions().get::<Report>().unwrap();
    assert_eq!((report.attempts, report.hedges, report.winner), (1, 0, 1));
    assert_eq!(response.get_ref().text, "partial");
    assert_eq!(server.seen().len(), 1, "no hedge after the commit");

    // The first attempt answers after 200 ms; the hedge at 50 ms commits
    // at once, so the first is cancelled then (its stream reset, its
    // handler never done) and the call waits for the hedge's end at 550 ms.
    let script = vec![Step::Slow(ms(200)), Step::SlowTrailers(ms(500))];
    let (server, channel) = start(script).await;
    let client = RetryLayer::new(hedging()).grpc().layer(channel);
    let response = call(client, "bo")
        .await
        .expect("the committed hedge answers");
    let report = *response.extensions().get::<Report>().unwrap();
    assert_eq!((report.attempts, report.hedges, report.winner), (2, 1, 2));
    tokio::time::sleep(Duration::from_secs(3)).await;
    let seen = server.seen();
    assert_eq!(previous(&seen), [None, Some("1")]);
    assert!(
        !seen[0].finished,
        "the attempt the commit cancelled was reset"
    );
}
