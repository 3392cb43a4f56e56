//! The chaos of a loaded [`Config`] (docs/chaos.md): which policies inject
//! faults or latency, at what rates, as `explain`, `show` and the start-up
//! line say it.

use super::{Config, Explained};
use crate::layers::{Fields, Layer};
use crate::schema::{Key, engine};
use retrykit_core::Policy;
use retrykit_schema::keys::CHAOS_KEYS;

impl Config {
    /// Each policy whose chaos is active, with what it injects
    /// (`faults 20% transient, seed 7`), in file order.
    ///
    /// ```
    /// let text = "[policies.a]\n[profiles.staging.policies.a.chaos]\nfault_rate = 0.2\nseed = 7\n";
    /// let opts = retrykit_config::Options::new().profile("staging");
    /// let cfg = retrykit_config::Config::load_str(text, "f", &opts).unwrap();
    /// assert_eq!(cfg.chaos(), [("a", "faults 20% transient, seed 7".to_owned())]);
    /// ```
    pub fn chaos(&self) -> Vec<(&str, String)> {
        self.policies
            .iter()
            .filter_map(|p| Some((p.name.as_str(), p.policy.chaos()?.to_string())))
            .collect()
    }

    /// Whether `RETRY_CHAOS=off` switched every chaos table off.
    ///
    /// ```
    /// use retrykit_config::{Config, Env, Options};
    /// let text = "[policies.a.chaos]\nfault_rate = 0.2\n";
    /// let opts = Options::new().env(Env::new().with("RETRY_CHAOS", "off"));
    /// let cfg = Config::load_str(text, "f", &opts).unwrap();
    /// assert!(cfg.chaos_off() && cfg.chaos().is_empty());
    /// ```
    pub fn chaos_off(&self) -> bool {
        self.chaos_off
    }

    /// The line a program says at start-up about chaos: where it is active
    /// and at what rates, or that `RETRY_CHAOS=off` switched it off; `None`
    /// when the file sets no chaos for this profile.
    ///
    /// ```
    /// let text = "[policies.a]\n[profiles.staging.policies.a.chaos]\nlatency_rate = 0.1\nlatency = \"300ms\"\n";
    /// let opts = retrykit_config::Options::new().profile("staging");
    /// let cfg = retrykit_config::Config::load_str(text, "f", &opts).unwrap();
    /// assert_eq!(
    ///     cfg.chaos_line().unwrap(),
    ///     "chaos active (profile `staging`): a: latency 10% 300ms; RETRY_CHAOS=off turns it off"
    /// );
    /// ```
    pub fn chaos_line(&self) -> Option<String> {
        let profile = match &self.profile {
            Some(p) => format!("profile `{p}`"),
            None => "no profile".to_owned(),
        };
        if self.chaos_off {
            let tables = self
                .policies
                .iter()
                .filter(|p| engine::chaos_set(&p.fields))
                .count();
            return (tables > 0).then(|| {
                format!("chaos off (RETRY_CHAOS=off, {profile}): {tables} policies' chaos ignored")
            });
        }
        let active = self.chaos();
        if active.is_empty() {
            return None;
        }
        let each: Vec<String> = active.iter().map(|(p, c)| format!("{p}: {c}")).collect();
        Some(format!(
            "chaos active ({profile}): {}; RETRY_CHAOS=off turns it off",
            each.join("; ")
        ))
    }
}

/// A policy's chaos keys as `explain` shows them (`chaos.fault_rate`, ...).
pub(super) fn explained(fields: &Fields, policy: &Policy, off: bool) -> Vec<Explained> {
    CHAOS_KEYS
        .iter()
        .map(|&key| {
            let set = fields.get(key);
            let value = if off {
                "off (RETRY_CHAOS=off)".to_owned()
            } else {
                engine::effective(policy, key)
            };
            Explained {
                key: dotted(key),
                value,
                layer: set.map_or(Layer::Builtin, |s| s.layer.clone()),
                span: set.and_then(|s| s.span.clone()),
            }
        })
        .collect()
}

/// The chaos key as a policy's table writes it.
fn dotted(key: Key) -> &'static str {
    match key {
        Key::ChaosFaultRate => "chaos.fault_rate",
        Key::ChaosFault => "chaos.fault",
        Key::ChaosRetryAfter => "chaos.retry_after",
        Key::ChaosLatencyRate => "chaos.latency_rate",
        Key::ChaosLatency => "chaos.latency",
        Key::ChaosLatencyMax => "chaos.latency_max",
        _ => "chaos.seed",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_chaos_key_has_its_dotted_name() {
        for &key in CHAOS_KEYS {
            assert_eq!(dotted(key), format!("chaos.{}", key.name()));
        }
    }
}
