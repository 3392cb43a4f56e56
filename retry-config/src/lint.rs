//! Warnings: valid policies that are known to hurt the system they protect.
//!
//! Each warning is about a value someone wrote, never a built-in default
//! (those are chosen to be safe), and points at the text that set it; a
//! value inherited by many policies (from `[defaults]` or an `extends`
//! chain) warns once there, naming the policies it applies to.
//!
//! Without a deadline, only `max_attempts` bounds how long a failing call
//! keeps retrying. The limit warns when its retries, each waiting the
//! longest wait the policy allows before its last one, add up past
//! [`HORIZON`]: a bound that loose is no bound in practice.

mod breaker;
mod group;
mod hedge;
mod limit;

pub(crate) use breaker::lint_breakers;
pub(crate) use limit::lint_limits;

use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::layers::Layer;
use crate::resolve::{ResolvedBudget, ResolvedPolicy};
use crate::schema::Key;
use group::{Finding, Groups};
use retrykit_core::{Backoff, Jitter, Policy};
use retrykit_schema::duration::show_duration;
use retrykit_schema::grpc;
use std::time::Duration;

/// How far past the deadline the worst case may run before it is "far beyond".
const FAR_BEYOND: u32 = 2;

/// How long a failing call may keep waiting to retry, with no deadline,
/// before its attempt limit counts as no bound: an hour outlasts any caller
/// waiting for the answer and most outages worth riding out, and a call
/// meant to run longer says so best with an explicit deadline.
pub(crate) const HORIZON: Duration = Duration::from_secs(3600);

/// Warns about every policy, once per value that is risky.
pub(crate) fn lint_policies(policies: &[ResolvedPolicy], diags: &mut Diagnostics) {
    let mut groups = Groups::default();
    let hedging = hedge::Hedging::of(policies);
    for p in policies {
        for finding in findings(p, &hedging) {
            groups.add(p, finding);
        }
    }
    groups.report(diags);
}

fn findings(p: &ResolvedPolicy, hedging: &hedge::Hedging) -> Vec<Finding> {
    let policy = &p.policy;
    // `fields` holds only values some layer set: built-in defaults are absent.
    let set = |key: Key| p.fields.get(key);
    let finding = |key: Key, headline: String, label: &str| Finding {
        key,
        set: set(key).cloned(),
        headline,
        detail: None,
        label: label.to_owned(),
        notes: Vec::new(),
    };
    let mut out = Vec::new();
    let retries = policy.max_attempts() != Some(1);

    if policy.jitter() == Jitter::None && retries && set(Key::Jitter).is_some() {
        let mut f = finding(Key::Jitter, "no jitter".into(), "no jitter");
        f.notes = vec![
            "clients that failed together wait the same and retry together, in synchronised waves"
                .into(),
            "use jitter = \"full\" (or equal, decorrelated, { proportional = 0.25 })".into(),
        ];
        out.push(f);
    }
    // Every wait is a multiple of base, raised to min_delay (waits are
    // clamped into [min_delay, cap] after jitter): with both zero, a failing
    // call retries at once, as fast as the other side can fail.
    if retries
        && policy.base().is_zero()
        && policy.min_delay().is_zero()
        && set(Key::Base).is_some()
    {
        let mut f = finding(
            Key::Base,
            "base is 0, so every wait is 0: a hot retry loop".into(),
            "no wait",
        );
        f.notes = vec![
            "a failing call retries at once, as fast as the other side fails, and a fleet of them floods a service that is already down".into(),
            "set base to at least 1ms (e.g. base = \"100ms\"), or max_attempts = 1 to not retry".into(),
        ];
        out.push(f);
    }
    out.extend(hot_schedule(p, retries));
    match policy.deadline() {
        Some(deadline) if retries => out.extend(against_deadline(p, deadline, finding)),
        Some(_) => {}
        None => out.extend(unbounded(p)),
    }
    if let Some(classes) = policy.retry_on()
        && classes.is_empty()
    {
        let mut f = finding(
            Key::RetryOn,
            "`retry_on` is empty, so no error is retried".into(),
            "empty",
        );
        f.notes = vec![
            "remove retry_on to retry every non-permanent error, or set max_attempts = 1".into(),
        ];
        out.push(f);
    }
    if let Some(codes) = policy.grpc_retry_on() {
        out.extend(grpc_codes_shut_out(policy, codes, finding));
    }
    if let Some(f) = p.fields.get(Key::Factor)
        && f.layer == Layer::File
        && !matches!(policy.backoff(), Backoff::Exponential { .. })
    {
        let mut f = finding(
            Key::Factor,
            format!("`factor` is ignored by {} backoff", policy.backoff().name()),
            "ignored",
        );
        f.notes = vec!["remove factor, or use backoff = \"exponential\"".into()];
        out.push(f);
    }
    out.extend(hedge::findings(p, hedging));
    out.extend(breaker::findings(p));
    out
}

/// gRPC codes `grpc_retry_on` names whose class `retry_on` leaves out, so
/// they are never retried: a named code keeps its default class, or is
/// transient when that class is permanent (as the `grpc` layer classifies).
fn grpc_codes_shut_out(
    policy: &Policy,
    codes: &[u8],
    finding: impl Fn(Key, String, &str) -> Finding,
) -> Option<Finding> {
    let shut_out: Vec<String> = codes
        .iter()
        .filter_map(|&code| {
            let class = match grpc::default_class(code)? {
                "permanent" => "transient",
                class => class,
            };
            (!policy.retries_class(class))
                .then(|| format!("{} ({class})", grpc::code_name(code).unwrap_or("?")))
        })
        .collect();
    if shut_out.is_empty() {
        return None;
    }
    let mut f = finding(
        Key::GrpcRetryOn,
        format!(
            "{} never retried: `retry_on` leaves out the class",
            shut_out.join(", ")
        ),
        "never retried",
    );
    f.notes = vec!["add the class to retry_on, or remove the code from grpc_retry_on".into()];
    Some(f)
}

/// The least a retry should wait on average, whatever the schedule's shape:
/// less, and a failing call retries about as fast as the other side fails.
const HOT_WAIT: Duration = Duration::from_millis(1);
/// How many retries of an unlimited schedule [`hot_schedule`] adds up.
const HOT_RETRIES: u32 = 100;

/// A schedule whose waits add up to less than [`HOT_WAIT`] per retry (a
/// hot loop, though no one value is 0: `base = "1ns"` with `cap = "1ns"`),
/// judged on what the waits add up to over the retries the policy allows.
/// (Waits of 0 have their own warning, at `base`.)
fn hot_schedule(p: &ResolvedPolicy, retries: bool) -> Option<Finding> {
    let policy = &p.policy;
    let zero = policy.base().is_zero() && policy.min_delay().is_zero();
    if !retries || zero {
        return None;
    }
    let n = match policy.max_attempts() {
        Some(0) | None => HOT_RETRIES,
        Some(max) => (max - 1).min(HOT_RETRIES),
    };
    let total: Duration = (0..n).map(|i| policy.envelope(i)).sum();
    if total >= HOT_WAIT * n {
        return None;
    }
    // At the value someone wrote that keeps the waits short.
    let key = [Key::Cap, Key::Base, Key::MinDelay]
        .into_iter()
        .find(|&k| p.fields.get(k).is_some())?;
    Some(Finding {
        key,
        set: p.fields.get(key).cloned(),
        headline: format!(
            "{n} retries wait {} in all, under {} each: a hot retry loop",
            show_duration(total),
            show_duration(HOT_WAIT)
        ),
        detail: None,
        label: "waits too short".into(),
        notes: vec![
            "a failing call retries about as fast as the other side fails, and a fleet of them floods a service that is already down".into(),
            "raise base and cap to at least 1ms (e.g. base = \"100ms\", cap = \"10s\"), or set max_attempts = 1 to not retry".into(),
        ],
    })
}

/// Settings that the deadline makes useless.
fn against_deadline(
    p: &ResolvedPolicy,
    deadline: Duration,
    finding: impl Fn(Key, String, &str) -> Finding,
) -> Vec<Finding> {
    let policy = &p.policy;
    let mut out = Vec::new();
    let first = policy.envelope(0);
    if deadline <= first {
        let mut f = finding(
            Key::Deadline,
            format!(
                "the deadline ({}) is not longer than the first wait",
                show_duration(deadline)
            ),
            "deadline",
        );
        f.detail = Some(format!("first wait {}", show_duration(first)));
        f.notes = vec![
            "a failing call may give up before its first retry; raise deadline or lower base"
                .into(),
        ];
        out.push(f);
    }
    // A built-in cap is not the user's choice: only a cap someone set is judged.
    if policy.cap() > deadline && p.fields.get(Key::Cap).is_some() {
        let mut f = finding(
            Key::Cap,
            format!(
                "cap ({}) is beyond the deadline",
                show_duration(policy.cap())
            ),
            "cap",
        );
        f.detail = Some(format!("deadline {}", show_duration(deadline)));
        f.notes = vec!["waits that long can never be used; lower cap below the deadline".into()];
        out.push(f);
    }
    if let (Some(timeout), Some(max)) = (policy.attempt_timeout(), policy.max_attempts()) {
        let worst = worst_case(policy, timeout, max);
        if worst > deadline.saturating_mul(FAR_BEYOND) {
            let mut f = finding(
                Key::AttemptTimeout,
                "attempt_timeout × max_attempts plus the waits is far beyond the deadline".into(),
                "attempt_timeout",
            );
            f.detail = Some(format!(
                "{} against a deadline of {}",
                show_duration(worst),
                show_duration(deadline)
            ));
            f.notes = vec!["the deadline ends calls long before max_attempts is reached; lower max_attempts or attempt_timeout, or raise deadline".into()];
            out.push(f);
        }
    }
    out
}

/// An attempt limit with no deadline that lets a failing call wait past [`HORIZON`].
fn unbounded(p: &ResolvedPolicy) -> Option<Finding> {
    let policy = &p.policy;
    let max = policy.max_attempts()?;
    let retries = max.checked_sub(1).filter(|&r| r > 0)?;
    let longest = policy.envelope(retries - 1);
    let waits = longest.saturating_mul(retries);
    if waits <= HORIZON {
        return None;
    }
    // Point at the limit, else at the cap that makes its waits long; with
    // both built in, the bound is the library's, which is short.
    let set = [Key::MaxAttempts, Key::Cap]
        .into_iter()
        .find_map(|k| p.fields.get(k).map(|s| (k, s)));
    let (key, set) = set?;
    Some(Finding {
        key,
        set: Some(set.clone()),
        headline: format!("max_attempts = {max} with no deadline bounds nothing in practice"),
        detail: Some(format!(
            "{retries} waits of up to {} add up to {}",
            show_duration(longest),
            about(waits)
        )),
        label: if key == Key::MaxAttempts { "attempt limit" } else { "cap" }.into(),
        notes: vec![
            format!(
                "without a deadline only max_attempts bounds a failing call; past {} of waiting (the horizon this check uses) it outlives the caller waiting for it and most outages worth riding out, while it keeps loading a service that is down",
                show_duration(HORIZON)
            ),
            "set a deadline (e.g. deadline = \"2m\"; max_attempts = 0 then means \"until the deadline\"), or lower max_attempts".into(),
        ],
    })
}

/// A long duration to two units: `136y 36d`, not down to the nanosecond.
fn about(d: Duration) -> String {
    show_duration(d)
        .split(' ')
        .take(2)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Every attempt running to its timeout, plus every wait at its envelope.
fn worst_case(policy: &Policy, timeout: Duration, max: u32) -> Duration {
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
                .budgets()
                .iter()
                .any(|pb| std::sync::Arc::ptr_eq(pb, &b.budget))
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
