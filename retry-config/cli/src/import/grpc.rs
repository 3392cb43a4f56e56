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

use retrykit_schema::grpc::{code_name, code_named, suggest_code};
use serde_json::Value;
use std::fmt::Write;

/// What an import produced: the TOML text, and the warnings.
#[derive(Debug)]
pub struct Imported {
    /// The retry.toml text.
    pub toml: String,
    /// What was changed or left out, each naming its JSON path.
    pub warnings: Vec<String>,
}

/// A6's largest `maxAttempts`: larger values are clamped to it.
const MAX_ATTEMPTS: u64 = 5;

/// The budget that `retryThrottling` becomes, named by every policy.
const THROTTLING_BUDGET: &str = "grpc-throttling";

/// Imports `json`; every problem found is an error naming its JSON path.
pub fn import(json: &str) -> Result<Imported, Vec<String>> {
    let root: Value = serde_json::from_str(json).map_err(|e| {
        vec![format!(
            "not JSON ({e}): a gRPC service config is a JSON object"
        )]
    })?;
    let mut cx = Cx::default();
    let Some(root) = root.as_object() else {
        return Err(vec![
            "$: expected a JSON object (a gRPC service config)".into(),
        ]);
    };
    let mut toml =
        String::from("# Imported from a gRPC service config by `retry-policy import grpc`.\n");
    if let Some(throttling) = root.get("retryThrottling") {
        cx.throttling(throttling, &mut toml);
    }
    let configs = root.get("methodConfig").and_then(Value::as_array);
    for (i, config) in configs.into_iter().flatten().enumerate() {
        cx.method_config(&format!("$.methodConfig[{i}]"), config, &mut toml);
    }
    if cx.errors.is_empty() {
        Ok(Imported {
            toml,
            warnings: cx.warnings,
        })
    } else {
        Err(cx.errors)
    }
}

#[derive(Default)]
struct Cx {
    errors: Vec<String>,
    warnings: Vec<String>,
    names: Vec<String>,
    /// Whether `retryThrottling` made [`THROTTLING_BUDGET`].
    throttled: bool,
}

impl Cx {
    fn error(&mut self, path: &str, what: impl std::fmt::Display) {
        self.errors.push(format!("{path}: {what}"));
    }

    /// `retryThrottling` as [`THROTTLING_BUDGET`].
    fn throttling(&mut self, value: &Value, toml: &mut String) {
        let path = "$.retryThrottling";
        if !value.is_object() {
            return self.error(
                path,
                "must be an object with maxTokens and tokenRatio (gRFC A6)",
            );
        }
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
    fn bucket(
        &mut self,
        path: &str,
        value: Option<&Value>,
        max: f64,
        rule: &str,
    ) -> Option<String> {
        let Some(n) = value
            .and_then(Value::as_f64)
            .filter(|n| *n > 0.0 && *n <= max)
        else {
            let found = value.map_or("missing".to_owned(), Value::to_string);
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

    fn method_config(&mut self, path: &str, config: &Value, toml: &mut String) {
        let names = self.policy_names(path, config);
        let retry = config.get("retryPolicy");
        let hedge = config.get("hedgingPolicy");
        if retry.is_some() && hedge.is_some() {
            self.error(
                path,
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
        if let Some(timeout) = config.get("timeout")
            && let Some(d) = self.duration(&format!("{path}.timeout"), timeout)
        {
            let _ = writeln!(body, "deadline = \"{d}\"");
        }
        if self.throttled {
            let _ = writeln!(body, "budget = \"{THROTTLING_BUDGET}\"");
        }
        for (name, method) in names {
            let _ = write!(
                toml,
                "\n# {method}: RetryLayer::policy(\"{name}\").grpc()\n[policies.{name}]\n{body}"
            );
        }
    }

    /// The policy name of each `name` entry, with the method it stands for.
    fn policy_names(&mut self, path: &str, config: &Value) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let entries = config.get("name").and_then(Value::as_array);
        for (i, entry) in entries.into_iter().flatten().enumerate() {
            let field = |k| entry.get(k).and_then(Value::as_str).unwrap_or("");
            let (service, method) = (field("service"), field("method"));
            let full = match (service, method) {
                ("", "") => String::new(),
                (s, "") => s.to_owned(),
                (s, m) => format!("{s}/{m}"),
            };
            if service.is_empty() && !method.is_empty() {
                self.error(
                    &format!("{path}.name[{i}]"),
                    "names a method without its service: gRFC A6 needs the service",
                );
                continue;
            }
            let name = retrykit_schema::grpc::policy_name(&full);
            if self.names.contains(&name) {
                self.error(&format!("{path}.name[{i}]"), format!("`{full}` is named twice (policy `{name}`): gRFC A6 allows one methodConfig per name"));
                continue;
            }
            self.names.push(name.clone());
            out.push((
                name,
                if full.is_empty() {
                    "every method".into()
                } else {
                    full
                },
            ));
        }
        if out.is_empty() && self.errors.is_empty() {
            self.error(
                &format!("{path}.name"),
                "is missing or empty: each methodConfig names the methods it applies to",
            );
        }
        out
    }

    /// Writes `max_attempts`; the value written, if any.
    fn max_attempts(
        &mut self,
        path: &str,
        value: Option<&Value>,
        body: &mut String,
    ) -> Option<u64> {
        let path = format!("{path}.maxAttempts");
        match value.and_then(Value::as_u64) {
            Some(n) if n >= 2 => {
                let n = if n > MAX_ATTEMPTS {
                    self.warnings.push(format!(
                        "{path}: {n} clamped to {MAX_ATTEMPTS}, as gRPC's clients do"
                    ));
                    MAX_ATTEMPTS
                } else {
                    n
                };
                let _ = writeln!(body, "max_attempts = {n}");
                Some(n)
            }
            _ => {
                self.error(
                    &path,
                    format!(
                        "{} must be a whole number of at least 2 (gRFC A6); use 2 or more",
                        value.map_or("missing".to_owned(), Value::to_string)
                    ),
                );
                None
            }
        }
    }

    fn retry_policy(&mut self, path: &str, retry: &Value, body: &mut String) {
        self.max_attempts(path, retry.get("maxAttempts"), body);
        let _ = writeln!(body, "backoff = \"exponential\"\njitter = \"full\"");
        for (key, ours) in [("initialBackoff", "base"), ("maxBackoff", "cap")] {
            match retry.get(key) {
                Some(v) => {
                    if let Some(d) = self.duration(&format!("{path}.{key}"), v) {
                        let _ = writeln!(body, "{ours} = \"{d}\"");
                    }
                }
                None => self.error(&format!("{path}.{key}"), "is missing: gRFC A6 requires it"),
            }
        }
        match retry.get("backoffMultiplier").and_then(Value::as_f64) {
            Some(f) if f > 0.0 && f.is_finite() => {
                let _ = writeln!(body, "factor = {f:?}");
            }
            _ => self.error(
                &format!("{path}.backoffMultiplier"),
                "must be a number above 0 (gRFC A6)",
            ),
        }
        self.codes(
            &format!("{path}.retryableStatusCodes"),
            retry.get("retryableStatusCodes"),
            true,
            body,
        );
    }

    fn hedging_policy(&mut self, path: &str, hedge: &Value, body: &mut String) {
        let attempts = self.max_attempts(path, hedge.get("maxAttempts"), body);
        let delay = match hedge.get("hedgingDelay") {
            Some(v) => self.duration(&format!("{path}.hedgingDelay"), v),
            None => Some("0s".to_owned()),
        };
        // A6 caps hedges by maxAttempts alone: a share of maxAttempts - 1
        // hedges per call leaves every call its hedges.
        if let (Some(d), Some(attempts)) = (delay, attempts) {
            let share = attempts - 1;
            let _ = writeln!(body, "hedge_after = \"{d}\"\nhedge_share = {share}.0");
        }
        self.codes(
            &format!("{path}.nonFatalStatusCodes"),
            hedge.get("nonFatalStatusCodes"),
            false,
            body,
        );
    }

    /// The codes, by name, as `grpc_retry_on`.
    fn codes(&mut self, path: &str, value: Option<&Value>, required: bool, body: &mut String) {
        let list = match value.and_then(Value::as_array) {
            Some(list) if !list.is_empty() => list,
            _ if required => {
                return self.error(path, "must list at least one status code (gRFC A6: an empty retryableStatusCodes is invalid)");
            }
            // No non-fatal codes: every failure ends the hedging.
            _ => return,
        };
        let mut names: Vec<&str> = Vec::new();
        for (i, code) in list.iter().enumerate() {
            let at = format!("{path}[{i}]");
            let number = match code {
                Value::String(name) => code_named(name),
                Value::Number(n) => n
                    .as_u64()
                    .and_then(|n| u8::try_from(n).ok())
                    .filter(|n| code_name(*n).is_some()),
                _ => None,
            };
            let Some(number) = number else {
                let hint = code
                    .as_str()
                    .and_then(suggest_code)
                    .map(|s| format!(" (did you mean \"{s}\"?)"))
                    .unwrap_or_default();
                self.error(
                    &at,
                    format!(
                        "{code} is not a gRPC status code{hint}: use a name such as \"UNAVAILABLE\""
                    ),
                );
                continue;
            };
            match code_name(number) {
                Some("OK") => self.error(
                    &at,
                    "OK is a success, not a status to retry (gRFC A6): remove it",
                ),
                Some(name) if !names.contains(&name) => names.push(name),
                _ => {}
            }
        }
        if !names.is_empty() {
            let quoted: Vec<String> = names.iter().map(|c| format!("\"{c}\"")).collect();
            let _ = writeln!(body, "grpc_retry_on = [{}]", quoted.join(", "));
        }
    }

    /// A proto JSON duration (`"0.1s"`: seconds, up to 9 decimals, then
    /// `s`) as a retry.toml duration in milliseconds, or an error.
    fn duration(&mut self, path: &str, value: &Value) -> Option<String> {
        let text = value.as_str().unwrap_or("");
        let parsed = text.strip_suffix('s').and_then(|n| {
            let (whole, frac) = n.split_once('.').unwrap_or((n, ""));
            let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
            let ok = !whole.is_empty()
                && whole.len() <= 12
                && digits(whole)
                && frac.len() <= 9
                && digits(frac);
            ok.then(|| {
                let nanos: u64 = format!("{frac:0<9}").parse().unwrap_or(0);
                whole.parse::<u64>().unwrap_or(0) * 1_000_000_000 + nanos
            })
        });
        match parsed {
            Some(nanos) if nanos % 1_000_000 == 0 => Some(format!("{}ms", nanos / 1_000_000)),
            Some(nanos) => Some(format!("{}us", nanos.div_ceil(1000))),
            None => {
                self.error(path, format!(
                    "{value} is not a duration in proto JSON form (seconds then `s`, such as \"0.1s\"), as gRFC A6's service config requires"
                ));
                None
            }
        }
    }
}

#[cfg(test)]
mod tests;
