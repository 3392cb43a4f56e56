//! Cross-crate integration tests (in `tests/tests/`) and the compile-fail
//! suite for `#[retry]` and `#[derive(Classify)]` (in `tests/tests/ui/`).
//!
//! This library holds only what several test files share.
//!
//! ```
//! let reg = tests::registry_with(&[("doc", retrykit_core::Policy::default())]);
//! assert!(reg.policy("doc").is_some());
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use retrykit_core::{Policy, Registry};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// A registry holding `policies` under their names.
///
/// ```
/// let reg = tests::registry_with(&[]);
/// assert_eq!(reg.policy_names().count(), 0);
/// ```
pub fn registry_with(policies: &[(&str, Policy)]) -> Registry {
    policies
        .iter()
        .fold(Registry::builder(), |b, (name, p)| {
            b.policy(name, p.clone())
        })
        .build()
}

/// Adds (or replaces) one policy in the process-wide registry, keeping every
/// other policy and budget: tests in one binary run in parallel, each with
/// its own policy names, and must not remove each other's. Every policy is
/// made anew (a new `Arc`) in the new registry.
///
/// ```
/// tests::add_policy("doc-add", retrykit_core::Policy::default());
/// assert!(retrykit_core::registry::policy("doc-add").is_some());
/// ```
pub fn add_policy(name: &str, policy: Policy) {
    add_policy_held(&no_reloads(), name, policy);
}

/// Keeps every other test of this binary from reloading the registry (with
/// [`add_policy`]) until the guard is dropped: for a test that counts the
/// holders of the registry's current policy, which a reload replaces.
/// Install with [`add_policy_held`] while holding it.
///
/// ```
/// let held = tests::no_reloads();
/// tests::add_policy_held(&held, "doc-held", retrykit_core::Policy::default());
/// assert!(retrykit_core::registry::policy("doc-held").is_some());
/// ```
pub fn no_reloads() -> MutexGuard<'static, ()> {
    static RELOADS: Mutex<()> = Mutex::new(());
    RELOADS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// [`add_policy`] by the test holding `held` (from [`no_reloads`]).
pub fn add_policy_held(held: &MutexGuard<'static, ()>, name: &str, policy: Policy) {
    let _ = held;
    let current = retrykit_core::registry::current();
    let mut builder = Registry::builder();
    for existing in current.policy_names() {
        if existing != name
            && let Some(p) = current.policy(existing)
        {
            builder = builder.policy(existing, Policy::clone(p));
        }
    }
    for budget in current.budget_names() {
        if let Some(b) = current.budget(budget) {
            builder = builder.shared_budget(budget, b.clone());
        }
    }
    retrykit_core::registry::install(builder.policy(name, policy).build());
}

/// The target directory that tests building scratch crates with cargo
/// share (`target/tests/retry-rebuild`, next to trybuild's), so retrykit-core is
/// compiled once for all of them. Found from the running test binary
/// (`target/debug/deps/<test>-<hash>`).
///
/// ```
/// assert!(tests::scratch_target_dir().ends_with("tests/retry-rebuild"));
/// ```
pub fn scratch_target_dir() -> std::path::PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    let target = exe
        .ancestors()
        .nth(3)
        .unwrap_or(std::path::Path::new("target"));
    target.join("tests").join("retry-rebuild")
}
