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

/// Whether this is the first time `kind` (a breaker, a limit) named `name`
/// meets error type `ty`: a warning about the pair is said once. Bounded:
/// one entry per kind, name and error type in the program.
pub(crate) fn first_time(
    kind: &'static str,
    name: Option<&std::sync::Arc<str>>,
    ty: &'static str,
) -> bool {
    type Seen = Vec<(&'static str, Option<std::sync::Arc<str>>, &'static str)>;
    static SEEN: std::sync::Mutex<Seen> = std::sync::Mutex::new(Vec::new());
    let mut seen = SEEN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let key = (kind, name.cloned(), ty);
    if seen.contains(&key) {
        return false;
    }
    seen.push(key);
    true
}
