//! The concurrency limits of a loaded [`Config`]: looked up by name, and
//! explained key by key like its policies, budgets and breakers.

use super::{Config, Explained};
use crate::schema::{LIMIT_KEYS, engine};
use retrykit_core::limit::ConcurrencyLimit;
use std::sync::Arc;

impl Config {
    /// The concurrency limit named `name`: one `Arc`, shared by every
    /// policy that names it.
    ///
    /// ```
    /// let text = "[limits.db]\nmax_in_flight = 8\n[policies.a]\nlimit = \"db\"\n";
    /// let cfg = retrykit_config::Config::load_str(text, "f", &Default::default()).unwrap();
    /// let db = cfg.limit("db").unwrap();
    /// assert_eq!(db.max_in_flight(), 8);
    /// assert!(std::sync::Arc::ptr_eq(cfg.policy("a").unwrap().limit().unwrap(), db));
    /// ```
    pub fn limit(&self, name: &str) -> Option<&Arc<ConcurrencyLimit>> {
        self.limits
            .iter()
            .find(|l| l.name == name)
            .map(|l| &l.limit)
    }

    /// Every concurrency limit name, in file order.
    ///
    /// ```
    /// let text = "[limits.b]\nmax_in_flight = 1\n[limits.a]\nmax_in_flight = 2\n";
    /// let cfg = retrykit_config::Config::load_str(text, "f", &Default::default()).unwrap();
    /// assert_eq!(cfg.limit_names().collect::<Vec<_>>(), ["b", "a"]);
    /// ```
    pub fn limit_names(&self) -> impl Iterator<Item = &str> {
        self.limits.iter().map(|l| l.name.as_str())
    }

    /// Every setting of concurrency limit `name`, like [`explain`](Self::explain)
    /// (a key its kind does not use says so).
    ///
    /// ```
    /// use retrykit_config::{Config, Env, Layer, Options};
    /// let env = Env::new().with("RETRY_LIMIT__DB__MAX_WAIT", "50ms");
    /// let cfg = Config::load_str("[limits.db]\nmax_in_flight = 4\n", "f", &Options::new().env(env)).unwrap();
    /// let explained = cfg.explain_limit("db").unwrap();
    /// let get = |key: &str| explained.iter().find(|e| e.key == key).unwrap().clone();
    /// assert_eq!((get("max_in_flight").value, get("max_in_flight").layer), ("4".to_owned(), Layer::File));
    /// assert_eq!((get("max_wait").value, get("max_wait").layer), ("50ms".to_owned(), Layer::Env("RETRY_LIMIT__DB__MAX_WAIT".into())));
    /// assert_eq!((get("max_waiting").value, get("max_waiting").layer), ("1000".to_owned(), Layer::Builtin));
    /// assert_eq!(get("decrease").value, "- (unused by fixed limits)");
    /// ```
    pub fn explain_limit(&self, name: &str) -> Option<Vec<Explained>> {
        let l = self.limits.iter().find(|l| l.name == name)?;
        let kind = l.limit.kind().name();
        Some(super::explained(LIMIT_KEYS, &l.fields, |key| {
            if key.applies_to_limit_kind(kind) {
                engine::effective_limit(&l.limit, key)
            } else {
                format!("- (unused by {kind} limits)")
            }
        }))
    }
}
