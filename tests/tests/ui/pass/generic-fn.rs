//! Generics, lifetimes, `impl Trait` arguments and where clauses.
use retrykit_core::{Classify, retry};
use std::fmt::Debug;

#[derive(Debug, Clone, Classify)]
#[classify(permanent)]
struct Empty;

#[retry(policy = "fetch")]
async fn first_word<'a, E>(text: &'a str, fallback: E) -> Result<&'a str, E>
where
    E: Classify + Clone + Debug,
{
    text.split_whitespace().next().ok_or(fallback)
}

#[retry(policy = "fetch")]
fn describe<T: Debug + Clone>(value: T, suffix: impl AsRef<str> + Clone) -> Result<String, std::io::Error> {
    Ok(format!("{value:?}{}", suffix.as_ref()))
}

struct Cache<K> {
    keys: Vec<K>,
}

impl<K: PartialEq + Clone + Send> Cache<K> {
    #[retry(policy = "fetch")]
    async fn position(&self, key: K) -> Result<usize, String> {
        self.keys.iter().position(|k| *k == key).ok_or_else(|| "missing".to_owned())
    }

    #[retry(policy = "db")]
    fn insert(&mut self, key: &K) -> Result<usize, std::io::Error> {
        self.keys.push(key.clone());
        Ok(self.keys.len())
    }

    #[retry(policy = "db")]
    fn keys<'s>(&'s self, from: usize) -> Result<&'s [K], std::io::Error> {
        self.keys.get(from..).ok_or_else(|| std::io::ErrorKind::InvalidInput.into())
    }
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    assert_eq!(rt.block_on(first_word("hello world", Empty)).unwrap(), "hello");
    assert_eq!(describe(3, "!").unwrap(), "3!");
    let mut cache = Cache { keys: vec!["a"] };
    assert_eq!(cache.insert(&"b").unwrap(), 2);
    assert_eq!(cache.keys(1).unwrap(), ["b"]);
    assert_eq!(rt.block_on(cache.position("b")).unwrap(), 1);
}
