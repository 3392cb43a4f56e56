//! `#[retry]` on async functions: the body and its arguments across
//! attempts (`&mut self`, by-value arguments, `&mut` borrows, `?` and
//! `From`, generic and unclassified errors), on tokio's paused clock.

mod common;

use common::{ApiError, constant};
use retrykit_core::{Classify, retry};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;
use tests::add_policy;
use tokio::time::Instant;

struct Counter {
    calls: u32,
    seen: Vec<u32>,
}

impl Counter {
    /// Fails until the third call; state set in one attempt is seen by the next.
    #[retry(policy = "async-mut-self")]
    async fn bump(&mut self, succeed_at: u32) -> Result<u32, ApiError> {
        self.calls += 1;
        self.seen.push(self.calls);
        if self.calls < succeed_at {
            return Err(ApiError::Unavailable);
        }
        Ok(self.calls)
    }
}

#[tokio::test(start_paused = true)]
async fn mut_self_method_mutates_state_between_attempts() {
    add_policy("async-mut-self", constant(250, 5));
    let mut counter = Counter {
        calls: 0,
        seen: Vec::new(),
    };
    let start = Instant::now();
    assert_eq!(counter.bump(3).await, Ok(3));
    assert_eq!(counter.seen, [1, 2, 3]);
    assert_eq!(start.elapsed(), Duration::from_millis(500));
}

#[retry(policy = "async-by-value")]
async fn consumes(
    mut items: Vec<u32>,
    label: String,
    attempts: &AtomicU32,
) -> Result<usize, String> {
    items.push(0);
    let owned: String = label; // moves the argument: each attempt has its own
    if attempts.fetch_add(1, Ordering::SeqCst) < 2 {
        return Err(format!("{owned} saw {} items", items.len()));
    }
    Ok(items.len())
}

#[tokio::test(start_paused = true)]
async fn by_value_arguments_are_fresh_for_every_attempt() {
    add_policy("async-by-value", constant(5, 3));
    let attempts = AtomicU32::new(0);
    assert_eq!(consumes(vec![7, 8], "x".to_owned(), &attempts).await, Ok(3));
    assert_eq!(attempts.load(Ordering::SeqCst), 3);
}

/// No `Classify` on `String`: every error counts as transient.
#[retry(policy = "async-unclassified")]
async fn unclassified(attempts: &AtomicU32) -> Result<(), String> {
    attempts.fetch_add(1, Ordering::SeqCst);
    Err("nope".to_owned())
}

#[tokio::test(start_paused = true)]
async fn errors_without_classify_are_transient() {
    add_policy("async-unclassified", constant(10, 4));
    let attempts = AtomicU32::new(0);
    assert!(unclassified(&attempts).await.is_err());
    assert_eq!(attempts.load(Ordering::SeqCst), 4);
}

#[retry(policy = "async-generic")]
async fn generic<E: Classify + Clone>(error: E, attempts: &AtomicU32) -> Result<(), E> {
    attempts.fetch_add(1, Ordering::SeqCst);
    Err(error)
}

#[tokio::test(start_paused = true)]
async fn generic_error_with_classify_bound_is_classified() {
    add_policy("async-generic", constant(10, 4));
    let attempts = AtomicU32::new(0);
    assert!(generic(ApiError::BadRequest, &attempts).await.is_err());
    assert_eq!(attempts.swap(0, Ordering::SeqCst), 1);
    assert!(generic(ApiError::Unavailable, &attempts).await.is_err());
    assert_eq!(attempts.load(Ordering::SeqCst), 4);
}

#[retry(policy = "async-question-mark")]
async fn question_mark(input: &str, attempts: &AtomicU32) -> std::io::Result<u32> {
    attempts.fetch_add(1, Ordering::SeqCst);
    let n: u32 = input
        .parse()
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    Ok(n)
}

#[tokio::test(start_paused = true)]
async fn question_mark_and_aliases_work_in_the_body() {
    add_policy("async-question-mark", constant(10, 5));
    let attempts = AtomicU32::new(0);
    assert_eq!(question_mark("12", &attempts).await.unwrap(), 12);
    // InvalidInput is permanent for io::Error: one attempt.
    assert!(question_mark("x", &attempts).await.is_err());
    assert_eq!(attempts.load(Ordering::SeqCst), 2);
}

#[derive(Debug, PartialEq, Classify)]
enum ParseError {
    #[classify(permanent)]
    NotANumber,
}

impl From<std::num::ParseIntError> for ParseError {
    fn from(_: std::num::ParseIntError) -> Self {
        ParseError::NotANumber
    }
}

#[retry(policy = "async-question-mark")]
async fn parse_with_from(input: &str) -> Result<u32, ParseError> {
    let n: u32 = input.parse()?;
    Ok(n * 2)
}

#[tokio::test(start_paused = true)]
async fn question_mark_converts_with_from() {
    add_policy("async-question-mark", constant(10, 5));
    assert_eq!(parse_with_from("21").await, Ok(42));
    assert_eq!(parse_with_from("x").await, Err(ParseError::NotANumber));
}

#[retry(policy = "async-mut-arg")]
async fn fill(buffer: &mut Vec<u32>) -> Result<usize, ApiError> {
    buffer.push(buffer.len() as u32);
    tokio::task::yield_now().await;
    if buffer.len() < 3 {
        return Err(ApiError::Unavailable);
    }
    Ok(buffer.len())
}

#[tokio::test(start_paused = true)]
async fn mut_reference_argument_keeps_changes_across_attempts() {
    add_policy("async-mut-arg", constant(1, 5));
    let mut buffer = Vec::new();
    assert_eq!(fill(&mut buffer).await, Ok(3));
    assert_eq!(buffer, [0, 1, 2]);
}
