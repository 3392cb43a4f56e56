//! The limits a load enforces, in one place. A policy file is a few
//! kilobytes; these bound what a file within [`MAX_FILE_BYTES`](crate::MAX_FILE_BYTES)
//! can ask of the loader (its time and memory), far beyond any real file.
//! Each is checked before the work it bounds, and going past it is an error
//! that names the limit and the fix.

/// The most policies a file may define (`[policies.NAME]` tables): past it
/// the file is refused before any policy is read. Every policy is resolved
/// once per profile, so this bounds the cost of a load and of `check`.
///
/// ```
/// let text: String = (0..=retrykit_config::MAX_POLICIES).map(|i| format!("[policies.p{i}]\n")).collect();
/// let err = retrykit_config::Config::load_str(&text, "f", &Default::default()).unwrap_err();
/// assert!(err.to_string().contains("at most 10000"));
/// ```
pub const MAX_POLICIES: usize = 10_000;

/// The most budgets a file may define (`[budgets.NAME]` tables), checked like
/// [`MAX_POLICIES`].
///
/// ```
/// assert_eq!(retrykit_config::MAX_BUDGETS, 10_000);
/// ```
pub const MAX_BUDGETS: usize = 10_000;

/// The most circuit breakers a file may define (`[breakers.NAME]` tables),
/// checked like [`MAX_POLICIES`].
///
/// ```
/// let text: String = (0..=retrykit_config::MAX_BREAKERS).map(|i| format!("[breakers.b{i}]\n")).collect();
/// let err = retrykit_config::Config::load_str(&text, "f", &Default::default()).unwrap_err();
/// assert!(err.to_string().contains("defines 10001 breakers, but a file may define at most 10000"));
/// ```
pub const MAX_BREAKERS: usize = 10_000;

/// The most concurrency limits a file may define (`[limits.NAME]` tables),
/// checked like [`MAX_POLICIES`].
///
/// ```
/// let text: String = (0..=retrykit_config::MAX_LIMITS).map(|i| format!("[limits.l{i}]\nmax_in_flight = 1\n")).collect();
/// let err = retrykit_config::Config::load_str(&text, "f", &Default::default()).unwrap_err();
/// assert!(err.to_string().contains("defines 10001 limits, but a file may define at most 10000"));
/// ```
pub const MAX_LIMITS: usize = 10_000;

/// The most profiles a file may define: `check` resolves every policy once
/// per profile, so this and [`MAX_POLICIES`] bound its work.
///
/// ```
/// assert_eq!(retrykit_config::MAX_PROFILES, 100);
/// ```
pub const MAX_PROFILES: usize = 100;

/// The most distinct class names a file's `retry_on` lists may name, all
/// policies, `[defaults]` and profiles together: past it the file is refused
/// (one error, at the list that goes past it) before any policy is read.
///
/// ```
/// let classes: Vec<String> = (0..=retrykit_config::MAX_CLASSES).map(|i| format!("\"c{i}\"")).collect();
/// let text = format!("[policies.a]\nretry_on = [{}]\n", classes.join(", "));
/// let err = retrykit_config::Config::load_str(&text, "f", &Default::default()).unwrap_err();
/// assert!(err.to_string().contains("more than 1000 distinct classes"));
/// ```
pub const MAX_CLASSES: usize = 1_000;

/// The deepest `extends` chain: a policy may have at most this many
/// ancestors. A policy past it is an error (once, at its `extends`) before
/// any chain is resolved.
///
/// ```
/// let mut text = String::from("[policies.p0]\n");
/// for i in 1..=retrykit_config::MAX_EXTENDS_DEPTH + 1 {
///     text.push_str(&format!("[policies.p{i}]\nextends = \"p{}\"\n", i - 1));
/// }
/// let err = retrykit_config::Config::load_str(&text, "f", &Default::default()).unwrap_err();
/// assert!(err.to_string().contains("at most 32"));
/// ```
pub const MAX_EXTENDS_DEPTH: usize = 32;

/// The most diagnostics [`Diagnostics::render`](crate::Diagnostics::render)
/// (what `init` and `retry-policy check` print) and `Display` show: past it
/// one line says how many more there are and that `retry-policy check --all`
/// prints every one. Every diagnostic is still returned
/// ([`Diagnostics::iter`](crate::Diagnostics::iter)); this bounds the output.
///
/// ```
/// assert_eq!(retrykit_config::MAX_SHOWN_DIAGNOSTICS, 50);
/// ```
pub const MAX_SHOWN_DIAGNOSTICS: usize = 50;
