use retrykit_core::Classify;

#[derive(Debug, Classify)]
enum FetchError {
    #[classify(timeout)]
    ConnectTimeout,
    #[classify(timeout)]
    ReadTimeout,
}

fn main() {}
