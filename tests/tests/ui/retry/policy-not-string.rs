use retrykit_core::retry;

#[retry(policy = outbox)]
async fn publish() -> Result<(), std::io::Error> {
    Ok(())
}

fn main() {}
