use retrykit_core::Classify;

#[derive(Debug, Classify)]
enum DbError {
    #[classify(transient)]
    Down,
    #[classify(breaker_open, limit_full)]
    Refused,
}

fn main() {}
