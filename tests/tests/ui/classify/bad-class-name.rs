use retrykit_core::Classify;

#[derive(Debug, Classify)]
enum FetchError {
    #[classify(class = "Rate Limited")]
    RateLimited,
}

fn main() {}
