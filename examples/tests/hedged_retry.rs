//! `#[retry]` on an async fn whose policy hedges (examples/retry.toml's
//! `lookup`, `hedge_after = "p95"`): the build sees the file, so the fn is
//! built with the hedged loop. Until the policy's latency estimate has seen
//! enough calls, a hedge follows after the stated floor.

use retrykit_core::hedge::HedgeSettings;
use retrykit_core::{Class, Classify, Policy, Registry, registry, retry};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;
use tokio::time::{Instant, sleep};

#[derive(Debug)]
struct Unavailable;

impl Classify for Unavailable {
    fn class(&self) -> Class {
        Class::TRANSIENT
    }
}

struct Replica {
    calls: AtomicU32,
}

impl Replica {
    /// The first copy of a lookup is stuck for a second; any later one answers in 5 ms.
    #[retry(policy = "lookup")]
    async fn lookup(&self, key: String) -> Result<String, Unavailable> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst);
        sleep(Duration::from_millis(if n == 0 { 1000 } else { 5 })).await;
        Ok(format!("{key}@{n}"))
    }
}

#[tokio::test(start_paused = true)]
async fn an_annotated_async_fn_sends_a_hedge_after_the_floor_and_takes_its_answer() {
    let config = retrykit_config::Config::load_file("retry.toml", &retrykit_config::Options::new())
        .unwrap_or_else(|d| panic!("{}", d.render()));
    let lookup = config
        .policy("lookup")
        .expect("examples/retry.toml defines lookup");
    let mut hedge = lookup.hedge_settings().expect("lookup hedges");
    hedge.share = 1.0; // the shipped 10% cap would refuse a first call's hedge
    let policy = Policy::builder()
        .hedge(Some(hedge))
        .max_attempts(3)
        .build()
        .unwrap();
    registry::install(Registry::builder().policy("lookup", policy).build());

    let replica = Replica {
        calls: AtomicU32::new(0),
    };
    let start = Instant::now();
    let answer = replica.lookup("k".to_owned()).await.unwrap();
    assert_eq!(answer, "k@1", "the hedge's answer");
    assert_eq!(
        start.elapsed(),
        HedgeSettings::DEFAULT_FLOOR + Duration::from_millis(5)
    );
    assert_eq!(replica.calls.load(Ordering::SeqCst), 2, "one hedge");
}
