use retrykit_core::retry;

#[retry]
async fn publish() -> Result<(), std::io::Error> {
    Ok(())
}

fn main() {}
