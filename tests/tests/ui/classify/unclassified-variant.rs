use retrykit_core::Classify;

#[derive(Debug, Classify)]
enum FetchError {
    #[classify(transient)]
    Unavailable,
    NotFound,
}

fn main() {}
