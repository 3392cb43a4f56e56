use retrykit_core::Classify;

#[derive(Debug, Classify)]
enum FetchError {
    #[classify(default = "transient")]
    Unavailable,
}

fn main() {}
