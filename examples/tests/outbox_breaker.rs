//! The relay with a circuit breaker on its `publish` policy (issue 29): a
//! broker that is down gets the breaker's `min_calls` and its probes, not
//! every event's retries; an event the breaker holds back is neither judged
//! nor dead-lettered, and is published once the broker is back; poison
//! messages are dead-lettered without opening the breaker.
//!
//! The policies are built in code (short waits, a breaker that trips after
//! `MIN_CALLS` failures) and installed in the process's registry, so the
//! tests take turns ([`in_turn`]). The broker is down from its start, so every
//! call counted is a call during the outage; no test sleeps more than a
//! few milliseconds at a time.

use examples::outbox::{BrokerSettings, EventRow, EventState, FakeBroker, Relay, SqliteStore};
use retrykit_core::breaker::{BreakerState, CircuitBreaker};
use retrykit_core::{Policy, Registry, registry};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Failures after which the breaker opens (every call fails in an outage).
const MIN_CALLS: u32 = 10;
/// The orders placed by each test.
const EVENTS: usize = 20;

/// Runs `test` on its own runtime, one test at a time: each installs its
/// own policies in the one registry.
fn in_turn(test: impl Future<Output = ()>) {
    static TURN: Mutex<()> = Mutex::new(());
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(test);
}

/// Installs `publish` (3 calls 1 ms apart, within 1 s, with `breaker`) and
/// `outbox` (8 scheduled attempts, 1 to 2 ms apart).
fn install(breaker: Option<CircuitBreaker>) {
    let publish = Policy::builder()
        .name("publish")
        .base(Duration::from_millis(1))
        .cap(Duration::from_millis(2))
        .max_attempts(3)
        .deadline(Some(Duration::from_secs(1)))
        .breaker(breaker.map(Arc::new))
        .build()
        .unwrap();
    let outbox = Policy::builder()
        .name("outbox")
        .base(Duration::from_millis(1))
        .cap(Duration::from_millis(2))
        .max_attempts(8)
        .build()
        .unwrap();
    registry::install(
        Registry::builder()
            .policy("publish", publish)
            .policy("outbox", outbox)
            .build(),
    );
}

/// A breaker that opens after [`MIN_CALLS`] calls of which half failed, for
/// `open_for` at first (no jitter; `probe_every` no shorter than its
/// longest break), with one probe.
fn breaker(open_for: Duration) -> CircuitBreaker {
    CircuitBreaker::builder()
        .name("broker")
        .min_calls(MIN_CALLS)
        .failure_ratio(0.5)
        .window(Duration::from_secs(30))
        .open_for(open_for)
        .max_open_for(open_for * 4)
        .probe_every(open_for * 4)
        .open_jitter(0.0)
        .build()
        .unwrap()
}

/// The `publish` policy's breaker, as installed.
fn installed_breaker() -> Arc<CircuitBreaker> {
    let publish = registry::policy("publish").unwrap();
    publish.breaker().unwrap().clone()
}

/// A broker down for `outage` from its start, with `settings` otherwise.
fn broker_down_for(outage: Duration, settings: BrokerSettings) -> Arc<FakeBroker> {
    let settings = BrokerSettings {
        outage: Some((Duration::ZERO, outage)),
        ..settings
    };
    Arc::new(FakeBroker::in_memory(settings).unwrap())
}

/// A relay over a fresh outbox holding [`EVENTS`] orders.
fn relay(broker: &Arc<FakeBroker>) -> Relay<SqliteStore> {
    let store = SqliteStore::open_in_memory().unwrap();
    for i in 0..EVENTS {
        store.place_order(&format!("item-{i}")).unwrap();
    }
    Relay::new(store, broker.clone()).named("relay-test")
}

/// Runs the relay until no event is pending; a run that would last longer
/// than 10 s fails the test instead.
async fn run_until_idle(relay: &Relay<SqliteStore>) {
    let run = relay.run_until_idle(Duration::from_millis(5), |_| {});
    tokio::time::timeout(Duration::from_secs(10), run)
        .await
        .expect("the relay finished within 10 s")
        .unwrap();
}

fn count(events: &[EventRow], state: EventState) -> usize {
    events.iter().filter(|e| e.state == state).count()
}

#[test]
fn a_broker_down_gets_min_calls_and_no_event_is_judged_on_a_refusal() {
    in_turn(async {
        // Open for an hour: longer than `publish`'s deadline, so a refused
        // publish ends at once rather than waiting for the breaker.
        install(Some(breaker(Duration::from_secs(3600))));
        let broker = broker_down_for(Duration::from_secs(3600), BrokerSettings::default());
        let relay = relay(&broker);
        let mut held_back = 0;
        // Passes until every event waits for the breaker (bounded: 50 passes).
        for _ in 0..50 {
            let pass = relay.pass().await.unwrap();
            held_back += pass.held_back;
            let next = relay.store().next_due().unwrap().unwrap();
            if pass.claimed() == 0 && next > examples::outbox::now_ms() + 60_000 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(3)).await;
        }
        let events = relay.store().events().unwrap();
        assert_eq!(broker.outage_calls().unwrap(), u64::from(MIN_CALLS));
        assert_eq!(installed_breaker().state(), BreakerState::Open);
        // Every event is still pending, due after the breaker's hour; none was
        // dead-lettered, and the calls recorded are the broker's.
        assert_eq!(count(&events, EventState::Pending), EVENTS, "{events:#?}");
        let soonest = events.iter().map(|e| e.next_attempt_ms).min().unwrap();
        assert!(
            soonest > examples::outbox::now_ms() + 3_500_000,
            "{events:#?}"
        );
        let calls: u32 = events.iter().map(|e| e.publish_calls).sum();
        assert_eq!(calls, MIN_CALLS);
        // Scheduled attempts are the publishes that reached the broker (3 + 3 +
        // 3 + 1 calls); a publish refused before any call is not one.
        let attempted = events.iter().filter(|e| e.scheduled_attempts > 0).count();
        assert_eq!(attempted, 4, "{events:#?}");
        assert!(events.iter().all(|e| e.scheduled_attempts <= 1));
        // Held back: every event but the one whose call tripped the breaker (the
        // first three after their attempt), each once, since it waits an hour.
        assert_eq!(held_back as usize, EVENTS - 1);
        assert!(events.iter().all(|e| e.oracle.failures <= 1));
    });
}

#[test]
fn without_a_breaker_the_same_outage_gets_every_retry_and_dead_letters_all() {
    in_turn(async {
        install(None);
        let broker = broker_down_for(Duration::from_secs(3600), BrokerSettings::default());
        let relay = relay(&broker);
        run_until_idle(&relay).await;
        let events = relay.store().events().unwrap();
        // 8 scheduled attempts of 3 calls each, for every event.
        assert_eq!(broker.outage_calls().unwrap(), (EVENTS * 8 * 3) as u64);
        assert_eq!(count(&events, EventState::Dead), EVENTS);
    });
}

#[test]
fn held_back_events_are_published_once_the_broker_is_back() {
    in_turn(async {
        install(Some(breaker(Duration::from_millis(40))));
        let broker = broker_down_for(Duration::from_millis(120), BrokerSettings::default());
        let relay = relay(&broker);
        run_until_idle(&relay).await;
        let events = relay.store().events().unwrap();
        assert_eq!(count(&events, EventState::Published), EVENTS, "{events:#?}");
        let mut delivered = broker.deliveries().unwrap();
        delivered.sort();
        delivered.dedup();
        assert_eq!(delivered.len(), EVENTS);
        // The calls that tripped it, then at most one probe per open period:
        // 40, 80 and 160 ms (the last one ends after the outage).
        let calls = broker.outage_calls().unwrap();
        assert!(
            calls <= u64::from(MIN_CALLS) + 3,
            "{calls} calls during the outage"
        );
        assert_eq!(installed_breaker().state(), BreakerState::Closed);
    });
}

#[test]
fn poison_messages_are_dead_lettered_without_opening_the_breaker() {
    in_turn(async {
        install(Some(breaker(Duration::from_secs(3600))));
        let poison = BrokerSettings {
            reject_rate: 1.0,
            ..BrokerSettings::default()
        };
        let broker = Arc::new(FakeBroker::in_memory(poison).unwrap());
        let relay = relay(&broker);
        let mut held_back = 0;
        let run = relay.run_until_idle(Duration::from_millis(5), |pass| {
            held_back += pass.held_back;
        });
        run.await.unwrap();
        let events = relay.store().events().unwrap();
        assert_eq!(count(&events, EventState::Dead), EVENTS);
        assert!(events.iter().all(|e| e.publish_calls == 1), "{events:#?}");
        assert!(
            events
                .iter()
                .all(|e| e.last_error.as_deref().unwrap().contains("rejected")),
            "{events:#?}"
        );
        assert_eq!(held_back, 0);
        // Twice `min_calls` rejected calls, and the breaker is closed.
        assert_eq!(installed_breaker().state(), BreakerState::Closed);
    });
}
