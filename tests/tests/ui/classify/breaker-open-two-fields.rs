use retrykit_core::Classify;
use retrykit_core::breaker::BreakerOpen;

#[derive(Debug, Classify)]
enum BrokerError {
    #[classify(breaker_open)]
    Refused { open: BreakerOpen, queue: String },
}

fn main() {}
