use retrykit_core::retry;

fn transient_only(_: &std::io::Error) -> bool {
    true
}

#[retry(policy = "outbox", retry_iff = transient_only)]
async fn publish() -> Result<(), std::io::Error> {
    Ok(())
}

fn main() {}
