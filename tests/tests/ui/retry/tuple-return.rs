use retrykit_core::retry;

#[retry(policy = "fetch")]
fn fetch() -> (u32, bool) {
    (1, true)
}

fn main() {}
