// Policy `guarded` names breaker `broker`, but BrokerError has no variant for
// an attempt the breaker refused: the breaker could never hold its attempts
// back, so the build fails at the return type.
use retrykit_core::{Classify, retry};

#[derive(Debug, Classify)]
enum BrokerError {
    #[classify(transient)]
    Unavailable,
}

#[retry(policy = "guarded")]
async fn publish() -> Result<(), BrokerError> {
    Err(BrokerError::Unavailable)
}

fn main() {}
