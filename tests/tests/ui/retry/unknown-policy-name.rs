use retrykit_core::retry;

// tests/ui/retry.toml defines `outbox`, `db` and `fetch`.
#[retry(policy = "outbx")]
async fn publish() -> Result<(), std::io::Error> {
    Ok(())
}

fn main() {}
