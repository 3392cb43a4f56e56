//! How every warning of the crate is said.

/// Says `message` (a `String` or `&str`) on stderr, seen with no logging set
/// up, and, with `tracing`, as a `warn` event of target `retry` with `fields`.
macro_rules! say_warning {
    ($message:expr $(, $($field:tt)+)?) => {{
        let message = &$message;
        eprintln!("{message}");
        #[cfg(feature = "tracing")]
        tracing::warn!(target: "retry", $($($field)+,)? "{message}");
    }};
}
