//! Warnings about circuit breakers that a file can show will not work as
//! written: a breaker no policy names, a policy whose attempts have no
//! time limit (a hung probe holds a half-open breaker), a `slow_call` that
//! the policy's `attempt_timeout` always reaches first, and a `trip_on`
//! class nothing is known to produce.

use super::group::Finding;
use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::resolve::{ResolvedBreaker, ResolvedPolicy};
use crate::schema::Key;
use retrykit_schema::classes::BUILT_IN;
use retrykit_schema::duration::show_duration;
use std::sync::Arc;

/// The breaker findings of one policy: no `attempt_timeout`, and a
/// `slow_call` at or above it.
pub(super) fn findings(p: &ResolvedPolicy) -> Vec<Finding> {
    let policy = &p.policy;
    let Some(breaker) = policy.breaker() else {
        return Vec::new();
    };
    let name = breaker.name().unwrap_or_default();
    let finding = |headline: String, detail: Option<String>, notes: Vec<String>| Finding {
        key: Key::Breaker,
        set: p.fields.get(Key::Breaker).cloned(),
        headline,
        detail,
        label: "breaker".into(),
        notes,
    };
    let Some(timeout) = policy.attempt_timeout() else {
        let bound = match policy.deadline() {
            Some(d) => format!(
                "only the deadline ({}) ends a hung probe, and until then the breaker refuses every other attempt",
                show_duration(d)
            ),
            None => "nothing ends a hung probe, so the breaker may never close".to_owned(),
        };
        return vec![finding(
            format!("breaker `{name}` on a policy with no attempt_timeout"),
            None,
            vec![
                format!(
                    "half-open lets {} probe attempt(s) through and waits for their answers; {bound}",
                    breaker.probes()
                ),
                "set attempt_timeout (e.g. attempt_timeout = \"5s\") so that a probe that hangs fails and the breaker decides".into(),
            ],
        )];
    };
    match breaker.slow_call() {
        Some(slow) if slow >= timeout => vec![finding(
            format!("breaker `{name}`'s slow_call is not shorter than the policy's attempt_timeout"),
            Some(format!(
                "slow_call {} against attempt_timeout {}",
                show_duration(slow),
                show_duration(timeout)
            )),
            vec![
                "an attempt is cut short by attempt_timeout before it becomes a slow call, and a timed-out attempt already counts as a failure, so slow_call never changes anything".into(),
                format!(
                    "lower slow_call in [breakers.{name}] below attempt_timeout, or remove it"
                ),
            ],
        )],
        _ => Vec::new(),
    }
}

/// Warns about each breaker no policy names, and each `trip_on` class that
/// nothing is known to produce: not built in, not retried by any policy, and
/// (when the program's classes are known) not declared, which the reading of
/// `trip_on` already warns about.
pub(crate) fn lint_breakers(
    breakers: &[ResolvedBreaker],
    policies: &[ResolvedPolicy],
    known_classes: Option<&[String]>,
    diags: &mut Diagnostics,
) {
    let retried: Vec<&str> = policies
        .iter()
        .filter_map(|p| p.policy.retry_on())
        .flatten()
        .map(|c| &**c)
        .collect();
    for b in breakers {
        let used = policies.iter().any(|p| {
            p.policy
                .breaker()
                .is_some_and(|pb| Arc::ptr_eq(pb, &b.breaker))
        });
        if !used {
            diags.push(
                Diagnostic::warning(
                    format!("breakers.{}", b.name),
                    format!("breaker `{}` is not used by any policy", b.name),
                )
                .at(Some(b.span.clone()), "unused")
                .note(format!(
                    "add breaker = \"{}\" to the policies that call the dependency it guards, or remove the table",
                    b.name
                )),
            );
        }
        let Some(set) = b.fields.get(Key::TripOn) else {
            continue;
        };
        if known_classes.is_some() {
            continue;
        }
        for class in b.breaker.trip_on() {
            let class = &**class;
            if BUILT_IN.contains(&class) || retried.contains(&class) {
                continue;
            }
            diags.push(
                Diagnostic::warning(
                    format!("breakers.{}.trip_on", b.name),
                    format!(
                        "breaker `{}`: `trip_on` names class `{class}`, which no policy retries and which is not built in",
                        b.name
                    ),
                )
                .at(set.span.clone().or_else(|| Some(b.span.clone())), "unknown class")
                .note(format!("built-in classes: {}", BUILT_IN.join(", ")))
                .note(format!(
                    "if no error is ever of class `{class}`, it counts nothing; check its spelling against the #[classify(...)] of the error types, or remove it"
                )),
            );
        }
    }
}
