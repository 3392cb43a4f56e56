use retrykit_core::retry;

struct Cache {
    entries: Vec<String>,
}

impl Cache {
    #[retry(policy = "db")]
    fn newest(&mut self) -> Result<&str, std::io::Error> {
        self.entries.push("loaded".to_owned());
        Ok(self.entries.last().unwrap())
    }
}

fn main() {}
