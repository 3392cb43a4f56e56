use retrykit_core::retry;

const NAME: &str = "outbox";

#[retry(policy = concat!("out", "box"))]
async fn publish() -> Result<(), std::io::Error> {
    let _ = NAME;
    Ok(())
}

fn main() {}
