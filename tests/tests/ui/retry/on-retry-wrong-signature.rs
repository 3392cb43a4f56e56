use retrykit_core::retry;

fn log_retry(attempt: u32) {
    println!("attempt {attempt}");
}

#[retry(policy = "fetch", on_retry = log_retry)]
async fn fetch() -> Result<u32, std::io::Error> {
    Ok(1)
}

fn main() {}
