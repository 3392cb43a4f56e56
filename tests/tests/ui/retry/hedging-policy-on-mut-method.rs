// Policy `hedged` sets hedge_after: an async fn taking `&mut self` cannot
// lend it to two attempts at once, so it cannot hedge and the build fails.
use retrykit_core::retry;

struct Cursor(u32);

impl Cursor {
    #[retry(policy = "hedged")]
    async fn next(&mut self) -> Result<u32, std::io::Error> {
        self.0 += 1;
        Ok(self.0)
    }
}

fn main() {}
