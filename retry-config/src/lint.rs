//! Warnings: valid policies that are known to hurt the system they protect.

use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::layers::Layer;
use crate::resolve::{ResolvedBudget, ResolvedPolicy};
use crate::schema::{Key, show_duration};
use retry_core::{Backoff, Jitter};
use std::time::Duration;

/// How far past the deadline the worst case may run before it is "far beyond".
const FAR_BEYOND: u32 = 2;

pub(crate) fn lint_policy(p: &ResolvedPolicy, diags: &mut Diagnostics) {
    let policy = &p.policy;
    let path = format!("policies.{}", p.name);
    let at = |key: Key| {
        p.fields
            .get(key)
            .and_then(|s| s.span.clone())
            .unwrap_or_else(|| p.span.clone())
    };
    let warn =
        |key: Key, message: String| Diagnostic::warning(format!("{path}.{}", key.name()), message);
    let retries = policy.max_attempts() != Some(1);

    if matches!(policy.backoff(), Backoff::Exponential { .. })
        && retries
        && p.fields.get(Key::Cap).is_none()
    {
        diags.push(
            warn(
                Key::Cap,
                format!("policy `{}`: exponential backoff with no cap set", p.name),
            )
            .at(
                Some(p.span.clone()),
                "no `cap` in this policy, its chain or [defaults]",
            )
            .note(format!(
                "waits grow until the built-in cap of {}; set cap explicitly, e.g. cap = \"30s\"",
                show_duration(policy.cap())
            )),
        );
    }
    if policy.max_attempts().is_none() {
        diags.push(
            warn(Key::MaxAttempts, format!("policy `{}`: unlimited attempts", p.name))
                .at(Some(at(Key::MaxAttempts)), "0 = unlimited")
                .note("only the deadline ends a failing call; during an outage every caller keeps retrying")
                .note("prefer a finite max_attempts such as 5"),
        );
    }
    if policy.jitter() == Jitter::None && retries {
        let (span, label) = match p.fields.get(Key::Jitter) {
            Some(s) => (s.span.clone(), "no jitter"),
            None => (Some(p.span.clone()), "no jitter"),
        };
        diags.push(
            warn(Key::Jitter, format!("policy `{}`: no jitter", p.name))
                .at(span, label)
                .note("clients that failed together wait the same and retry together, in synchronised waves")
                .note("use jitter = \"full\" (or equal, decorrelated, { proportional = 0.25 })"),
        );
    }
    if let Some(deadline) = policy.deadline() {
        let first = policy.envelope(0);
        if retries && deadline <= first {
            diags.push(
                warn(Key::Deadline, format!(
                    "policy `{}`: the deadline ({}) is not longer than the first wait ({})",
                    p.name,
                    show_duration(deadline),
                    show_duration(first)
                ))
                .at(Some(at(Key::Deadline)), "deadline")
                .note("a failing call may give up before its first retry; raise deadline or lower base"),
            );
        }
        if policy.cap() > deadline && retries {
            diags.push(
                warn(
                    Key::Cap,
                    format!(
                        "policy `{}`: cap ({}) is beyond the deadline ({})",
                        p.name,
                        show_duration(policy.cap()),
                        show_duration(deadline)
                    ),
                )
                .at(Some(at(Key::Cap)), "cap")
                .note("waits that long can never be used; lower cap below the deadline"),
            );
        }
        if let (Some(timeout), Some(max)) = (policy.attempt_timeout(), policy.max_attempts()) {
            let worst = worst_case(policy, timeout, max);
            if worst > deadline.saturating_mul(FAR_BEYOND) {
                diags.push(
                    warn(Key::AttemptTimeout, format!(
                        "policy `{}`: attempt_timeout × max_attempts plus the waits ({}) is far beyond the deadline ({})",
                        p.name,
                        show_duration(worst),
                        show_duration(deadline)
                    ))
                    .at(Some(at(Key::AttemptTimeout)), "attempt_timeout")
                    .note("the deadline ends calls long before max_attempts is reached; lower max_attempts or attempt_timeout, or raise deadline"),
                );
            }
        }
    }
    if let Some(classes) = policy.retry_on() {
        let span = at(Key::RetryOn);
        if classes.is_empty() {
            diags.push(
                warn(
                    Key::RetryOn,
                    format!(
                        "policy `{}`: `retry_on` is empty, so no error is retried",
                        p.name
                    ),
                )
                .at(Some(span.clone()), "empty")
                .note(
                    "remove retry_on to retry every non-permanent error, or set max_attempts = 1",
                ),
            );
        }
    }
    if let Some(f) = p.fields.get(Key::Factor)
        && f.layer == Layer::File
        && !matches!(policy.backoff(), Backoff::Exponential { .. })
    {
        diags.push(
            warn(
                Key::Factor,
                format!(
                    "policy `{}`: `factor` is ignored by {} backoff",
                    p.name,
                    policy.backoff().name()
                ),
            )
            .at(f.span.clone(), "ignored")
            .note("remove factor, or use backoff = \"exponential\""),
        );
    }
}

/// Every attempt running to its timeout, plus every wait at its envelope.
fn worst_case(policy: &retry_core::Policy, timeout: Duration, max: u32) -> Duration {
    let mut total = timeout.saturating_mul(max);
    let mut n = 0u32;
    while n + 1 < max {
        let wait = policy.envelope(n);
        if wait == policy.cap() || n >= 100_000 {
            // Every later wait is the cap (or we stop counting one by one).
            let rest = max - 1 - n;
            return total.saturating_add(policy.cap().saturating_mul(rest));
        }
        total = total.saturating_add(wait);
        n += 1;
    }
    total
}

pub(crate) fn lint_budgets(
    budgets: &[ResolvedBudget],
    policies: &[ResolvedPolicy],
    diags: &mut Diagnostics,
) {
    for b in budgets {
        let used = policies.iter().any(|p| {
            p.policy
                .budget()
                .is_some_and(|pb| std::sync::Arc::ptr_eq(pb, &b.budget))
        });
        if !used {
            diags.push(
                Diagnostic::warning(
                    format!("budgets.{}", b.name),
                    format!("budget `{}` is not used by any policy", b.name),
                )
                .at(Some(b.span.clone()), "unused")
                .note(format!(
                    "add budget = \"{}\" to a policy, or remove the table",
                    b.name
                )),
            );
        }
    }
}
