use retry_core::retry;

#[retry]
async fn publish() -> Result<(), std::io::Error> {
    Ok(())
}

fn main() {}
