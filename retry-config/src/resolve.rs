//! From a parsed document to validated policies and budgets: profile
//! selection, `extends` chains, overlays in their documented order, and
//! retry-core's own validation mapped back to the text that set each value.

use crate::diagnostic::{Diagnostic, Diagnostics, Span, did_you_mean};
use crate::document::{Document, Named};
use crate::env::{EnvOverlays, collisions, env_name};
use crate::layers::{Fields, Layer};
use crate::schema::{Key, Shape, Value};
use retry_core::{Backoff, Policy, PolicyError, RetryBudget};
use std::collections::HashSet;
use std::sync::Arc;

/// A policy that passed validation, with the settings it came from.
#[derive(Debug, Clone)]
pub(crate) struct ResolvedPolicy {
    pub name: String,
    pub span: Span,
    /// Effective settings that some layer set (the rest are built-in).
    pub fields: Fields,
    /// Ancestors, nearest first.
    pub extends: Vec<String>,
    pub policy: Arc<Policy>,
}

/// A budget that passed validation.
#[derive(Debug, Clone)]
pub(crate) struct ResolvedBudget {
    pub name: String,
    pub span: Span,
    pub fields: Fields,
    pub budget: Arc<RetryBudget>,
}

/// Everything resolved for one profile. Only complete when `diags` gained no error.
pub(crate) struct Resolved {
    pub policies: Vec<ResolvedPolicy>,
    pub budgets: Vec<ResolvedBudget>,
}

/// Checks that hold whatever profile is selected: names that collide in the
/// environment, and profile overlays of policies or budgets the file lacks.
pub(crate) fn check_structure(doc: &Document, diags: &mut Diagnostics) {
    for (plural, named) in [("policies", &doc.policies), ("budgets", &doc.budgets)] {
        for (first, second) in collisions(named) {
            diags.push(
                Diagnostic::error(
                    format!("{plural}.{}", second.name),
                    format!(
                        "{plural} `{}` and `{}` map to the same environment name {}",
                        first.name,
                        second.name,
                        env_name(&second.name)
                    ),
                )
                .at(Some(second.span.clone()), "same environment name")
                .note(format!(
                    "rename one of them; `{}` is defined at {}",
                    first.name, first.span
                )),
            );
        }
    }
    for budget in &doc.budgets {
        if budget.name == "none" {
            diags.push(
                Diagnostic::error("budgets.none", "a budget cannot be named `none`")
                    .at(Some(budget.span.clone()), "reserved name")
                    .note("`budget = \"none\"` means no budget; choose another name"),
            );
        }
    }
    for profile in &doc.profiles {
        for (what, plural, overlays, names) in [
            (
                "policy",
                "policies",
                &profile.policies,
                names(&doc.policies),
            ),
            ("budget", "budgets", &profile.budgets, names(&doc.budgets)),
        ] {
            for overlay in overlays.iter() {
                if !names.contains(&overlay.name.as_str()) {
                    diags.push(
                        Diagnostic::error(
                            format!("profiles.{}.{plural}.{}", profile.name, overlay.name),
                            format!(
                                "profile `{}` changes {what} `{}`, which the file does not define",
                                profile.name, overlay.name
                            ),
                        )
                        .at(Some(overlay.span.clone()), format!("no such {what}"))
                        .suggest(did_you_mean(&overlay.name, names.iter().copied()))
                        .note(format!(
                            "a profile may only change {plural} defined in [{plural}.*], so a name valid in one environment is valid in all"
                        )),
                    );
                }
            }
        }
    }
}

fn names(named: &[Named]) -> Vec<&str> {
    named.iter().map(|n| n.name.as_str()).collect()
}

/// Resolves every policy and budget for `profile` (already checked to exist).
pub(crate) fn resolve(
    doc: &Document,
    profile: Option<&str>,
    env: &EnvOverlays,
    diags: &mut Diagnostics,
) -> Resolved {
    let profile = profile.and_then(|p| doc.profile(p));
    let budgets: Vec<ResolvedBudget> = doc
        .budgets
        .iter()
        .filter_map(|b| {
            let mut fields = b.fields.clone();
            if let Some(o) = profile.and_then(|p| p.budgets.iter().find(|o| o.name == b.name)) {
                fields.overlay(&o.fields, None);
            }
            if let Some(o) = env.budgets.get(&b.name) {
                fields.overlay(o, None);
            }
            let built = build_budget(&fields);
            match built {
                Ok(budget) => Some(ResolvedBudget {
                    name: b.name.clone(),
                    span: b.span.clone(),
                    fields,
                    budget: Arc::new(budget),
                }),
                Err(e) => {
                    report(
                        &e,
                        &format!("budget `{}`", b.name),
                        &format!("budgets.{}", b.name),
                        &b.span,
                        &fields,
                        diags,
                    );
                    None
                }
            }
        })
        .collect();

    let mut reported_cycles = HashSet::new();
    let mut policies = Vec::new();
    for p in &doc.policies {
        let chain = match chain(doc, p) {
            Ok(chain) => chain,
            Err(ChainError::Unknown { from, target, span }) => {
                diags.push(
                    Diagnostic::error(
                        format!("policies.{}.extends", from.name),
                        format!(
                            "policy `{}` extends `{target}`, which is not defined",
                            from.name
                        ),
                    )
                    .at(Some(span), "no such policy")
                    .suggest(did_you_mean(
                        &target,
                        doc.policies.iter().map(|p| p.name.as_str()),
                    ))
                    .note("`extends` names another [policies.NAME] table in this file"),
                );
                continue;
            }
            Err(ChainError::Cycle(members)) => {
                let mut canonical = members.iter().map(|m| m.name.clone()).collect::<Vec<_>>();
                let start = (0..canonical.len())
                    .min_by_key(|&i| &canonical[i])
                    .unwrap_or(0);
                canonical.rotate_left(start);
                if reported_cycles.insert(canonical.clone()) {
                    let first = members[start];
                    let path = canonical
                        .iter()
                        .chain(canonical.first())
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(" → ");
                    diags.push(
                        Diagnostic::error(
                            format!("policies.{}.extends", first.name),
                            format!("`extends` forms a cycle: {path}"),
                        )
                        .at(first.extends.as_ref().map(|(_, s)| s.clone()), "cycle starts here")
                        .note("a policy cannot inherit from itself; remove `extends` from one of them"),
                    );
                }
                continue;
            }
        };
        // chain: the policy first, then its ancestors, nearest first.
        let mut fields = doc.defaults.clone();
        for ancestor in chain.iter().rev() {
            let layer = (ancestor.name != p.name).then(|| Layer::Extends(ancestor.name.clone()));
            fields.overlay(&ancestor.fields, layer.as_ref());
        }
        if let Some(prof) = profile {
            for ancestor in chain.iter().rev() {
                if let Some(o) = prof.policies.iter().find(|o| o.name == ancestor.name) {
                    fields.overlay(&o.fields, None);
                }
            }
        }
        for ancestor in chain.iter().rev() {
            if let Some(o) = env.policies.get(&ancestor.name) {
                fields.overlay(o, None);
            }
        }
        let budget = match fields.get(Key::Budget).map(|s| (&s.value, s.span.clone())) {
            Some((Value::MaybeName(Some(name)), span)) => {
                match budgets.iter().find(|b| &b.name == name) {
                    Some(b) => Some(b.budget.clone()),
                    None => {
                        if doc.budget(name).is_none() {
                            diags.push(
                                Diagnostic::error(
                                    format!("policies.{}.budget", p.name),
                                    format!(
                                        "policy `{}` uses budget `{name}`, which is not defined",
                                        p.name
                                    ),
                                )
                                .at(span, "no such budget")
                                .suggest(did_you_mean(
                                    name,
                                    doc.budgets.iter().map(|b| b.name.as_str()),
                                ))
                                .note(format!(
                                    "define it in a [budgets.{name}] table, or remove `budget`"
                                )),
                            );
                        }
                        // An invalid budget was reported where it is defined.
                        continue;
                    }
                }
            }
            _ => None,
        };
        match build_policy(&p.name, &fields, budget) {
            Ok(policy) => policies.push(ResolvedPolicy {
                name: p.name.clone(),
                span: p.span.clone(),
                fields,
                extends: chain.iter().skip(1).map(|a| a.name.clone()).collect(),
                policy: Arc::new(policy),
            }),
            Err(e) => report(
                &e,
                &format!("policy `{}`", p.name),
                &format!("policies.{}", p.name),
                &p.span,
                &fields,
                diags,
            ),
        }
    }
    Resolved { policies, budgets }
}

enum ChainError<'a> {
    Unknown {
        from: &'a Named,
        target: String,
        span: Span,
    },
    Cycle(Vec<&'a Named>),
}

/// The policy followed by its ancestors, nearest first.
fn chain<'a>(doc: &'a Document, policy: &'a Named) -> Result<Vec<&'a Named>, ChainError<'a>> {
    let mut chain = vec![policy];
    let mut seen = HashSet::from([policy.name.as_str()]);
    let mut current = policy;
    while let Some((target, span)) = &current.extends {
        let Some(next) = doc.policy(target) else {
            return Err(ChainError::Unknown {
                from: current,
                target: target.clone(),
                span: span.clone(),
            });
        };
        if !seen.insert(next.name.as_str()) {
            let i = chain.iter().position(|c| c.name == next.name).unwrap_or(0);
            return Err(ChainError::Cycle(chain[i..].to_vec()));
        }
        chain.push(next);
        current = next;
    }
    Ok(chain)
}

fn build_policy(
    name: &str,
    fields: &Fields,
    budget: Option<Arc<RetryBudget>>,
) -> Result<Policy, PolicyError> {
    let mut b = Policy::builder().name(name).budget(budget);
    let factor = match fields.get(Key::Factor).map(|s| &s.value) {
        Some(Value::Number(f)) => *f,
        _ => 2.0,
    };
    if let Some(Value::Shape(shape)) = fields.get(Key::Backoff).map(|s| &s.value) {
        b = b.backoff(match shape {
            Shape::Constant => Backoff::Constant,
            Shape::Linear => Backoff::Linear,
            Shape::Exponential => Backoff::Exponential { factor },
        });
    } else {
        b = b.backoff(Backoff::Exponential { factor });
    }
    for key in crate::schema::POLICY_KEYS {
        let Some(set) = fields.get(*key) else {
            continue;
        };
        b = match (key, &set.value) {
            (Key::Base, Value::Duration(d)) => b.base(*d),
            (Key::Cap, Value::Duration(d)) => b.cap(*d),
            (Key::MinDelay, Value::Duration(d)) => b.min_delay(*d),
            (Key::Jitter, Value::Jitter(j)) => b.jitter(*j),
            (Key::MaxAttempts, Value::Count(n)) => b.max_attempts(*n),
            (Key::Deadline, Value::MaybeDuration(d)) => b.deadline(*d),
            (Key::AttemptTimeout, Value::MaybeDuration(d)) => b.attempt_timeout(*d),
            (Key::MaxRetryAfter, Value::MaybeDuration(d)) => b.max_retry_after(*d),
            (Key::RetryOn, Value::Classes(c)) => b.retry_on(c.iter().map(String::as_str)),
            _ => b,
        };
    }
    b.build()
}

fn build_budget(fields: &Fields) -> Result<RetryBudget, PolicyError> {
    let mut b = RetryBudget::builder();
    for key in crate::schema::BUDGET_KEYS {
        b = match (key, fields.get(*key).map(|s| &s.value)) {
            (Key::Ratio, Some(Value::Number(n))) => b.ratio(*n),
            (Key::MinPerSec, Some(Value::Number(n))) => b.min_per_sec(*n),
            (Key::Window, Some(Value::Duration(d))) => b.window(*d),
            _ => b,
        };
    }
    b.build()
}

/// Maps retry-core's problems to diagnostics at the text that set the field.
fn report(
    error: &PolicyError,
    subject: &str,
    path: &str,
    name_span: &Span,
    fields: &Fields,
    diags: &mut Diagnostics,
) {
    for problem in error.problems() {
        let key = Key::from_field(problem.field);
        // `factor` rules also apply to the default factor of an exponential backoff.
        let set = key.and_then(|k| fields.get(k)).or_else(|| {
            (problem.field == "factor")
                .then(|| fields.get(Key::Backoff))
                .flatten()
        });
        let mut d = Diagnostic::error(
            format!("{path}.{}", problem.field),
            format!("{subject}: `{}` {}", problem.field, problem.rule),
        );
        d = match set {
            Some(set) => {
                let d = d.at(
                    set.span.clone(),
                    format!("{} = {}", problem.field, set.value),
                );
                if set.layer == Layer::File {
                    d
                } else {
                    d.note(format!("this value comes from {}", set.layer))
                }
            }
            None => d.at(
                Some(name_span.clone()),
                format!("the built-in `{}` applies here", problem.field),
            ),
        };
        d = d.note(format!("fix: {}", problem.fix));
        if let Some(related) = related(problem.field).and_then(|k| fields.get(k).map(|s| (k, s))) {
            let (k, s) = related;
            let at = s
                .span
                .as_ref()
                .map(|s| format!(" at {s}"))
                .unwrap_or_default();
            d = d.note(format!("`{}` is {} ({}{at})", k.name(), s.value, s.layer));
        }
        diags.push(d);
    }
}

/// The other field a rule compares against.
fn related(field: &str) -> Option<Key> {
    match field {
        "cap" => Some(Key::Base),
        "min_delay" => Some(Key::Cap),
        "max_attempts" => Some(Key::Deadline),
        _ => None,
    }
}
