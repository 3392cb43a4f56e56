use retrykit_core::retry;

// tests/ui/retry.toml: [policies.throttled-only] retry_on = ["throttled"]
#[retry(policy = "throttled-only")]
async fn publish(message: &str) -> Result<(), String> {
    Err(format!("could not publish {message}"))
}

fn main() {}
