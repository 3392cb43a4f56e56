//! Warnings about hedging settings that a file can show wrong. (The third
//! of the lints, a fixed `hedge_after` below the policy's observed
//! median, needs latencies only a running program has: it is the loop's.)

use super::group::Finding;
use crate::resolve::ResolvedPolicy;
use crate::schema::Key;
use retrykit_core::hedge::HedgeAfter;
use retrykit_schema::duration::show_duration;

/// The hedging findings of one policy: hedging without a retry budget, and
/// an attempt timeout that cancels attempts before a hedge is due.
pub(super) fn findings(p: &ResolvedPolicy) -> Vec<Finding> {
    let policy = &p.policy;
    let Some(settings) = policy.hedge_settings() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if policy.budgets().is_empty() {
        out.push(Finding {
            key: Key::HedgeAfter,
            set: p.fields.get(Key::HedgeAfter).cloned(),
            headline: "hedging without any budget".into(),
            detail: None,
            label: "hedges".into(),
            notes: vec![
                format!(
                    "hedges count against the retry budget, as in gRPC; without one only hedge_share ({}) of this process's calls limits the extra load, and every process adds its own",
                    crate::show_number(settings.share)
                ),
                "add budget = \"NAME\" naming a [budgets.NAME] table shared with the policy's retries".into(),
            ],
        });
    }
    // The delay a hedge waits that the file states: a fixed one, or the
    // floor a percentile starts from.
    let (stated, key) = match settings.after {
        HedgeAfter::Fixed(d) => (d, Key::HedgeAfter),
        HedgeAfter::Percentile(_) => (settings.floor, Key::HedgeFloor),
    };
    if let Some(timeout) = policy.attempt_timeout()
        && timeout <= stated
    {
        let set = p
            .fields
            .get(Key::AttemptTimeout)
            .or_else(|| p.fields.get(key));
        out.push(Finding {
            key: Key::AttemptTimeout,
            set: set.cloned(),
            headline: format!("attempt_timeout is not longer than {}", key.name()),
            detail: Some(format!(
                "attempt_timeout {} against {} {}",
                show_duration(timeout),
                key.name(),
                show_duration(stated)
            )),
            label: "attempt_timeout".into(),
            notes: vec![format!(
                "an attempt is cancelled before a hedge is due, so no hedge is ever sent; lower {} or raise attempt_timeout",
                key.name()
            )],
        });
    }
    out
}
