use retrykit_core::retry;

#[retry(policy)]
async fn publish() -> Result<(), std::io::Error> {
    Ok(())
}

fn main() {}
