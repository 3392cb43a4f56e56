//! Error classes by name: the ones retrykit-core itself produces, and the rule
//! for a name a policy's `retry_on` lists. Classes match exactly, case
//! included, so a name that can never match is an error, not a hint:
//! - a near miss ([`near_miss`]: another case, or one typo) of a known class;
//! - `permanent`, in any case: permanent errors end the call whatever
//!   `retry_on` says.
//!
//! ```
//! use retrykit_schema::classes::{BUILT_IN, Verdict, judge};
//! assert_eq!(judge("throttled", &BUILT_IN), Verdict::Known);
//! assert_eq!(judge("Throttled", &BUILT_IN), Verdict::NearMiss("throttled"));
//! assert_eq!(judge("Permanent", &BUILT_IN), Verdict::NeverRetried);
//! ```

use crate::suggest::{did_you_mean, near_miss};

/// A failure that may go away by itself: a dropped connection, a 503.
///
/// ```
/// assert_eq!(retrykit_schema::classes::TRANSIENT, "transient");
/// ```
pub const TRANSIENT: &str = "transient";

/// The server asked the client to slow down: a 429.
///
/// ```
/// assert_eq!(retrykit_schema::classes::THROTTLED, "throttled");
/// ```
pub const THROTTLED: &str = "throttled";

/// An attempt that ran past the policy's `attempt_timeout`.
///
/// ```
/// assert_eq!(retrykit_schema::classes::TIMEOUT, "timeout");
/// ```
pub const TIMEOUT: &str = "timeout";

/// The name of the class that is never retried, whatever `retry_on` says.
///
/// ```
/// assert_eq!(retrykit_schema::classes::PERMANENT, "permanent");
/// ```
pub const PERMANENT: &str = "permanent";

/// The retryable classes retrykit-core itself produces.
///
/// ```
/// assert!(retrykit_schema::classes::BUILT_IN.contains(&"timeout"));
/// ```
pub const BUILT_IN: [&str; 3] = [TRANSIENT, THROTTLED, TIMEOUT];

/// What a name in `retry_on` means, given the classes known to exist.
///
/// ```
/// use retrykit_schema::classes::{Verdict, judge};
/// assert_eq!(judge("quota", &["transient"]), Verdict::Unknown(None));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict<'a> {
    /// A known class, exactly.
    Known,
    /// `permanent` (in any case): never retried, so listing it is a mistake.
    NeverRetried,
    /// A slip of this known class, which can never match as written.
    NearMiss(&'a str),
    /// Near nothing known; perhaps a class the program declares elsewhere,
    /// with the closest known one as a hint.
    Unknown(Option<String>),
}

/// Judges `name` against the `known` classes (the built-in ones, plus the
/// program's when they are known).
///
/// ```
/// use retrykit_schema::classes::{Verdict, judge};
/// assert_eq!(judge("db", &["transient", "db"]), Verdict::Known);
/// assert_eq!(judge("DB", &["transient", "db"]), Verdict::NearMiss("db"));
/// ```
pub fn judge<'a>(name: &str, known: &[&'a str]) -> Verdict<'a> {
    if known.contains(&name) {
        Verdict::Known
    } else if name.eq_ignore_ascii_case(PERMANENT) {
        Verdict::NeverRetried
    } else if let Some(meant) = near_miss(name, known.iter().copied()) {
        Verdict::NearMiss(meant)
    } else {
        Verdict::Unknown(did_you_mean(name, known.iter().copied()))
    }
}
