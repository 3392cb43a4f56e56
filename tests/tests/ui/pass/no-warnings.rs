//! The expansion adds no warnings, whatever the shape of the body.
#![deny(warnings, clippy::all)]
use retrykit_core::{Classify, retry};
use std::time::Duration;

/// Every kind of variant the derive handles.
#[derive(Debug, Classify)]
#[classify(default = "transient")]
pub enum Everything {
    Unit,
    #[classify(permanent)]
    Tuple(u8),
    #[classify(class = "throttled", retry_after = wait)]
    Named { wait: Duration, code: u16 },
    #[classify(source)]
    Io(std::io::Error),
    #[classify(timeout)]
    TimedOut,
}

/// A struct with a hint.
#[derive(Debug, Classify)]
#[classify(class = "throttled", retry_after = 0)]
pub struct Limited(Option<Duration>);

#[retry(policy = "fetch")]
fn single_expression() -> Result<(), std::io::Error> {
    Ok(())
}

#[retry(policy = "fetch")]
async fn single_expression_async(id: u32) -> Result<u32, std::io::Error> {
    Ok(id)
}

#[retry(policy = "fetch")]
async fn mutable_argument(mut items: Vec<u8>, _ignored: String, _: u8) -> Result<usize, String> {
    items.push(1);
    Ok(items.len())
}

#[retry(policy = "fetch")]
fn early_return(flag: bool) -> Result<u8, std::io::Error> {
    if flag {
        return Ok(1);
    }
    Err(std::io::ErrorKind::NotFound.into())
}

/// `retry_on` without `transient` is fine for an error type that classifies itself.
#[retry(policy = "throttled-only")]
fn classified(flag: bool) -> Result<bool, std::io::Error> {
    Ok(flag)
}

/// A generic error with the bound.
#[retry(policy = "throttled-only")]
fn generic<E: Classify>(fail: bool, error: fn() -> E) -> Result<u8, E> {
    if fail { Err(error()) } else { Ok(3) }
}

fn main() {
    assert!(classified(true).unwrap());
    assert_eq!(generic(false, || std::io::Error::other("x")).unwrap(), 3);
    assert!(Everything::Unit.class().is_retryable());
    assert!(!Everything::Tuple(1).class().is_retryable());
    assert_eq!(Everything::Named { wait: Duration::ZERO, code: 429 }.retry_after(), Some(Duration::ZERO));
    assert!(Everything::Io(std::io::ErrorKind::TimedOut.into()).class().is_retryable());
    assert_eq!(Everything::TimedOut.class().name(), "timeout");
    assert_eq!(Limited(None).retry_after(), None);
    single_expression().unwrap();
    let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    assert_eq!(rt.block_on(single_expression_async(3)).unwrap(), 3);
    assert_eq!(rt.block_on(mutable_argument(vec![], String::new(), 0)).unwrap(), 1);
    assert_eq!(early_return(true).unwrap(), 1);
}
