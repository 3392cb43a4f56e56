use retrykit_core::retry;

// Numbers belong in retry.toml, not in the attribute.
#[retry(policy = "outbox", max_attempts = 5)]
async fn publish() -> Result<(), std::io::Error> {
    Ok(())
}

fn main() {}
