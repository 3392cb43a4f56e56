// Error types that can stand for a timed-out attempt satisfy a policy with
// attempt_timeout: a derived `#[classify(timeout)]` variant, and io::Error.
use retrykit_core::{Classify, retry};

#[derive(Debug, Classify)]
enum BrokerError {
    #[classify(transient)]
    Unavailable,
    #[classify(timeout)]
    TimedOut,
}

#[retry(policy = "timed")]
async fn publish(ok: bool) -> Result<(), BrokerError> {
    if ok { Ok(()) } else { Err(BrokerError::Unavailable) }
}

#[retry(policy = "timed-in-prod")]
fn read() -> std::io::Result<u8> {
    Ok(1)
}

fn main() {
    assert_eq!(read().unwrap(), 1);
    let _ = publish(true);
    assert!(matches!(BrokerError::TimedOut, BrokerError::TimedOut));
}
