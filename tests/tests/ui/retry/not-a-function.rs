use retrykit_core::retry;

#[retry(policy = "fetch")]
struct Fetcher {
    url: String,
}

fn main() {}
