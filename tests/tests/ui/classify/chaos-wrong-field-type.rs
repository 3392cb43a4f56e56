use retrykit_core::Classify;

#[derive(Debug, Classify)]
enum BrokerError {
    #[classify(transient)]
    Down,
    #[classify(chaos)]
    Injected(String),
}

fn main() {}
