use retrykit_core::retry;

#[retry(policy = "outbox", policy = "db")]
async fn publish() -> Result<(), std::io::Error> {
    Ok(())
}

fn main() {}
