// Policy `hedged` sets hedge_after: a blocking fn runs one attempt at a
// time and cannot hedge, so the build fails at the function.
use retrykit_core::retry;

#[retry(policy = "hedged")]
fn lookup(key: u32) -> Result<u32, std::io::Error> {
    Ok(key)
}

fn main() {}
