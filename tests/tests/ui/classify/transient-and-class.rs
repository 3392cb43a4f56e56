use retrykit_core::Classify;

#[derive(Debug, Classify)]
enum FetchError {
    #[classify(transient)]
    #[classify(class = "throttled")]
    RateLimited,
}

fn main() {}
