use retrykit_core::Classify;

#[derive(Debug, Classify)]
enum FetchError {
    #[classify(class = "throttled", retry_after = seconds)]
    RateLimited { seconds: u64 },
}

fn main() {}
