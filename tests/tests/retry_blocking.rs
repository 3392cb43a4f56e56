//! `#[retry]` on plain functions: the blocking loop. Waits are a few
//! microseconds of real time, so nothing here sleeps noticeably.

use retrykit_core::{Backoff, Classify, Jitter, Policy, retry};
use std::cell::Cell;
use std::time::Duration;
use tests::add_policy;

fn tiny(attempts: u32) -> Policy {
    Policy::builder()
        .backoff(Backoff::Constant)
        .base(Duration::from_micros(1))
        .jitter(Jitter::None)
        .max_attempts(attempts)
        .build()
        .unwrap()
}

#[derive(Debug, PartialEq, Classify)]
enum DbError {
    #[classify(transient)]
    Busy,
    #[classify(permanent)]
    Constraint,
}

const FLAKY_LINE: u32 = line!() + 1;
#[retry(policy = "blocking-counts")]
fn flaky(calls: &Cell<u32>, succeed_at: u32) -> Result<u32, DbError> {
    calls.set(calls.get() + 1);
    if calls.get() < succeed_at {
        return Err(DbError::Busy);
    }
    Ok(calls.get())
}

#[test]
fn blocking_fn_retries_up_to_max_attempts() {
    add_policy("blocking-counts", tiny(4));
    let calls = Cell::new(0);
    assert_eq!(flaky(&calls, 3), Ok(3));
    let calls = Cell::new(0);
    assert_eq!(flaky(&calls, 10), Err(DbError::Busy));
    assert_eq!(calls.get(), 4);
}

#[retry(policy = "blocking-permanent")]
fn constraint(calls: &Cell<u32>) -> Result<(), DbError> {
    calls.set(calls.get() + 1);
    Err(DbError::Constraint)
}

#[test]
fn blocking_permanent_error_is_not_retried() {
    add_policy("blocking-permanent", tiny(4));
    let calls = Cell::new(0);
    assert_eq!(constraint(&calls), Err(DbError::Constraint));
    assert_eq!(calls.get(), 1);
}

struct Store {
    writes: Vec<String>,
}

impl Store {
    #[retry(policy = "blocking-method")]
    fn write(&mut self, (key, value): (String, u32)) -> Result<usize, DbError> {
        self.writes.push(format!("{key}={value}"));
        if self.writes.len() < 2 {
            Err(DbError::Busy)
        } else {
            Ok(self.writes.len())
        }
    }
}

#[test]
fn blocking_method_with_destructured_argument() {
    add_policy("blocking-method", tiny(3));
    let mut store = Store { writes: Vec::new() };
    assert_eq!(store.write(("a".into(), 1)), Ok(2));
    assert_eq!(store.writes, ["a=1", "a=1"]);
}

#[test]
fn call_sites_register_policy_file_line_and_function() {
    let site = retrykit_core::__private::loader::call_sites()
        .find(|site| site.policy == "blocking-counts")
        .expect("the call site is registered");
    assert!(site.file.ends_with("retry_blocking.rs"), "{site:?}");
    assert_eq!(site.line, FLAKY_LINE);
    assert_eq!(site.function, "retry_blocking::flaky");
    let policies: Vec<&str> = retrykit_core::__private::loader::call_sites()
        .map(|s| s.policy)
        .collect();
    for name in ["blocking-counts", "blocking-permanent", "blocking-method"] {
        assert!(policies.contains(&name), "{name} missing from {policies:?}");
    }
}
