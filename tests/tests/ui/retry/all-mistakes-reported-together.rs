use retrykit_core::retry;

struct Fetcher;

impl Fetcher {
    // Every problem is reported in one pass, each at its own token.
    #[retry(policy = "", backof = "exponential")]
    const fn fetch(self) -> Result<u32, ()> {
        Ok(1)
    }
}

fn main() {}
