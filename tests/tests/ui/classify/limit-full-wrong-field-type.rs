use retrykit_core::Classify;

#[derive(Debug, Classify)]
enum DbError {
    #[classify(transient)]
    Down,
    #[classify(limit_full)]
    Busy(String),
}

fn main() {}
