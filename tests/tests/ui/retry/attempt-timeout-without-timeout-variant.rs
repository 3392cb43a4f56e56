// Policy `timed` sets attempt_timeout, but BrokerError has no variant for a
// timed-out attempt: the timeout could never be enforced, so the build fails
// at the return type.
use retrykit_core::{Classify, retry};

#[derive(Debug, Classify)]
enum BrokerError {
    #[classify(transient)]
    Unavailable,
}

#[retry(policy = "timed")]
async fn publish() -> Result<(), BrokerError> {
    Err(BrokerError::Unavailable)
}

fn main() {}
