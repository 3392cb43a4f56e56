use retrykit_core::retry;

#[retry(policy = "fetch")]
fn fetch() -> Result<impl std::fmt::Display, std::io::Error> {
    Ok(1)
}

fn main() {}
