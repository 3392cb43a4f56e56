use retrykit_core::retry;

#[retry(policy = "fetch", retry_if = |_e| true)]
async fn fetch() -> Result<u32, std::io::Error> {
    Ok(1)
}

fn main() {}
