//! Methods of trait implementations, async ones included.
use retrykit_core::retry;

trait Store {
    fn get(&self, key: u32) -> Result<u32, std::io::Error>;
    fn put(&mut self, key: u32) -> impl std::future::Future<Output = Result<(), std::io::Error>> + Send;
}

struct Memory(Vec<u32>);

impl Store for Memory {
    #[retry(policy = "db")]
    fn get(&self, key: u32) -> Result<u32, std::io::Error> {
        self.0.get(key as usize).copied().ok_or_else(|| std::io::ErrorKind::NotFound.into())
    }

    #[retry(policy = "db")]
    async fn put(&mut self, key: u32) -> Result<(), std::io::Error> {
        self.0.push(key);
        Ok(())
    }
}

fn main() {
    let mut m = Memory(vec![5]);
    assert_eq!(m.get(0).unwrap(), 5);
    let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    rt.block_on(m.put(6)).unwrap();
    assert_eq!(m.get(1).unwrap(), 6);
}
