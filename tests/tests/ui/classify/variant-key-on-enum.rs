use retrykit_core::Classify;

#[derive(Debug, Classify)]
#[classify(transient)]
enum FetchError {
    Unavailable,
}

fn main() {}
