use retrykit_core::Classify;

#[derive(Debug, Classify)]
enum BrokerError {
    #[classify(transient, breaker_open)]
    Refused,
}

fn main() {}
