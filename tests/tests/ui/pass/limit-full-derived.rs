// A derived error type stands for a concurrency limit's refusal with a
// `#[classify(limit_full)]` variant: a unit one, or one holding the
// `LimitFull`; its class is permanent. A call that gets no permit in time
// ends with it.
use retrykit_core::limit::{ConcurrencyLimit, LimitFull};
use retrykit_core::{Class, Classify, Ending, Policy, Retry};
use std::sync::Arc;

#[derive(Debug, Classify)]
enum DbError {
    #[classify(transient)]
    Down,
    #[classify(limit_full)]
    Busy { full: LimitFull },
}

#[derive(Debug, Classify)]
#[classify(default = "transient")]
enum CacheError {
    Miss,
    #[classify(limit_full)]
    Full,
}

fn main() {
    let full = LimitFull::new(Some("db"), 4);
    let busy = DbError::from_limit_full(full.clone()).unwrap();
    assert!(matches!(&busy, DbError::Busy { full: f } if f == &full));
    assert_eq!(busy.class(), Class::Permanent);
    assert_eq!(DbError::Down.class(), Class::TRANSIENT);
    assert!(matches!(CacheError::from_limit_full(full), Some(CacheError::Full)));
    assert_eq!(CacheError::Full.class(), Class::Permanent);
    assert_eq!(CacheError::Miss.class(), Class::TRANSIENT);

    let limit = Arc::new(ConcurrencyLimit::fixed(1, None, 0).unwrap());
    let policy = Policy::builder().limit(Some(Arc::clone(&limit))).build().unwrap();
    let _held = limit.try_acquire().unwrap();
    let (result, report) =
        Retry::blocking(&policy).call_blocking_with_report(|| Ok::<_, DbError>(()));
    assert!(matches!(result, Err(DbError::Busy { .. })));
    assert_eq!((report.ending, report.attempts), (Ending::LimitFull, 0));
}
