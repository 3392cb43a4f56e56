//! A gRPC service config (gRFC A6, JSON) as retry.toml policies.
//!
//! Naming: one policy per `name` entry of each `methodConfig`: the entry's
//! `service` and `method` joined by `/` (a service-wide entry is the service
//! alone; the empty entry, every method, is `grpc-default`), with each
//! character a policy name cannot hold (anything but ASCII letters, digits,
//! `-` and `_`) written as `-`: `helloworld.Greeter/SayHello` becomes
//! `helloworld-Greeter-SayHello`. A call site wraps its channel with
//! `RetryLayer::policy("<that name>").grpc()`; the output's comments say
//! which name each method gets.
//!
//! - `retryPolicy`: `maxAttempts` (at least 2; above 5 clamped to 5 with a
//!   warning, as gRPC's clients do), `initialBackoff` as `base`,
//!   `maxBackoff` as `cap`, `backoffMultiplier` as `factor`, an exponential
//!   backoff with full jitter (A6's `random(0, backoff)`).
//! - `hedgingPolicy`: `maxAttempts` (the same bounds), `hedgingDelay` as
//!   `hedge_after`, `hedge_share = maxAttempts - 1` (A6 caps hedges by
//!   attempts and throttling only: every call may send all its hedges).
//! - `retryableStatusCodes` / `nonFatalStatusCodes` (names or numbers): the
//!   codes, by name and in their order, as `grpc_retry_on` (named once
//!   each; `OK` is an error).
//! - `timeout` as `deadline`.
//! - `retryThrottling` (`maxTokens`, `tokenRatio`): a `[budgets.grpc-throttling]`
//!   table of mode `grpc_throttling` (`max_tokens`, `token_ratio`) that
//!   every imported policy names, since A6 keeps one bucket per server for
//!   all its methods. `maxTokens` above 0 and at most 1000, `tokenRatio`
//!   above 0 (A6's rules; gRPC's clients refuse more than 1000 tokens);
//!   digits past the third decimal are dropped with a warning, as gRPC's
//!   clients do (a `tokenRatio` that leaves 0 is an error).
//!
//! Durations are proto JSON within protobuf Duration's range and retry.toml's
//! ([`duration`]). Every key is checked ([`keys`]): unknown keys are errors
//! with a did-you-mean, a key written twice in one object is an error, and
//! the keys of A6 that the import does not use are left out with one warning
//! each. A service config with no `methodConfig` entry is an error: there
//! is nothing to import. Last, the output is checked as `retry-policy check`
//! checks a file ([`verify`]): what check would refuse fails the import,
//! named at its JSON path, instead of being printed.

use json::Json;
use retrykit_config::MAX_POLICIES;
use std::collections::HashMap;
use std::fmt::Write;
use verify::Field;

mod duration;
mod json;
mod keys;
mod policy;
mod verify;

/// What an import produced: the TOML text, and the warnings.
#[derive(Debug)]
pub struct Imported {
    /// The retry.toml text.
    pub toml: String,
    /// What was changed or left out, each naming its JSON path, each once.
    pub warnings: Vec<String>,
}

/// A6's largest `maxAttempts`: larger values are clamped to it.
const MAX_ATTEMPTS: u64 = 5;

/// The budget that `retryThrottling` becomes, named by every policy.
const THROTTLING_BUDGET: &str = "grpc-throttling";

/// Imports `json`; every problem found is an error naming its JSON path.
pub fn import(json: &str) -> Result<Imported, Vec<String>> {
    let root = Json::parse(json).map_err(|e| {
        vec![format!(
            "not JSON ({e}): a gRPC service config is a JSON object"
        )]
    })?;
    let mut cx = Cx::default();
    if !root.is_object() {
        return Err(vec![
            "$: expected a JSON object (a gRPC service config)".into(),
        ]);
    }
    cx.keys("$", &root, &keys::ROOT);
    let mut toml =
        String::from("# Imported from a gRPC service config by `retry-policy import grpc`.\n");
    if let Some(throttling) = root.get("retryThrottling") {
        cx.throttling(throttling, &mut toml);
    }
    let configs = match root.get("methodConfig") {
        Some(Json::Array(configs)) if !configs.is_empty() => configs.as_slice(),
        found => {
            let found = found.map_or("missing".to_owned(), |v| format!("{v}"));
            cx.error(
                "$.methodConfig",
                format!(
                    "{found}: nothing to import: the policies come from methodConfig, a list \
                     of entries each with a name and a retryPolicy or hedgingPolicy (gRFC A6); \
                     add one, such as {{\"name\": [{{\"service\": \"pkg.Service\"}}], \
                     \"retryPolicy\": {{...}}}}"
                ),
            );
            &[]
        }
    };
    for (i, config) in configs.iter().enumerate() {
        cx.method_config(i, config, &mut toml);
    }
    if cx.count > MAX_POLICIES {
        cx.error(
            "$.methodConfig",
            format!(
                "names {} methods, but a retry.toml may define at most {MAX_POLICIES} policies \
                 (one per name entry; `retry-policy check` refuses more): cover a service's \
                 methods with one service-wide entry ({{\"service\": \"pkg.Service\"}}), or \
                 split the service config",
                cx.count
            ),
        );
    }
    if cx.errors.is_empty() {
        cx.verify(&toml);
    }
    let mut seen = std::collections::HashSet::new();
    cx.warnings.retain(|w| seen.insert(w.clone()));
    if cx.errors.is_empty() {
        Ok(Imported {
            toml,
            warnings: cx.warnings,
        })
    } else {
        Err(cx.errors)
    }
}

/// Where a policy came from: its `methodConfig` entry and `name` entry.
struct Named {
    /// The index of its `methodConfig` entry.
    config: usize,
    /// The JSON path of its `name` entry.
    path: String,
    /// The entry as written (`"helloworld.Greeter/SayHello"`), for messages.
    shown: String,
    /// The method it stands for, as written.
    full: String,
}

#[derive(Default)]
struct Cx {
    errors: Vec<String>,
    warnings: Vec<String>,
    /// The unused keys of A6 warned about (once each).
    unused_keys: Vec<String>,
    /// Every policy name written, and where it came from.
    named: HashMap<String, Named>,
    /// How many names the `methodConfig` entries have, all together.
    count: usize,
    /// Per `methodConfig` entry, what each of its JSON values became.
    fields: Vec<Vec<Field>>,
    /// What `retryThrottling`'s values became.
    throttling_fields: Vec<Field>,
    /// Whether `retryThrottling` made [`THROTTLING_BUDGET`].
    throttled: bool,
}

impl Cx {
    fn error(&mut self, path: &str, what: impl std::fmt::Display) {
        self.errors.push(format!("{path}: {what}"));
    }

    /// Records that the JSON value at `path`, `shown`, became `toml` in
    /// the current `methodConfig` entry (for [`verify`]).
    fn field(&mut self, toml: &'static str, path: &str, shown: String) {
        let field = Field {
            toml,
            path: path.to_owned(),
            shown,
        };
        match self.fields.last_mut() {
            Some(fields) => fields.push(field),
            None => self.throttling_fields.push(field),
        }
    }

    /// `retryThrottling` as [`THROTTLING_BUDGET`].
    fn throttling(&mut self, value: &Json, toml: &mut String) {
        let path = "$.retryThrottling";
        if !value.is_object() {
            return self.error(
                path,
                "must be an object with maxTokens and tokenRatio (gRFC A6)",
            );
        }
        self.keys(path, value, &keys::THROTTLING);
        let tokens = self.bucket(
            &format!("{path}.maxTokens"),
            value.get("maxTokens"),
            1000.0,
            "must be a number above 0 and at most 1000 (gRFC A6: required, greater than \
             zero; gRPC's clients refuse more than 1000); use 10, say",
        );
        let ratio = self.bucket(
            &format!("{path}.tokenRatio"),
            value.get("tokenRatio"),
            1e6,
            "must be a number of at least 0.001 (gRFC A6: required, greater than zero, up to \
             3 decimal places; retry.toml takes at most 1000000); use 0.1, say",
        );
        let (Some(tokens), Some(ratio)) = (tokens, ratio) else {
            return;
        };
        for (toml, key) in [("max_tokens", "maxTokens"), ("token_ratio", "tokenRatio")] {
            let shown = value.get(key).map(Json::to_string).unwrap_or_default();
            self.field(toml, &format!("{path}.{key}"), shown);
        }
        self.throttled = true;
        let _ = writeln!(
            toml,
            "\n# retryThrottling: one token bucket for every method below, as gRPC keeps one \
             per server;\n# retries and hedges stop while half of it or more is spent \
             (RetryLayer::grpc() feeds it).\n[budgets.{THROTTLING_BUDGET}]\n\
             mode = \"grpc_throttling\"\nmax_tokens = {tokens}\ntoken_ratio = {ratio}"
        );
    }
    /// A setting of `retryThrottling`: a number above 0 and at most `max`,
    /// as retry.toml writes it, with digits past the third decimal dropped
    /// (with a warning), as gRPC's clients do.
    fn bucket(&mut self, path: &str, value: Option<&Json>, max: f64, rule: &str) -> Option<String> {
        let Some(n) = value
            .and_then(Json::as_f64)
            .filter(|n| *n > 0.0 && *n <= max)
        else {
            let found = value.map_or("missing: it".to_owned(), Json::to_string);
            self.error(path, format!("{found} {rule}"));
            return None;
        };
        // Thousandths, within float rounding (1.001 × 1000 is 1000.9999999999999).
        let scaled = n * 1000.0;
        let whole = scaled.round();
        let exact = (scaled - whole).abs() <= 1e-12 * whole.max(1.0);
        let kept = if exact { whole } else { scaled.floor() };
        if kept < 1.0 {
            self.error(path, format!("{n} {rule}"));
            return None;
        }
        if !exact {
            self.warnings.push(format!(
                "{path}: {n} cut to {} (three decimals, as gRPC's clients keep)",
                kept / 1000.0
            ));
        }
        Some((kept / 1000.0).to_string())
    }

    fn method_config(&mut self, i: usize, config: &Json, toml: &mut String) {
        let path = format!("$.methodConfig[{i}]");
        self.fields.push(Vec::new());
        if !self.keys(&path, config, &keys::METHOD) {
            return;
        }
        let names = self.policy_names(i, &path, config);
        let retry = config.get("retryPolicy");
        let hedge = config.get("hedgingPolicy");
        if retry.is_some() && hedge.is_some() {
            self.error(
                &path,
                "has both retryPolicy and hedgingPolicy: gRFC A6 allows one of them per method; keep one",
            );
            return;
        }
        let mut body = String::new();
        if let Some(retry) = retry {
            self.retry_policy(&format!("{path}.retryPolicy"), retry, &mut body);
        }
        if let Some(hedge) = hedge {
            self.hedging_policy(&format!("{path}.hedgingPolicy"), hedge, &mut body);
        }
        if let Some(timeout) = config.get("timeout") {
            let at = format!("{path}.timeout");
            if let Some(d) = self.duration(&at, timeout) {
                self.field("deadline", &at, timeout.to_string());
                let _ = writeln!(body, "deadline = \"{d}\"");
            }
        }
        if self.throttled {
            let _ = writeln!(body, "budget = \"{THROTTLING_BUDGET}\"");
        }
        if self.count > MAX_POLICIES {
            return; // An error at the end: no output is written.
        }
        for (name, method) in names {
            let _ = write!(
                toml,
                "\n# {method}: RetryLayer::policy(\"{name}\").grpc()\n[policies.{name}]\n{body}"
            );
        }
    }

    /// The policy name of each `name` entry, with the method it stands for.
    fn policy_names(&mut self, i: usize, path: &str, config: &Json) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let entries = match config.get("name") {
            Some(Json::Array(entries)) => entries.as_slice(),
            found => {
                let found = found.map_or("missing".to_owned(), |v| format!("{v}"));
                self.error(
                    &format!("{path}.name"),
                    format!(
                        "{found}: each methodConfig names the methods it applies to, as a list \
                         such as [{{\"service\": \"pkg.Service\", \"method\": \"Call\"}}] (gRFC A6)"
                    ),
                );
                return out;
            }
        };
        for (j, entry) in entries.iter().enumerate() {
            let at = format!("{path}.name[{j}]");
            if !self.keys(&at, entry, &keys::NAME) {
                continue;
            }
            let mut field = |k: &str| match entry.get(k) {
                None => Some(""),
                Some(Json::String(s)) => Some(s.as_str()),
                Some(other) => {
                    self.error(
                        &format!("{at}.{k}"),
                        format!("{other} must be a string (gRFC A6), such as \"pkg.Service\""),
                    );
                    None
                }
            };
            let (Some(service), Some(method)) = (field("service"), field("method")) else {
                continue;
            };
            let full = match (service, method) {
                ("", "") => String::new(),
                (s, "") => s.to_owned(),
                (s, m) => format!("{s}/{m}"),
            };
            if service.is_empty() && !method.is_empty() {
                self.error(
                    &at,
                    "names a method without its service: gRFC A6 needs the service; add \"service\"",
                );
                continue;
            }
            self.count += 1;
            if self.count > MAX_POLICIES {
                continue; // Counted only: the import fails, at the end.
            }
            let name = retrykit_schema::grpc::policy_name(&full);
            let shown = Json::String(full.clone()).to_string();
            if let Some(first) = self.named.get(&name) {
                let error = if first.full == full {
                    format!(
                        "{shown} is named twice (first at {}): gRFC A6 allows one methodConfig \
                         per name; keep one",
                        first.path
                    )
                } else {
                    format!(
                        "{shown} and {} (at {}) both become policy `{}`, as a policy name holds \
                         only ASCII letters, digits, `-` and `_` (every other character is `-`): \
                         the gRPC layer could not tell them apart; drop one of them",
                        first.shown,
                        first.path,
                        json::clip(&name)
                    )
                };
                self.error(&at, error);
                continue;
            }
            self.named.insert(
                name.clone(),
                Named {
                    config: i,
                    path: at,
                    shown,
                    full: full.clone(),
                },
            );
            out.push((
                name,
                if full.is_empty() {
                    "every method".into()
                } else {
                    full
                },
            ));
        }
        if entries.is_empty() {
            self.error(
                &format!("{path}.name"),
                "is empty: each methodConfig names the methods it applies to (gRFC A6)",
            );
        }
        out
    }
}

#[cfg(test)]
mod tests;
