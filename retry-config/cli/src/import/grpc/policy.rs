//! `retryPolicy` and `hedgingPolicy` as a policy's settings, and their
//! status codes as `grpc_retry_on`.

use super::json::Json;
use super::{Cx, MAX_ATTEMPTS, keys};
use retrykit_schema::grpc::{code_name, code_named, suggest_code};
use std::fmt::Write;

impl Cx {
    /// Writes `max_attempts`; the value written, if any.
    fn max_attempts(&mut self, path: &str, value: Option<&Json>, body: &mut String) -> Option<u64> {
        let path = format!("{path}.maxAttempts");
        match value.and_then(Json::as_u64) {
            Some(n) if n >= 2 => {
                let n = if n > MAX_ATTEMPTS {
                    self.warnings.push(format!(
                        "{path}: {n} clamped to {MAX_ATTEMPTS}, as gRPC's clients do"
                    ));
                    MAX_ATTEMPTS
                } else {
                    n
                };
                let shown = value.map(Json::to_string).unwrap_or_default();
                self.field("max_attempts", &path, shown.clone());
                self.field("hedge_share", &path, shown);
                let _ = writeln!(body, "max_attempts = {n}");
                Some(n)
            }
            _ => {
                self.error(
                    &path,
                    format!(
                        "{} must be a whole number of at least 2 (gRFC A6); use 2 or more",
                        value.map_or("missing: it".to_owned(), Json::to_string)
                    ),
                );
                None
            }
        }
    }

    /// A `retryPolicy` at `path` as the policy's settings.
    pub(super) fn retry_policy(&mut self, path: &str, retry: &Json, body: &mut String) {
        if !self.keys(path, retry, &keys::RETRY) {
            return;
        }
        self.max_attempts(path, retry.get("maxAttempts"), body);
        let _ = writeln!(body, "backoff = \"exponential\"\njitter = \"full\"");
        for (key, ours) in [("initialBackoff", "base"), ("maxBackoff", "cap")] {
            let at = format!("{path}.{key}");
            match retry.get(key) {
                Some(v) => {
                    if let Some(d) = self.duration(&at, v) {
                        self.field(ours, &at, v.to_string());
                        let _ = writeln!(body, "{ours} = \"{d}\"");
                    }
                }
                None => self.error(
                    &at,
                    "is missing: gRFC A6 requires it; add a duration such as \"0.1s\"",
                ),
            }
        }
        let at = format!("{path}.backoffMultiplier");
        let multiplier = retry.get("backoffMultiplier");
        match multiplier.and_then(Json::as_f64) {
            Some(f) if f > 0.0 && f.is_finite() => {
                self.field(
                    "factor",
                    &at,
                    multiplier.map(Json::to_string).unwrap_or_default(),
                );
                let _ = writeln!(body, "factor = {f:?}");
            }
            _ => self.error(
                &at,
                format!(
                    "{} must be a number above 0 (gRFC A6); use 2, say",
                    multiplier.map_or("missing: it".to_owned(), Json::to_string)
                ),
            ),
        }
        self.codes(
            &format!("{path}.retryableStatusCodes"),
            retry.get("retryableStatusCodes"),
            true,
            body,
        );
    }

    /// A `hedgingPolicy` at `path` as the policy's settings.
    pub(super) fn hedging_policy(&mut self, path: &str, hedge: &Json, body: &mut String) {
        if !self.keys(path, hedge, &keys::HEDGE) {
            return;
        }
        let attempts = self.max_attempts(path, hedge.get("maxAttempts"), body);
        let at = format!("{path}.hedgingDelay");
        let delay = match hedge.get("hedgingDelay") {
            Some(v) => self
                .duration(&at, v)
                .inspect(|_| self.field("hedge_after", &at, v.to_string())),
            None => {
                let shown = "missing (gRFC A6's default, 0s: every hedge at once)".to_owned();
                self.field("hedge_after", &at, shown);
                Some("0s".to_owned())
            }
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
    fn codes(&mut self, path: &str, value: Option<&Json>, required: bool, body: &mut String) {
        let list = match value {
            Some(Json::Array(list)) if !list.is_empty() => list,
            // No non-fatal codes: every failure ends the hedging.
            None | Some(Json::Array(_)) if !required => return,
            found => {
                let found = found.map_or("missing: it".to_owned(), Json::to_string);
                return self.error(
                    path,
                    format!(
                        "{found} must be a list of at least one status code, such as \
                         [\"UNAVAILABLE\"] (gRFC A6: an empty retryableStatusCodes is invalid)"
                    ),
                );
            }
        };
        let mut names: Vec<&str> = Vec::new();
        for (i, code) in list.iter().enumerate() {
            let at = format!("{path}[{i}]");
            let number = match code {
                Json::String(name) => code_named(name),
                Json::Number(_) => code
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
            let shown = value.map(Json::to_string).unwrap_or_default();
            self.field("grpc_retry_on", path, shown);
            let quoted: Vec<String> = names.iter().map(|c| format!("\"{c}\"")).collect();
            let _ = writeln!(body, "grpc_retry_on = [{}]", quoted.join(", "));
        }
    }
}
