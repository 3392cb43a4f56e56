//! The import checks its own output with `retry-policy check`'s validation
//! (the [`crate::check`] module's, over `retrykit_config::check_str`) and
//! words each finding after the JSON path it came from: a service config
//! that A6 accepts but retry.toml cannot hold (a `hedgingDelay` of 0, a
//! `backoffMultiplier` below 1, an `initialBackoff` above `maxBackoff`, a
//! service name no policy name can hold) fails the import rather than
//! becoming a file `check` refuses.
//!
//! The policies of one `methodConfig` share its settings, so a finding
//! about a setting is reported once for the entry, not once per name.

use super::Cx;
use super::json::clip;
use retrykit_config::{Diagnostic, Options, Severity};
use std::collections::HashMap;

/// What the output of a JSON value is: its path, how it was written, and
/// the retry.toml key it became.
pub(super) struct Field {
    /// The retry.toml key (`cap`).
    pub toml: &'static str,
    /// The JSON path (`$.methodConfig[0].retryPolicy.maxBackoff`).
    pub path: String,
    /// The value as the service config wrote it (`"1s"`), or why there is none.
    pub shown: String,
}

/// Where a finding of `check` came from in the service config.
struct Origin {
    /// The JSON path.
    path: String,
    /// What is there, and what it became in retry.toml.
    what: String,
    /// Every retry.toml key of the entry, with its JSON name.
    gloss: Vec<(&'static str, String)>,
    /// A fix in the service config's terms, when check's is in retry.toml's.
    fix: Option<&'static str>,
    /// The key with the policy name taken out: equal for every policy of an entry.
    group: String,
}

/// The fix for a policy name that retry.toml refuses.
const NAME_FIX: &str = "fix: the policy name is the service (and method) with every character but \
     ASCII letters, digits, `-` and `_` written as `-` (the name the gRPC layer looks up): name \
     the service in ASCII (a proto package and service), or drop this entry so a service-wide \
     or every-method entry covers it";

impl Cx {
    /// Checks `toml` as `retry-policy check` would; every finding becomes
    /// an error (or a warning) at its JSON path.
    pub(super) fn verify(&mut self, toml: &str) {
        let name = "the imported retry.toml";
        let diags = crate::check::check(toml, name, &Options::new());
        // (severity is error, group) -> (index in out, how many more).
        let mut seen: HashMap<(bool, String), (usize, usize)> = HashMap::new();
        let mut out: Vec<(bool, String)> = Vec::new();
        for d in diags.iter() {
            let error = d.severity == Severity::Error;
            let origin = self.origin(d);
            if let Some((_, more)) = seen.get_mut(&(error, origin.group.clone())) {
                *more += 1;
                continue;
            }
            seen.insert((error, origin.group.clone()), (out.len(), 0));
            out.push((error, describe(d, &origin, error)));
        }
        let mut counts: Vec<_> = seen.into_values().collect();
        counts.sort_unstable();
        for (at, more) in counts {
            if more > 0 {
                let line = &mut out[at].1;
                line.push_str(&format!(" (and the same for {more} more of its names)"));
            }
        }
        for (error, line) in out {
            if error {
                self.errors.push(line);
            } else {
                self.warnings.push(line);
            }
        }
    }

    /// Where the finding `d` (a key of the output) came from.
    fn origin(&self, d: &Diagnostic) -> Origin {
        let mut parts = d.key.splitn(3, '.');
        let (section, table, key) = (parts.next(), parts.next(), parts.next());
        let whole = |path: &str, what: String| Origin {
            path: path.to_owned(),
            what,
            gloss: Vec::new(),
            fix: None,
            group: d.key.clone(),
        };
        match (section, table, key) {
            (Some("budgets"), Some(_), key) => {
                let gloss = gloss(&self.throttling_fields);
                let field = key.and_then(|k| self.throttling_fields.iter().find(|f| f.toml == k));
                match field {
                    Some(f) => Origin {
                        path: f.path.clone(),
                        what: format!("{} imports as retry.toml's `{}`", f.shown, f.toml),
                        gloss,
                        fix: None,
                        group: d.key.clone(),
                    },
                    None => whole("$.retryThrottling", "its budget".into()),
                }
            }
            (Some("policies"), Some(policy), key) => {
                let Some(named) = self.named.get(policy) else {
                    return whole("$.methodConfig", format!("policy `{}`", clip(policy)));
                };
                let fields = &self.fields[named.config];
                let group = format!("policies.{}.{}", named.config, key.unwrap_or(""));
                let entry = format!("$.methodConfig[{}]", named.config);
                let field = key.and_then(|k| fields.iter().find(|f| f.toml == k));
                match (key, field) {
                    (None, _) => Origin {
                        path: named.path.clone(),
                        what: format!("{} imports as policy `{}`", named.shown, clip(policy)),
                        gloss: Vec::new(),
                        fix: Some(NAME_FIX),
                        group: d.key.clone(),
                    },
                    (Some(_), Some(f)) => Origin {
                        path: f.path.clone(),
                        what: format!("{} imports as retry.toml's `{}`", f.shown, f.toml),
                        gloss: gloss(fields),
                        fix: None,
                        group,
                    },
                    (Some(k), None) => Origin {
                        path: entry,
                        what: format!("its policies' `{k}`"),
                        gloss: gloss(fields),
                        fix: None,
                        group,
                    },
                }
            }
            (Some("policies"), None, _) => whole("$.methodConfig", "its policies".into()),
            _ => whole("$", "the imported file".into()),
        }
    }
}

/// Every retry.toml key of `fields` with the JSON key it came from.
fn gloss(fields: &[Field]) -> Vec<(&'static str, String)> {
    let mut out: Vec<(&'static str, String)> = Vec::new();
    for f in fields {
        let json = f.path.rsplit('.').next().unwrap_or("").to_owned();
        if !out.iter().any(|(t, _)| *t == f.toml) {
            out.push((f.toml, json));
        }
    }
    out
}

/// One line: the JSON path, what it became, check's rule and its fix, and
/// the JSON names of the retry.toml keys the line mentions.
fn describe(d: &Diagnostic, origin: &Origin, error: bool) -> String {
    let verb = if error { "refuses" } else { "warns about" };
    let mut line = format!(
        "{}: {}, which `retry-policy check` {verb}: {}",
        origin.path, origin.what, d.message
    );
    if let Some(s) = &d.suggestion {
        line.push_str(&format!(" (did you mean `{s}`?)"));
    }
    for note in &d.notes {
        line.push_str("; ");
        line.push_str(note);
    }
    if let Some(fix) = origin.fix {
        line.push_str("; ");
        line.push_str(fix);
    }
    let said = format!("{} {}", d.message, d.notes.join(" "));
    let words: Vec<&str> = said
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .collect();
    let named: Vec<String> = origin
        .gloss
        .iter()
        .filter(|(toml, json)| words.contains(toml) && *toml != json.as_str())
        .map(|(toml, json)| format!("`{toml}` is {json}"))
        .collect();
    if !named.is_empty() {
        line.push_str(&format!(" (in the service config, {})", named.join(", ")));
    }
    line
}
