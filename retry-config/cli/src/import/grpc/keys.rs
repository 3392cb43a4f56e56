//! The keys each object of a service config may have (gRPC's
//! `service_config.proto`, as gRFC A6 writes them in JSON): the ones the
//! import reads, the ones it leaves out (accepted, with one warning per key
//! for the whole file), and everything else an error with a did-you-mean
//! (`maxAttempt` for `maxAttempts`). A key written twice in one object is
//! an error: JSON parsers keep one of the two without a word.

use super::Cx;
use super::json::Json;
use retrykit_schema::suggest::did_you_mean;

/// An object of the service config: what it is, its keys, and the keys
/// of A6 that the import leaves out, each with why.
pub struct Shape {
    /// What the object is, for messages.
    pub what: &'static str,
    /// The keys the import reads.
    pub read: &'static [&'static str],
    /// The keys it leaves out, and why (for the warning).
    pub unused: &'static [(&'static str, &'static str)],
}

/// The top level.
pub const ROOT: Shape = Shape {
    what: "a service config",
    read: &["methodConfig", "retryThrottling"],
    unused: &[
        (
            "loadBalancingPolicy",
            "load balancing is the channel's, not retry.toml's",
        ),
        (
            "loadBalancingConfig",
            "load balancing is the channel's, not retry.toml's",
        ),
        (
            "healthCheckConfig",
            "health checking is the channel's, not retry.toml's",
        ),
    ],
};

/// A `methodConfig` entry.
pub const METHOD: Shape = Shape {
    what: "a methodConfig entry",
    read: &["name", "timeout", "retryPolicy", "hedgingPolicy"],
    unused: &[
        (
            "waitForReady",
            "retry.toml has no wait-for-ready; set it on the call",
        ),
        (
            "maxRequestMessageBytes",
            "message sizes are the channel's; set them on the client",
        ),
        (
            "maxResponseMessageBytes",
            "message sizes are the channel's; set them on the client",
        ),
    ],
};

/// A `name` entry.
pub const NAME: Shape = Shape {
    what: "a name entry",
    read: &["service", "method"],
    unused: &[],
};

/// A `retryPolicy`.
pub const RETRY: Shape = Shape {
    what: "a retryPolicy",
    read: &[
        "maxAttempts",
        "initialBackoff",
        "maxBackoff",
        "backoffMultiplier",
        "retryableStatusCodes",
    ],
    unused: &[(
        "perAttemptRecvTimeout",
        "not imported; set attempt_timeout in the policy by hand",
    )],
};

/// A `hedgingPolicy`.
pub const HEDGE: Shape = Shape {
    what: "a hedgingPolicy",
    read: &["maxAttempts", "hedgingDelay", "nonFatalStatusCodes"],
    unused: &[],
};

/// `retryThrottling`.
pub const THROTTLING: Shape = Shape {
    what: "retryThrottling",
    read: &["maxTokens", "tokenRatio"],
    unused: &[],
};

impl Cx {
    /// Checks the keys of the object `value` at `path` against `shape`:
    /// duplicates and unknown keys are errors, A6's unused keys a warning
    /// (once per key in the whole file). `false` when it is no object.
    pub(super) fn keys(&mut self, path: &str, value: &Json, shape: &Shape) -> bool {
        let Some(entries) = value.as_object() else {
            self.error(
                path,
                format!("{value} must be an object ({} of gRFC A6)", shape.what),
            );
            return false;
        };
        // How often each key was seen so far: a hash set, as an object may
        // have many keys.
        let mut seen = std::collections::HashMap::<&str, usize>::new();
        for (key, _) in entries {
            let at = format!("{path}.{}", super::json::clip(key));
            let times = seen.entry(key).or_default();
            *times += 1;
            if *times > 1 {
                // Once per key and object, however many times it repeats.
                if *times == 2 {
                    self.error(
                        &at,
                        "is written twice in one object: JSON parsers keep one of them without \
                         a word (which one differs); keep one",
                    );
                }
                continue;
            }
            if shape.read.contains(&key.as_str()) {
                continue;
            }
            if let Some((_, why)) = shape.unused.iter().find(|(k, _)| k == key) {
                self.unused(&at, key, why);
                continue;
            }
            let known = shape.read.iter().chain(shape.unused.iter().map(|(k, _)| k));
            let hint = did_you_mean(key, known.copied())
                .map(|s| format!("did you mean `{s}`? "))
                .unwrap_or_default();
            let all = shape.read.to_vec();
            self.error(
                &at,
                format!(
                    "is not a key of {} in gRFC A6: {hint}the keys imported are {}",
                    shape.what,
                    all.join(", ")
                ),
            );
        }
        true
    }

    /// Warns once for `key` in the whole file, at its first path.
    fn unused(&mut self, path: &str, key: &str, why: &str) {
        if self.unused_keys.iter().any(|k| k == key) {
            return;
        }
        self.unused_keys.push(key.to_owned());
        self.warnings.push(format!(
            "{path}: left out (a key of gRFC A6 that the import does not use: {why}); \
             every {key} of the file is left out, with this one warning"
        ));
    }
}
