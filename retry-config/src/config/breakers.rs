//! The circuit breakers of a loaded [`Config`]: looked up by name, and
//! explained key by key like its policies and budgets.

use super::{Config, Explained};
use crate::schema::{BREAKER_KEYS, engine};
use retrykit_core::breaker::CircuitBreaker;
use std::sync::Arc;

impl Config {
    /// The circuit breaker named `name`: one `Arc`, shared by every policy
    /// that names it.
    ///
    /// ```
    /// let text = "[breakers.broker]\nprobes = 3\n[policies.a]\nbreaker = \"broker\"\nattempt_timeout = \"1s\"\n";
    /// let cfg = retrykit_config::Config::load_str(text, "f", &Default::default()).unwrap();
    /// let broker = cfg.breaker("broker").unwrap();
    /// assert_eq!(broker.probes(), 3);
    /// assert!(std::sync::Arc::ptr_eq(cfg.policy("a").unwrap().breaker().unwrap(), broker));
    /// ```
    pub fn breaker(&self, name: &str) -> Option<&Arc<CircuitBreaker>> {
        self.breakers
            .iter()
            .find(|b| b.name == name)
            .map(|b| &b.breaker)
    }

    /// Every circuit breaker name, in file order.
    ///
    /// ```
    /// let cfg = retrykit_config::Config::load_str("[breakers.b]\n[breakers.a]\n", "f", &Default::default()).unwrap();
    /// assert_eq!(cfg.breaker_names().collect::<Vec<_>>(), ["b", "a"]);
    /// ```
    pub fn breaker_names(&self) -> impl Iterator<Item = &str> {
        self.breakers.iter().map(|b| b.name.as_str())
    }

    /// Every setting of circuit breaker `name`, like [`explain`](Self::explain).
    ///
    /// ```
    /// use retrykit_config::{Config, Env, Layer, Options};
    /// let env = Env::new().with("RETRY_BREAKER__BROKER__PROBES", "2");
    /// let cfg = Config::load_str("[breakers.broker]\nfailure_ratio = 0.5\n", "f", &Options::new().env(env)).unwrap();
    /// let explained = cfg.explain_breaker("broker").unwrap();
    /// let get = |key: &str| explained.iter().find(|e| e.key == key).unwrap().clone();
    /// assert_eq!((get("failure_ratio").value, get("failure_ratio").layer), ("0.5".to_owned(), Layer::File));
    /// assert_eq!(get("probes").layer, Layer::Env("RETRY_BREAKER__BROKER__PROBES".into()));
    /// assert_eq!((get("open_for").value, get("open_for").layer), ("5s".to_owned(), Layer::Builtin));
    /// ```
    pub fn explain_breaker(&self, name: &str) -> Option<Vec<Explained>> {
        let b = self.breakers.iter().find(|b| b.name == name)?;
        Some(super::explained(BREAKER_KEYS, &b.fields, |key| {
            engine::effective_breaker(&b.breaker, &b.fields, key)
        }))
    }
}
