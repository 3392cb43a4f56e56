use retrykit_core::retry;

#[retry(policy = "fetch", crate = "retry core")]
async fn fetch() -> Result<u32, std::io::Error> {
    Ok(1)
}

fn main() {}
