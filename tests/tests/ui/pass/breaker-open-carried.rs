// Error types that can stand for an attempt a circuit breaker refused
// satisfy a policy that names a breaker: io::Error, and a hand-written
// `Classify` whose `from_breaker_open` gives a value. A policy that sets
// breaker = "none" asks nothing of its error type.
use retrykit_core::breaker::BreakerOpen;
use retrykit_core::{CarriesBreakerOpen, Class, Classify, retry};

#[derive(Debug)]
enum BrokerError {
    Unavailable,
    Refused(BreakerOpen),
}

impl Classify for BrokerError {
    fn class(&self) -> Class {
        Class::TRANSIENT
    }
    fn from_breaker_open(open: BreakerOpen) -> Option<Self> {
        Some(BrokerError::Refused(open))
    }
}

impl CarriesBreakerOpen for BrokerError {}

#[retry(policy = "guarded")]
async fn publish(ok: bool) -> Result<(), BrokerError> {
    if ok { Ok(()) } else { Err(BrokerError::Unavailable) }
}

#[retry(policy = "guarded-in-prod")]
fn read() -> std::io::Result<u8> {
    Ok(1)
}

#[retry(policy = "unguarded")]
fn plain() -> Result<u8, String> {
    Ok(2)
}

fn main() {
    assert_eq!(read().unwrap(), 1);
    assert_eq!(plain().unwrap(), 2);
    let _ = publish(true);
    let open = BreakerOpen::new(Some("broker"), retrykit_core::breaker::BreakerState::Open, Default::default());
    assert!(matches!(BrokerError::from_breaker_open(open), Some(BrokerError::Refused(_))));
}
