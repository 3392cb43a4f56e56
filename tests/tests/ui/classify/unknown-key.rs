use retrykit_core::Classify;

#[derive(Debug, Classify)]
enum FetchError {
    #[classify(transiet)]
    Unavailable,
}

fn main() {}
