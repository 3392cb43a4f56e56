//! Docs, visibility and other attributes stay on the function.
#![deny(missing_docs, unused_must_use)]
use retrykit_core::retry;

/// Documented, and `#[must_use]` still applies.
#[must_use = "the count matters"]
#[retry(policy = "fetch")]
#[inline]
pub fn count(items: &[u8]) -> Result<usize, std::io::Error> {
    Ok(items.len())
}

/// A module whose function keeps its `pub(crate)` visibility.
pub mod inner {
    /// Crate-visible.
    #[retrykit_core::retry(policy = "fetch")]
    pub(crate) fn visible() -> Result<(), ()> {
        Ok(())
    }
}

fn main() {
    let n = count(&[1, 2]).unwrap();
    assert_eq!(n, 2);
    inner::visible().unwrap();
}
