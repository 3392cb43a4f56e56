use retrykit_core::retry;

#[retry(policy = "fetch")]
async fn fetch() -> Option<u32> {
    Some(1)
}

fn main() {}
