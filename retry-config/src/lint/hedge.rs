//! Warnings about hedging settings that a file can show wrong. (The third
//! of the lints, a fixed `hedge_after` below the policy's observed
//! median, needs latencies only a running program has: it is the loop's.)

use super::group::Finding;
use crate::layers::Set;
use crate::resolve::ResolvedPolicy;
use crate::schema::Key;
use retrykit_core::hedge::HedgeAfter;
use retrykit_schema::duration::show_duration;
use std::collections::HashSet;
use std::ops::Range;

/// The hedging findings of one policy: hedging without a retry budget, and
/// an attempt timeout that cancels attempts before a hedge is due.
pub(super) fn findings(p: &ResolvedPolicy, hedging: &Hedging) -> Vec<Finding> {
    let policy = &p.policy;
    let Some(settings) = policy.hedge_settings() else {
        return unused(p, hedging);
    };
    let mut out = Vec::new();
    if let (HedgeAfter::Fixed(after), Some(deadline)) = (settings.after, policy.deadline())
        && after >= deadline
    {
        out.push(Finding {
            key: Key::HedgeAfter,
            set: p.fields.get(Key::HedgeAfter).cloned(),
            headline: "hedge_after is not shorter than the deadline".into(),
            detail: Some(format!(
                "hedge_after {} against deadline {}",
                show_duration(after),
                show_duration(deadline)
            )),
            label: "never due".into(),
            notes: vec![
                "the call ends at its deadline before a hedge is due, so no hedge is ever sent".into(),
                "lower hedge_after below the deadline, raise the deadline, or set hedge_after = \"none\"".into(),
            ],
        });
    }
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

/// Where the hedging policies' `hedge_floor` and `hedge_share` were set:
/// a value set there (in `[defaults]`, or a policy others extend) is used.
pub(super) struct Hedging(HashSet<(Key, String, Range<usize>)>);

impl Hedging {
    pub(super) fn of(policies: &[ResolvedPolicy]) -> Self {
        let mut used = HashSet::new();
        for p in policies
            .iter()
            .filter(|p| p.policy.hedge_settings().is_some())
        {
            for key in [Key::HedgeFloor, Key::HedgeShare] {
                if let Some(at) = p.fields.get(key).and_then(|s| where_set(key, s)) {
                    used.insert(at);
                }
            }
        }
        Hedging(used)
    }
}

fn where_set(key: Key, set: &Set) -> Option<(Key, String, Range<usize>)> {
    let span = set.span.as_ref()?;
    Some((key, span.source().name().to_owned(), span.range()))
}

/// `hedge_floor` and `hedge_share` set where no policy hedges: they do
/// nothing without `hedge_after`.
fn unused(p: &ResolvedPolicy, hedging: &Hedging) -> Vec<Finding> {
    [Key::HedgeFloor, Key::HedgeShare]
        .into_iter()
        .filter_map(|key| {
            let set = p.fields.get(key)?;
            if where_set(key, set).is_some_and(|at| hedging.0.contains(&at)) {
                return None;
            }
            Some(Finding {
                key,
                set: Some(set.clone()),
                headline: format!("{} is unused without hedge_after", key.name()),
                detail: None,
                label: "unused".into(),
                notes: vec![format!(
                    "the policy sends no hedges, so {} changes nothing; set hedge_after (e.g. hedge_after = \"p95\") to hedge, or remove {}",
                    key.name(),
                    key.name()
                )],
            })
        })
        .collect()
}
