use retrykit_core::retry;

#[retry(policy = "fetch")]
fn fetch() {
    println!("fetching");
}

fn main() {}
