use retrykit_core::retry;

trait Fetch {
    #[retry(policy = "fetch")]
    fn fetch(&self) -> Result<u32, std::io::Error>;
}

fn main() {}
