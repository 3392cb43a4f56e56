use retrykit_core::Classify;

#[derive(Debug, Classify)]
enum FetchError {
    #[classify(permanent, class = "throttled")]
    RateLimited,
}

fn main() {}
