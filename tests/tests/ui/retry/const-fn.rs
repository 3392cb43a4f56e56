use retrykit_core::retry;

#[retry(policy = "fetch")]
const fn fetch() -> Result<u32, ()> {
    Ok(1)
}

fn main() {}
