use retrykit_core::Classify;
use retrykit_core::limit::LimitFull;

#[derive(Debug, Classify)]
enum DbError {
    #[classify(limit_full)]
    Busy(LimitFull),
    #[classify(limit_full, permanent)]
    Full,
}

fn main() {}
