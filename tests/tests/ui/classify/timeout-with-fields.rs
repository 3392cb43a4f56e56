use retrykit_core::Classify;
use std::time::Duration;

#[derive(Debug, Classify)]
enum FetchError {
    #[classify(timeout)]
    TimedOut { after: Duration },
}

fn main() {}
