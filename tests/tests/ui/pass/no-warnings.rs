//! The expansion adds no warnings, whatever the shape of the body.
#![deny(warnings, clippy::all)]
use retry_core::retry;

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

fn main() {
    single_expression().unwrap();
    let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    assert_eq!(rt.block_on(single_expression_async(3)).unwrap(), 3);
    assert_eq!(rt.block_on(mutable_argument(vec![], String::new(), 0)).unwrap(), 1);
    assert_eq!(early_return(true).unwrap(), 1);
}
