use retrykit_core::retry;

fn always(_: &std::io::Error) -> bool {
    true
}

#[retry(retry_if = always)]
async fn publish() -> Result<(), std::io::Error> {
    Ok(())
}

fn main() {}
