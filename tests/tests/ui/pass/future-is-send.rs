//! The annotated future is `Send` whenever the function's would be.
use retrykit_core::{Classify, retry};
use std::sync::Mutex;

#[derive(Debug, Classify)]
#[classify(transient)]
struct Busy;

struct Client {
    hits: Mutex<u32>,
    buffer: Vec<u8>,
}

#[retry(policy = "fetch")]
async fn free(id: u32, name: String, tag: &str) -> Result<String, Busy> {
    tokio::task::yield_now().await;
    Ok(format!("{id}{name}{tag}"))
}

impl Client {
    #[retry(policy = "fetch")]
    async fn shared(&self, key: &str) -> Result<usize, Busy> {
        *self.hits.lock().unwrap() += 1;
        tokio::task::yield_now().await;
        Ok(key.len())
    }

    #[retry(policy = "fetch")]
    async fn exclusive(&mut self, bytes: Vec<u8>) -> Result<usize, std::io::Error> {
        tokio::task::yield_now().await;
        self.buffer.extend(bytes);
        Ok(self.buffer.len())
    }
}

/// No `Classify`: still `Send`.
#[retry(policy = "fetch")]
async fn unclassified(cell: std::cell::Cell<u32>) -> Result<u32, String> {
    tokio::task::yield_now().await;
    Ok(cell.get())
}

/// `Send` but not `Sync`: the plain `&mut self` future is `Send`, and so
/// must the annotated one be, even when the body only reads the field.
struct Session {
    seen: std::cell::RefCell<Vec<u8>>,
}

impl Session {
    #[retry(policy = "fetch")]
    async fn peek(&mut self, scratch: &mut std::cell::Cell<u8>) -> Result<usize, Busy> {
        let n = self.seen.borrow().len() + usize::from(scratch.get());
        tokio::task::yield_now().await;
        Ok(n + self.seen.borrow().len())
    }
}

/// A `!Send` error (`Box<dyn Error>`) is never held across an await by the
/// loop, so the future stays `Send` as the plain one is.
#[retry(policy = "fetch")]
async fn boxed_error(n: u32) -> Result<u32, Box<dyn std::error::Error>> {
    tokio::task::yield_now().await;
    if n == 0 {
        return Err("zero".into());
    }
    Ok(n)
}

fn assert_send<T: Send>(_: &T) {}

fn main() {
    let mut client = Client { hits: Mutex::new(0), buffer: Vec::new() };
    assert_send(&free(1, String::new(), "x"));
    assert_send(&client.shared("k"));
    assert_send(&client.exclusive(vec![1]));
    assert_send(&unclassified(std::cell::Cell::new(1)));
    let mut session = Session { seen: std::cell::RefCell::new(vec![1]) };
    let mut scratch = std::cell::Cell::new(0);
    assert_send(&session.peek(&mut scratch));
    assert_send(&boxed_error(1));
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_time().build().unwrap();
    let handle = rt.spawn(async move { client.exclusive(vec![1, 2]).await.unwrap() });
    assert_eq!(rt.block_on(handle).unwrap(), 2);
}
