//! How retry-core says a warning: on stderr, where it is seen with no
//! logging set up, and, with the `tracing` feature, as a `warn` event of
//! target `retry`. Every warning the crate gives goes through here.

/// Says `message` (a `String` or `&str`) on stderr and, with the `tracing`
/// feature, as a `warn` event of target `retry` with the given fields.
macro_rules! say_warning {
    ($message:expr $(, $($field:tt)+)?) => {{
        let message = &$message;
        eprintln!("{message}");
        #[cfg(feature = "tracing")]
        tracing::warn!(target: "retry", $($($field)+,)? "{message}");
    }};
}
