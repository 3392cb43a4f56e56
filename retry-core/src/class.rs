//! The classes a failure can be in, shared by classification, `retry_on`
//! and `trip_on`.

/// What kind of failure an error is.
///
/// # Examples
///
/// ```
/// use retrykit_core::Class;
/// assert!(Class::TRANSIENT.is_retryable());
/// assert_eq!(Class::THROTTLED.name(), "throttled");
/// assert!(!Class::Permanent.is_retryable());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Class {
    /// Never retried, whatever the policy says.
    Permanent,
    /// Retryable, in the named class (matched against a policy's `retry_on`).
    Retryable(&'static str),
}

impl Class {
    /// A failure that may go away by itself: a dropped connection, a 503.
    pub const TRANSIENT: Class = Class::Retryable(retrykit_schema::classes::TRANSIENT);
    /// The server asked the client to slow down: a 429.
    pub const THROTTLED: Class = Class::Retryable(retrykit_schema::classes::THROTTLED);
    /// An attempt that ran past the policy's `attempt_timeout`.
    pub const TIMEOUT: Class = Class::Retryable(retrykit_schema::classes::TIMEOUT);

    /// The class name; `"permanent"` for [`Class::Permanent`].
    pub const fn name(&self) -> &'static str {
        match self {
            Class::Permanent => retrykit_schema::classes::PERMANENT,
            Class::Retryable(name) => name,
        }
    }

    /// Whether the error may be retried at all.
    pub const fn is_retryable(&self) -> bool {
        matches!(self, Class::Retryable(_))
    }
}
