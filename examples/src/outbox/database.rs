//! Waiting out a database that is away, and why a relay stops: the
//! relay's plumbing, apart from its publishing.

use super::store::StoreError;
use retrykit_core::{Class, Classify, Hooks, Policy, Retry, RetryEvent};
use std::time::Duration;

/// Runs `op` (connecting to the outbox, say) and, while it fails because
/// the database is unavailable, runs it again: every 50 ms at first, backing
/// off to a second, for up to a minute, with a warning naming `who` and
/// `what` for each retry. Any other error, or the last, is returned.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use examples::outbox::{SqliteStore, StoreError, while_database_unavailable};
/// let store = while_database_unavailable("relay-1", "opening the outbox", || async {
///     Ok::<_, StoreError>(SqliteStore::open_in_memory()?)
/// })
/// .await
/// .unwrap();
/// assert_eq!(store.counts(0).unwrap().total(), 0);
/// # }
/// ```
pub async fn while_database_unavailable<T, E, F, Fut>(who: &str, what: &str, op: F) -> Result<T, E>
where
    E: Classify + std::fmt::Display,
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    retry_database(&default_database_retry(), who, what, op).await
}

pub(super) async fn retry_database<T, E, F, Fut>(
    policy: &Policy,
    who: &str,
    what: &str,
    op: F,
) -> Result<T, E>
where
    E: Classify + std::fmt::Display,
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    // Says, for each retry, what failed and when the relay tries again.
    let warn = move |e: &RetryEvent<'_, E>| {
        eprintln!(
            "warning: {who}: {what} failed ({}); retrying in {} ms",
            e.error,
            e.wait.as_millis()
        );
    };
    Retry::new(policy)
        .hooks(Hooks::new().on_retry(warn))
        .call(op)
        .await
}

/// While the database is away: retry every 50 ms at first, backing off to
/// a second, for up to a minute, then give up with the error. (Built here,
/// not in retry.toml: it guards the demo's own plumbing, and a write-back
/// shortens its deadline to the lease that is left.)
pub(super) fn default_database_retry() -> Policy {
    Policy::builder()
        .name("outbox-database")
        .base(Duration::from_millis(50))
        .cap(Duration::from_secs(1))
        .max_attempts(0)
        .deadline(Some(Duration::from_secs(60)))
        .build()
        .unwrap_or_default()
}

/// Why the relay stopped.
///
/// ```
/// let e = examples::outbox::RelayError::MissingPolicy("outbox");
/// assert!(e.to_string().contains("outbox"));
/// ```
#[derive(Debug)]
pub enum RelayError {
    /// The registry has no policy of that name.
    MissingPolicy(&'static str),
    /// The database failed.
    Db(StoreError),
}

impl std::fmt::Display for RelayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RelayError::MissingPolicy(name) => write!(
                f,
                "no retry policy named `{name}` is loaded; add [policies.{name}] to retry.toml"
            ),
            RelayError::Db(e) => write!(f, "outbox database: {e}"),
        }
    }
}

impl std::error::Error for RelayError {}

/// A database that is away is worth waiting for; a missing policy is not.
impl Classify for RelayError {
    fn class(&self) -> Class {
        match self {
            RelayError::Db(e) => e.class(),
            RelayError::MissingPolicy(_) => Class::Permanent,
        }
    }
}

impl From<StoreError> for RelayError {
    fn from(e: StoreError) -> Self {
        RelayError::Db(e)
    }
}

impl From<rusqlite::Error> for RelayError {
    fn from(e: rusqlite::Error) -> Self {
        RelayError::Db(StoreError::Sqlite(e))
    }
}
