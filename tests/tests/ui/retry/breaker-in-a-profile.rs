// Only the `prod` profile gives policy `guarded-in-prod` a breaker; that is
// enough: an error type without `Classify` cannot stand for a refused attempt.
use retrykit_core::retry;

#[retry(policy = "guarded-in-prod")]
fn fetch() -> Result<u8, String> {
    Ok(1)
}

fn main() {}
