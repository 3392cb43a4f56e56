use retrykit_core::Classify;
use std::time::Duration;

#[derive(Debug, Classify)]
enum FetchError {
    #[classify(class = "throttled", retry_after = wiat)]
    RateLimited { wait: Duration },
}

fn main() {}
