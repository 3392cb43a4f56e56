use retrykit_core::Classify;
use std::time::Duration;

#[derive(Debug, Classify)]
enum FetchError {
    #[classify(permanent, retry_after = wait)]
    Banned { wait: Duration },
}

fn main() {}
