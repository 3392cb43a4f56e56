//! One warning per value, however many policies inherit it: findings are
//! grouped by the text that set the value, and the warning names the
//! policies it applies to.

use crate::diagnostic::{Diagnostic, Diagnostics, Span};
use crate::layers::{Layer, Set};
use crate::resolve::ResolvedPolicy;
use crate::schema::Key;
use std::collections::HashMap;

/// How many affected policies a warning lists by name.
const LISTED: usize = 5;

/// Something risky about one policy.
pub(super) struct Finding {
    /// The setting it is about.
    pub key: Key,
    /// Where that setting's value was written (`None`: the policy as a whole).
    pub set: Option<Set>,
    /// What is wrong, the same for every policy sharing the value.
    pub headline: String,
    /// What differs between the policies that share it (`first wait 2s`).
    pub detail: Option<String>,
    pub label: String,
    pub notes: Vec<String>,
}

/// Where a value came from, as a warning names it.
#[derive(Clone, PartialEq)]
enum Origin {
    Policy(String),
    Defaults,
    Profile(String),
    Env(String),
}

struct Group {
    finding: Finding,
    origin: Origin,
    span: Span,
    /// Each affected policy and its detail.
    policies: Vec<(String, Option<String>)>,
}

/// Findings of every policy, grouped by (where the value was set, headline).
#[derive(Default)]
pub(super) struct Groups {
    index: HashMap<(String, usize, usize, String), usize>,
    groups: Vec<Group>,
}

impl Groups {
    pub(super) fn add(&mut self, p: &ResolvedPolicy, finding: Finding) {
        let (origin, span) = match &finding.set {
            Some(Set {
                span: Some(span),
                layer,
                ..
            }) => (origin(layer, &p.name), span.clone()),
            _ => (Origin::Policy(p.name.clone()), p.span.clone()),
        };
        let range = span.range();
        let id = (
            span.source().name().to_owned(),
            range.start,
            range.end,
            finding.headline.clone(),
        );
        let detail = finding.detail.clone();
        match self.index.get(&id) {
            Some(&i) => self.groups[i].policies.push((p.name.clone(), detail)),
            None => {
                self.index.insert(id, self.groups.len());
                self.groups.push(Group {
                    finding,
                    origin,
                    span,
                    policies: vec![(p.name.clone(), detail)],
                });
            }
        }
    }

    pub(super) fn report(self, diags: &mut Diagnostics) {
        for g in self.groups {
            diags.push(g.into_diagnostic());
        }
    }
}

fn origin(layer: &Layer, policy: &str) -> Origin {
    match layer {
        Layer::Builtin | Layer::File => Origin::Policy(policy.to_owned()),
        Layer::Extends(owner) => Origin::Policy(owner.clone()),
        Layer::Defaults => Origin::Defaults,
        Layer::Profile(name) => Origin::Profile(name.clone()),
        Layer::Env(var) => Origin::Env(var.clone()),
    }
}

impl Group {
    fn into_diagnostic(self) -> Diagnostic {
        let Group {
            finding: f,
            origin,
            span,
            policies,
        } = self;
        let first = &policies[0];
        let key = match &origin {
            Origin::Defaults => format!("defaults.{}", f.key.name()),
            Origin::Policy(owner) => format!("policies.{owner}.{}", f.key.name()),
            Origin::Profile(_) | Origin::Env(_) => format!("policies.{}.{}", first.0, f.key.name()),
        };
        let subject = match &origin {
            Origin::Policy(owner) => format!("policy `{owner}`"),
            Origin::Defaults => "[defaults]".to_owned(),
            Origin::Profile(name) => format!("profile `{name}`"),
            Origin::Env(var) => var.clone(),
        };
        let only_the_owner = policies.len() == 1 && origin == Origin::Policy(first.0.clone());
        let mut d = if only_the_owner {
            let detail = first
                .1
                .as_ref()
                .map(|d| format!(" ({d})"))
                .unwrap_or_default();
            Diagnostic::warning(key, format!("{subject}: {}{detail}", f.headline))
        } else {
            Diagnostic::warning(key, format!("{subject}: {}", f.headline))
                .note(applies_to(&policies))
        };
        d = d.at(Some(span), f.label);
        for note in f.notes {
            d = d.note(note);
        }
        d
    }
}

/// `applies to policies `a` (first wait 2s), `b` and 3 more`.
fn applies_to(policies: &[(String, Option<String>)]) -> String {
    let mut named: Vec<String> = policies
        .iter()
        .take(LISTED)
        .map(|(name, detail)| match detail {
            Some(d) => format!("`{name}` ({d})"),
            None => format!("`{name}`"),
        })
        .collect();
    if policies.len() > LISTED {
        named.push(format!("{} more", policies.len() - LISTED));
    }
    let list = match named.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => named.concat(),
    };
    let what = if policies.len() == 1 {
        "policy"
    } else {
        "policies"
    };
    format!("applies to {what} {list}")
}
