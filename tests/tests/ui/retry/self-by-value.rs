use retrykit_core::retry;

struct Request;

impl Request {
    #[retry(policy = "fetch")]
    async fn send(self) -> Result<(), std::io::Error> {
        Ok(())
    }
}

fn main() {}
