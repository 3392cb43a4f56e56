use retrykit_core::retry;

fn is_retryable(message: &String) -> bool {
    message.contains("again")
}

#[retry(policy = "fetch", retry_if = is_retryable)]
async fn fetch() -> Result<u32, std::io::Error> {
    Ok(1)
}

fn main() {}
