//! A `&mut self` method that changes state in one attempt and reads it in the next.
use retrykit_core::{Classify, retry};

#[derive(Debug, Classify)]
enum SendError {
    #[classify(transient)]
    Busy,
}

struct Outbox {
    pending: Vec<&'static str>,
    tries: u32,
}

impl Outbox {
    #[retry(policy = "outbox")]
    async fn flush(&mut self) -> Result<usize, SendError> {
        self.tries += 1;
        if self.tries == 1 {
            self.pending.push("retried");
            return Err(SendError::Busy);
        }
        let sent = self.pending.len();
        self.pending.clear();
        Ok(sent)
    }

    #[retry(policy = "outbox")]
    fn flush_blocking(&mut self) -> Result<usize, SendError> {
        self.tries += 1;
        if self.tries % 2 == 1 {
            return Err(SendError::Busy);
        }
        Ok(self.tries as usize)
    }
}

fn main() {
    retrykit_core::registry::install(
        retrykit_core::Registry::builder()
            .policy("outbox", retrykit_core::Policy::builder().base(std::time::Duration::from_micros(1)).build().unwrap())
            .build(),
    );
    let mut outbox = Outbox { pending: vec!["a"], tries: 0 };
    let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    assert_eq!(rt.block_on(outbox.flush()).unwrap(), 2);
    assert_eq!(outbox.tries, 2);
    assert_eq!(outbox.flush_blocking().unwrap(), 4);
}
