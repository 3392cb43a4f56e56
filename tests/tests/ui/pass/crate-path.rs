//! `crate = "..."` for crates that re-export retrykit-core.
mod reexport {
    pub use retrykit_core::*;
}

#[reexport::retry(policy = "fetch", crate = "crate::reexport")]
fn fetch() -> Result<u32, std::io::Error> {
    Ok(1)
}

#[derive(Debug, reexport::Classify)]
#[classify(crate = "crate::reexport", default = "transient")]
enum FetchError {
    Unavailable,
}

fn main() {
    use reexport::Classify as _;
    assert_eq!(fetch().unwrap(), 1);
    assert_eq!(FetchError::Unavailable.class(), reexport::Class::TRANSIENT);
}
