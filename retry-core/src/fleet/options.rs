//! What a fleet budget needs besides the local budget's settings.

use crate::problem::{Problem, Problems};
use retrykit_schema::keys::Key;
use std::time::Duration;

/// Where a fleet budget is kept and how its host talks to it.
///
/// ```
/// use retrykit_core::fleet::FleetOptions;
/// use std::time::Duration;
/// let o = FleetOptions::new("broker", "redis://me:secret@cache:6379/0");
/// assert_eq!((o.name(), o.store(), o.store_shown()), ("broker", "redis://me:secret@cache:6379/0", "redis://cache:6379/0".into()));
/// assert_eq!((o.key(), o.breaker_key()), ("{retry-budget:broker}".into(), "{retry-breaker:broker}".into()));
/// assert_eq!((o.timeout(), o.refresh(), o.max_lease()), (Duration::from_millis(5), Duration::from_millis(20), 32));
/// let ms = Duration::from_millis;
/// let o = o.with_timeout(ms(50)).with_refresh(ms(5)).with_max_lease(4);
/// assert_eq!((o.timeout(), o.refresh(), o.max_lease()), (ms(50), ms(5), 4));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FleetOptions {
    name: String,
    store: String,
    timeout: Duration,
    refresh: Duration,
    max_lease: u32,
}

impl FleetOptions {
    /// A fleet budget called `name` (the key in Redis) kept at `store`
    /// (`redis://[user:password@]host[:port][/db]`), with the defaults:
    /// a 5 ms timeout, a 20 ms refresh and leases of at most 32 retries.
    pub fn new(name: impl Into<String>, store: impl Into<String>) -> FleetOptions {
        FleetOptions {
            name: name.into(),
            store: store.into(),
            timeout: Duration::from_millis(5),
            refresh: Duration::from_millis(20),
            max_lease: 32,
        }
    }

    /// The longest a round trip to Redis may take before the host fails
    /// open to its local budget (1 ms to 10 s). Calls never wait for it.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How often the lease is topped up and calls are sent (1 ms to 10 s).
    #[must_use]
    pub fn with_refresh(mut self, refresh: Duration) -> Self {
        self.refresh = refresh;
        self
    }

    /// The most retries a host may hold unspent (1 to 1,000,000): each host
    /// adds at most this much to the fleet's overshoot.
    #[must_use]
    pub fn with_max_lease(mut self, max_lease: u32) -> Self {
        self.max_lease = max_lease;
        self
    }

    /// The budget's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The store's URL as given (it may hold a password: print
    /// [`FleetOptions::store_shown`] instead).
    pub fn store(&self) -> &str {
        &self.store
    }

    /// The store's URL without its user and password, for messages.
    pub fn store_shown(&self) -> String {
        retrykit_schema::keys::store_shown(&self.store)
    }

    /// The Redis key: a hash tag around the name, so the key is cluster-safe.
    pub fn key(&self) -> String {
        format!("{{retry-budget:{}}}", self.name)
    }

    /// The Redis key of a fleet breaker of this name: its own prefix, so a
    /// budget and a breaker may share a name and a store.
    pub fn breaker_key(&self) -> String {
        format!("{{retry-breaker:{}}}", self.name)
    }

    /// The round-trip timeout.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The refresh period.
    pub fn refresh(&self) -> Duration {
        self.refresh
    }

    /// The lease's upper bound (a fleet budget's; a fleet breaker leases
    /// at most its `probes`).
    pub fn max_lease(&self) -> u32 {
        self.max_lease
    }

    /// Every problem with these options for a fleet `kind` ("budget" or
    /// "breaker"), each naming its field, rule and fix.
    pub(crate) fn problems(&self, kind: &str) -> Vec<Problem> {
        if self.store.is_empty() {
            let fix = format!(
                "add store = \"redis://host:6379/\" to [{kind}s.{}], or set \
                 RETRY_{}__{}__STORE",
                self.name,
                kind.to_uppercase(),
                self.name.to_uppercase()
            );
            let rule = "is required when scope is \"fleet\"";
            return vec![Problem::new(Key::Store.name(), rule, fix)];
        }
        let mut problems = Problems::default();
        if let Some(wrong) = store_fault(&self.store) {
            problems.require(
                false,
                Key::Store.name(),
                "must be a redis:// URL",
                format!(
                    "{wrong}: write the store as \"redis://host:6379/\" or \"redis://host:6379/0\" (got {:?})",
                    self.store_shown()
                ),
            );
        }
        problems.require(
            !self.name.is_empty() && self.name.len() <= 200,
            "name",
            "must be 1 to 200 bytes long",
            format!("name the {kind} as its [{kind}s.NAME] table does"),
        );
        // A breaker's are named by its table's keys, which set them in a
        // file; a budget's are set in code only (`with_timeout`, `with_refresh`).
        for (key, field, value) in [
            (Key::StoreTimeout, "timeout", self.timeout),
            (Key::Refresh, "refresh", self.refresh),
        ] {
            let (field, fix) = match kind {
                "breaker" => (
                    key.name(),
                    format!(
                        "set {} = {} in [breakers.{}] (got {})",
                        key.name(),
                        key.example(),
                        self.name,
                        retrykit_schema::duration::show_duration(value)
                    ),
                ),
                _ => (field, format!("use a few milliseconds (got {value:?})")),
            };
            problems.require(
                (Duration::from_millis(1)..=Duration::from_secs(10)).contains(&value),
                field,
                "must be from 1ms to 10s",
                fix,
            );
        }
        problems.require(
            (1..=1_000_000).contains(&self.max_lease),
            "max_lease",
            "must be from 1 to 1000000",
            format!("use a small number such as 32 (got {})", self.max_lease),
        );
        problems.into_vec()
    }
}

/// What is wrong with a store URL, naming the part (the scheme, the host,
/// the port or the database), or `None` when Redis accepts it. The part is
/// quoted only when it cannot hold the password.
fn store_fault(url: &str) -> Option<String> {
    let Some(rest) = url.strip_prefix("redis://") else {
        let scheme = url.split_once("://").map_or("", |(scheme, _)| scheme);
        return Some(if scheme.is_empty() {
            "it has no scheme".to_owned()
        } else {
            format!("its scheme {scheme:?} is not \"redis\"")
        });
    };
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let (host, port) = match host_port.rsplit_once(':') {
        Some((host, port)) if !host.ends_with(']') || host_port.ends_with(']') => {
            (host, Some(port))
        }
        _ => (host_port, None),
    };
    if host.is_empty() {
        return Some("it has no host".to_owned());
    }
    if let Some(port) = port.filter(|p| p.parse::<u16>().is_err()) {
        return Some(format!("its port {port:?} is not a number from 0 to 65535"));
    }
    let db = path.split(['?', '#']).next().unwrap_or("");
    if !db.is_empty() && db.parse::<i64>().is_err() {
        return Some(format!("its database {db:?} is not a number"));
    }
    match redis::Client::open(url) {
        Ok(_) => None,
        Err(e) => Some(format!(
            "Redis refuses it: {}",
            retrykit_schema::keys::store_shown(&e.to_string())
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::FleetOptions;

    fn fix(store: &str) -> Option<String> {
        let problems = FleetOptions::new("b", store).problems("breaker");
        problems
            .into_iter()
            .find(|p| p.field == "store")
            .map(|p| p.fix)
    }

    #[test]
    fn a_bad_store_says_which_part_is_wrong_and_never_the_password() {
        for (store, part) in [
            ("redis://u:hunter2@h:1/0x", "its database \"0x\""),
            ("redis://u:hunter2@h:99999/", "its port \"99999\""),
            ("redis://u:hunter2@:1/", "it has no host"),
            ("http://u:hunter2@h/", "its scheme \"http\""),
            ("cache:6379", "it has no scheme"),
        ] {
            let fix = fix(store).unwrap_or_else(|| panic!("{store} is refused"));
            assert!(fix.starts_with(part), "{store}: {fix}");
            assert!(!fix.contains("hunter2"), "{fix}");
        }
        for fine in ["redis://h/", "redis://u:p@h:6379/2", "redis://[::1]:6379/0"] {
            assert_eq!(fix(fine), None, "{fine}");
        }
    }
}
