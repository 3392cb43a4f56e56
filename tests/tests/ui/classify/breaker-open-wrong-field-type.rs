use retrykit_core::Classify;

#[derive(Debug, Classify)]
enum BrokerError {
    #[classify(transient)]
    Down,
    #[classify(breaker_open)]
    Refused(String),
}

fn main() {}
