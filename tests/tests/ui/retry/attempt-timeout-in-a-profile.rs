// Only the `prod` profile gives policy `timed-in-prod` an attempt_timeout;
// that profile may be the one selected at run time, so an error type that
// cannot carry a timeout (here, one without `Classify`) fails the build.
use retrykit_core::retry;

#[retry(policy = "timed-in-prod")]
fn query() -> Result<(), String> {
    Ok(())
}

fn main() {}
