//! A publish that outlives the `publish` policy's `attempt_timeout` is cut
//! off and treated like a dropped connection: retried, then rescheduled in
//! the table, never dead-lettered. (Its own test binary: it installs its own
//! policies in the process-wide registry.)

use examples::outbox::BrokerError;
use retrykit_core::{AttemptTimeout, Class, Classify};
use std::time::Duration;

#[test]
fn the_broker_error_can_stand_for_a_timed_out_attempt() {
    let timeout = AttemptTimeout::new(2, Duration::from_millis(250));
    let err = BrokerError::from_timeout(timeout)
        .expect("BrokerError must represent a timeout, or attempt_timeout is not enforced");
    assert_eq!(err.class(), Class::TIMEOUT);
    assert!(err.class().is_retryable());
    assert_eq!(err.retry_after(), None);
    assert!(err.to_string().contains("timed out"), "{err}");
}

mod relay {
    use examples::outbox::{BrokerSettings, EventRow, FakeBroker, PassStats, Relay, SqliteStore};
    use retrykit_core::{Policy, Registry, registry};
    use std::sync::Arc;
    use std::time::Duration;

    /// `publish`: three calls of at most 10 ms each; `outbox`: the default.
    fn install() {
        let publish = Policy::builder()
            .base(Duration::from_millis(1))
            .cap(Duration::from_millis(2))
            .max_attempts(3)
            .attempt_timeout(Some(Duration::from_millis(10)))
            .build()
            .unwrap();
        registry::install(
            Registry::builder()
                .policy("publish", publish)
                .policy("outbox", Policy::default())
                .build(),
        );
    }

    /// One relay pass over one event, against a broker that takes `latency`
    /// to answer; the pass's stats and the event's row afterwards.
    async fn one_pass(latency: Duration) -> (PassStats, EventRow) {
        install();
        let store = SqliteStore::open_in_memory().unwrap();
        let id = store.place_order("kettle").unwrap();
        let settings = BrokerSettings {
            latency,
            ..Default::default()
        };
        let broker = Arc::new(FakeBroker::in_memory(settings).unwrap());
        let relay = Relay::new(store, broker.clone());
        let stats = relay.pass().await.unwrap();
        assert_eq!(
            broker.deliveries().unwrap().len(),
            stats.published as usize,
            "a cut-off publish must not be delivered"
        );
        (stats, relay.store().event(&id).unwrap().unwrap())
    }

    #[tokio::test(start_paused = true)]
    async fn a_publish_slower_than_attempt_timeout_is_retried_then_rescheduled() {
        let (stats, row) = one_pass(Duration::from_millis(50)).await;
        assert_eq!((stats.rescheduled, stats.dead, stats.calls), (1, 0, 3));
        assert_eq!(row.state, examples::outbox::EventState::Pending);
        let error = row.last_error.unwrap_or_default();
        assert!(error.contains("timed out"), "{error}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_publish_within_attempt_timeout_is_delivered() {
        let (stats, row) = one_pass(Duration::from_millis(5)).await;
        assert_eq!((stats.published, stats.calls), (1, 1));
        assert_eq!(row.state, examples::outbox::EventState::Published);
    }
}
