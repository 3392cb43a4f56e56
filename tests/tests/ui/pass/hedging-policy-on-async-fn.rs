//! A hedging policy (`hedge_after`) on an async fn compiles with the
//! hedged loop, and the call site says so.
use retrykit_core::retry;

#[retry(policy = "hedged")]
async fn lookup(key: u32) -> Result<u32, std::io::Error> {
    Ok(key)
}

fn main() {
    let site = retrykit_core::__private::loader::call_sites().find(|s| s.policy == "hedged").unwrap();
    assert!(!site.blocking && site.hedged);
    let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    assert_eq!(rt.block_on(lookup(7)).unwrap(), 7);
}
