//! From a parsed document to validated policies, budgets and breakers:
//! profile selection, `extends` chains, overlays in their documented order,
//! and retrykit-core's own validation mapped back to the text that set each value.

use crate::diagnostic::shown;
use crate::diagnostic::{Diagnostic, Diagnostics, Severity, Span};
use crate::document::{Document, Named};
use crate::env::{EnvOverlays, collisions, env_name};
use crate::layers::{Fields, Layer};
use crate::limits::MAX_EXTENDS_DEPTH;
use crate::schema::engine::{build_breaker, build_budget, build_limit, build_policy, report};
use crate::schema::{Key, POLICY_KEYS, Value};
use crate::section::Section;
use chain::{Broken, Chains, Lineage};
use retrykit_core::breaker::CircuitBreaker;
use retrykit_core::{Policy, PolicyError, RetryBudget};
use retrykit_schema::layering;
use retrykit_schema::suggest::did_you_mean;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

mod breaker_checks;
mod budget_checks;
mod chain;
pub(crate) mod chaos_checks;
mod limit_checks;
mod table_ref;

/// A policy that passed validation, with the settings it came from.
#[derive(Debug, Clone)]
pub(crate) struct ResolvedPolicy {
    pub name: String,
    pub span: Span,
    /// Effective settings that some layer set (the rest are built-in).
    pub fields: Fields,
    /// Ancestors, nearest first.
    pub extends: Lineage,
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

/// A circuit breaker that passed validation.
#[derive(Debug, Clone)]
pub(crate) struct ResolvedBreaker {
    pub name: String,
    pub span: Span,
    pub fields: Fields,
    pub breaker: Arc<CircuitBreaker>,
}

/// A concurrency limit that passed validation.
#[derive(Debug, Clone)]
pub(crate) struct ResolvedLimit {
    pub name: String,
    pub span: Span,
    pub fields: Fields,
    pub limit: Arc<retrykit_core::limit::ConcurrencyLimit>,
}

/// Everything resolved for one profile. Only complete when `diags` gained no error.
pub(crate) struct Resolved {
    pub policies: Vec<ResolvedPolicy>,
    pub budgets: Vec<ResolvedBudget>,
    pub breakers: Vec<ResolvedBreaker>,
    pub limits: Vec<ResolvedLimit>,
}

/// Checks that hold whatever profile is selected: names that collide in the
/// environment, and profile overlays of tables the file lacks.
pub(crate) fn check_structure(doc: &Document, diags: &mut Diagnostics) {
    for section in Section::ALL {
        let plural = section.plural();
        for (first, second) in collisions(doc.tables(section)) {
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
    for section in [Section::Budget, Section::Breaker, Section::Limit] {
        let (what, plural) = (section.what(), section.plural());
        for named in doc.tables(section).iter().filter(|n| n.name == "none") {
            diags.push(
                Diagnostic::error(
                    format!("{plural}.none"),
                    format!("a {what} cannot be named `none`"),
                )
                .at(Some(named.span.clone()), "reserved name")
                .note(format!(
                    "`{what} = \"none\"` means no {what}; choose another name"
                )),
            );
        }
    }
    // Names in file order (for did-you-mean), and as sets: a search per
    // overlay would cost the square of a big file.
    let defined: Vec<(Vec<&str>, HashSet<&str>)> = Section::ALL
        .iter()
        .map(|&section| {
            let names = names(doc.tables(section));
            let set = names.iter().copied().collect();
            (names, set)
        })
        .collect();
    for profile in &doc.profiles {
        for (section, (names, defined)) in Section::ALL.into_iter().zip(&defined) {
            let (what, plural) = (section.what(), section.plural());
            for overlay in profile.overlays(section) {
                if !defined.contains(overlay.name.as_str()) {
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

/// The error for policy `policy` naming `name`, a budget the file lacks.
fn undefined_budget(policy: &str, name: &str, span: Option<Span>, doc: &Document) -> Diagnostic {
    Diagnostic::error(
        format!("policies.{policy}.budget"),
        format!("policy `{policy}` uses budget `{name}`, which is not defined"),
    )
    .at(span, "no such budget")
    .suggest(did_you_mean(
        name,
        doc.budgets.iter().map(|b| b.name.as_str()),
    ))
    .note(format!(
        "define it in a [budgets.{name}] table, or remove it from `budget`"
    ))
}

/// Resolves every policy, budget and breaker for `profile` (already checked to exist).
pub(crate) fn resolve<'d>(
    doc: &'d Document,
    profile: Option<&str>,
    (env, chaos_off): (&EnvOverlays, bool),
    diags: &mut Diagnostics,
) -> Resolved {
    let profile = profile.and_then(|p| doc.profile(p));
    // Lookups by name, built once: a search per lookup would make a file
    // with many policies cost the square of their number.
    let by_name = |named: &'d [Named]| -> HashMap<&'d str, &'d Named> {
        named.iter().map(|n| (n.name.as_str(), n)).collect()
    };
    let (policy_overlays, budget_overlays, breaker_overlays) = match profile {
        Some(p) => (
            by_name(&p.policies),
            by_name(&p.budgets),
            by_name(&p.breakers),
        ),
        None => Default::default(),
    };
    let limit_overlays = profile.map(|p| by_name(&p.limits)).unwrap_or_default();
    let budget_index: HashMap<&str, usize> = doc
        .budgets
        .iter()
        .enumerate()
        .map(|(i, b)| (b.name.as_str(), i))
        .collect();
    // Each budget of the file, when it is valid.
    let built: Vec<Option<ResolvedBudget>> = build_shared(
        (&doc.budgets, Section::Budget),
        (&budget_overlays, &env.budgets),
        |b, fields| {
            let unused = budget_checks::unused_store(&b.name, &b.span, fields);
            let refused = budget_checks::refused_keys(&b.name, &b.span, fields);
            unused.into_iter().chain(refused).collect()
        },
        build_budget,
        diags,
    )
    .into_iter()
    .map(|built| {
        built.map(|(b, fields, budget)| ResolvedBudget {
            name: b.name.clone(),
            span: b.span.clone(),
            fields,
            budget,
        })
    })
    .collect();
    let breaker_index: HashMap<&str, usize> = doc
        .breakers
        .iter()
        .enumerate()
        .map(|(i, b)| (b.name.as_str(), i))
        .collect();
    // Each breaker of the file, when it is valid.
    let breakers: Vec<Option<ResolvedBreaker>> = build_shared(
        (&doc.breakers, Section::Breaker),
        (&breaker_overlays, &env.breakers),
        breaker_checks::checks,
        build_breaker,
        diags,
    )
    .into_iter()
    .map(|built| {
        built.map(|(b, fields, breaker)| ResolvedBreaker {
            name: b.name.clone(),
            span: b.span.clone(),
            fields,
            breaker,
        })
    })
    .collect();
    let limit_index: HashMap<&str, usize> = doc
        .limits
        .iter()
        .enumerate()
        .map(|(i, l)| (l.name.as_str(), i))
        .collect();
    // Each limit of the file, when it is valid.
    let limits: Vec<Option<ResolvedLimit>> = build_shared(
        (&doc.limits, Section::Limit),
        (&limit_overlays, &env.limits),
        limit_checks::checks,
        build_limit,
        diags,
    )
    .into_iter()
    .map(|built| {
        built.map(|(l, fields, limit)| ResolvedLimit {
            name: l.name.clone(),
            span: l.span.clone(),
            fields,
            limit,
        })
    })
    .collect();

    let chains = Chains::link(&doc.policies, |broken| {
        diags.push(chain_error(broken, &doc.policies))
    });
    let inherited = inherit(doc, &chains, &policy_overlays, env);
    let mut policies = Vec::new();
    for (i, p) in doc.policies.iter().enumerate() {
        let Some(this) = inherited[i].as_ref() else {
            continue; // its chain is broken, and reported
        };
        let parent = chains.parent(i).and_then(|j| inherited[j].as_ref());
        // The schema's order: [defaults], the chain farthest first with the
        // policy's own table last, then the profile, then the environment.
        let mut fields = Fields::default();
        for layer in layering::ORDER {
            match layer {
                // retrykit-core's builder starts from them.
                layering::Layer::BuiltIn => {}
                layering::Layer::Defaults => fields.overlay(&doc.defaults, None),
                layering::Layer::Chain => {
                    if let Some(parent) = parent {
                        fields.overlay(&parent.tables, None);
                    }
                    fields.overlay(&p.fields, None);
                }
                layering::Layer::Profile => fields.overlay(&this.profile, None),
                layering::Layer::Environment => fields.overlay(&this.env, None),
            }
        }
        let extends = parent.map(|a| a.lineage.clone()).unwrap_or_default();
        let names = match fields.get(Key::Budget).map(|s| (&s.value, s.span.clone())) {
            Some((Value::Names(names), span)) => Some((names, span)),
            _ => None,
        };
        let mut budgets = Vec::new();
        let mut usable = true;
        let listed = names.iter().flat_map(|(names, _)| names.iter());
        for (i, name) in listed.clone().enumerate() {
            if listed.clone().take(i).any(|earlier| earlier == name) {
                usable = false;
                let span = names.as_ref().and_then(|(_, span)| span.clone());
                diags.push(
                    Diagnostic::error(
                        format!("policies.{}.budget", p.name),
                        format!("policy `{}` lists budget `{name}` twice", p.name),
                    )
                    .at(span, "listed twice")
                    .note("fix: list each budget once (twice, it would count each retry twice)"),
                );
                continue;
            }
            match budget_index
                .get(name.as_str())
                .and_then(|&b| built[b].as_ref())
            {
                Some(b) => budgets.push(b.budget.clone()),
                None => {
                    usable = false;
                    if !budget_index.contains_key(name.as_str()) {
                        let span = names.as_ref().and_then(|(_, span)| span.clone());
                        diags.push(undefined_budget(&p.name, name, span, doc));
                    }
                    // An invalid budget was reported where it is defined.
                }
            }
        }
        let breaker = match table_ref::named(
            &p.name,
            &fields,
            (Key::Breaker, "breaker"),
            doc.breakers.iter().map(|b| b.name.as_str()),
            (&breaker_index, &breakers),
        ) {
            Ok(breaker) => breaker.map(|b| b.breaker.clone()),
            Err(problem) => {
                // An invalid breaker was reported where it is defined.
                problem.into_iter().for_each(|d| diags.push(d));
                continue;
            }
        };
        let limit = match table_ref::named(
            &p.name,
            &fields,
            (Key::Limit, "limit"),
            doc.limits.iter().map(|l| l.name.as_str()),
            (&limit_index, &limits),
        ) {
            Ok(limit) => limit.map(|l| l.limit.clone()),
            Err(problem) => {
                // An invalid limit was reported where it is defined.
                problem.into_iter().for_each(|d| diags.push(d));
                continue;
            }
        };
        let chaos = match chaos_checks::chaos(&p.name, &p.span, &fields, profile, chaos_off) {
            Ok(Some(chaos)) if profile.is_none() => {
                diags.push(chaos_checks::without_profile(&p.name, &p.span, &fields));
                Some(chaos)
            }
            Ok(chaos) => chaos,
            Err(problem) => {
                diags.push(problem);
                continue;
            }
        };
        if !usable {
            continue;
        }
        match build_policy(&p.name, &fields, budgets, breaker, limit, chaos) {
            Ok(policy) => policies.push(ResolvedPolicy {
                name: p.name.clone(),
                span: p.span.clone(),
                fields,
                extends,
                policy: Arc::new(policy),
            }),
            Err(e) => report(
                &e,
                &format!("policy `{}`", p.name),
                &format!("policies.{}", p.name),
                &p.span,
                (&fields, POLICY_KEYS),
                diags,
            ),
        }
    }
    Resolved {
        policies,
        budgets: built.into_iter().flatten().collect(),
        breakers: breakers.into_iter().flatten().collect(),
        limits: limits.into_iter().flatten().collect(),
    }
}

/// Each table of a shared section (budgets, breakers) with the selected
/// profile's overlay and the environment's over it, checked by `checks`
/// (an error among what they find keeps it from being built) and then by
/// retrykit-core in `build`; `None` for one that is invalid, its problems
/// reported where they were written.
fn build_shared<'d, T>(
    (tables, section): (&'d [Named], Section),
    (profile, env): (&HashMap<&str, &Named>, &HashMap<String, Fields>),
    checks: impl Fn(&Named, &Fields) -> Vec<Diagnostic>,
    build: impl Fn(&str, &Fields) -> Result<T, PolicyError>,
    diags: &mut Diagnostics,
) -> Vec<Option<(&'d Named, Fields, Arc<T>)>> {
    let mut out = Vec::with_capacity(tables.len());
    for t in tables {
        let mut fields = t.fields.clone();
        if let Some(o) = profile.get(t.name.as_str()) {
            fields.overlay(&o.fields, None);
        }
        if let Some(o) = env.get(&t.name) {
            fields.overlay(o, None);
        }
        let found = checks(t, &fields);
        let refused = found.iter().any(|d| d.severity == Severity::Error);
        found.into_iter().for_each(|d| diags.push(d));
        if refused {
            out.push(None);
            continue;
        }
        match build(&t.name, &fields) {
            Ok(built) => out.push(Some((t, fields, Arc::new(built)))),
            Err(e) => {
                let (what, plural) = (section.what(), section.plural());
                report(
                    &e,
                    &format!("{what} `{}`", t.name),
                    &format!("{plural}.{}", t.name),
                    &t.span,
                    (&fields, section.keys()),
                    diags,
                );
                out.push(None);
            }
        }
    }
    out
}

/// What a policy passes on to the policies that extend it: its chain's own
/// tables (labelled as `extends` layers), the selected profile's overlays of
/// them, the environment's, and the chain's names.
struct Inherited {
    tables: Fields,
    profile: Fields,
    env: Fields,
    /// The policy and its ancestors, nearest first.
    lineage: Lineage,
}

/// Each policy's [`Inherited`] (`None` when its chain is broken), computed
/// once per policy from its parent's, parents first.
fn inherit(
    doc: &Document,
    chains: &Chains,
    profile_overlays: &HashMap<&str, &Named>,
    env: &EnvOverlays,
) -> Vec<Option<Inherited>> {
    let mut inherited: Vec<Option<Inherited>> = (0..doc.policies.len()).map(|_| None).collect();
    for &i in chains.order() {
        let p = &doc.policies[i];
        let parent = chains.parent(i).and_then(|j| inherited[j].as_ref());
        let mut own = Inherited {
            tables: parent.map(|a| a.tables.clone()).unwrap_or_default(),
            profile: parent.map(|a| a.profile.clone()).unwrap_or_default(),
            env: parent.map(|a| a.env.clone()).unwrap_or_default(),
            lineage: Lineage::extending(
                &p.name,
                &parent.map(|a| a.lineage.clone()).unwrap_or_default(),
            ),
        };
        own.tables
            .overlay(&p.fields, Some(&Layer::Extends(p.name.clone())));
        if let Some(o) = profile_overlays.get(p.name.as_str()) {
            own.profile.overlay(&o.fields, None);
        }
        if let Some(o) = env.policies.get(&p.name) {
            own.env.overlay(o, None);
        }
        inherited[i] = Some(own);
    }
    inherited
}

/// The diagnostic for a broken `extends` chain.
fn chain_error(broken: Broken<'_>, policies: &[Named]) -> Diagnostic {
    match broken {
        Broken::Unknown { from, target } => Diagnostic::error(
            format!("policies.{}.extends", from.name),
            format!(
                "policy `{}` extends `{target}`, which is not defined",
                from.name
            ),
        )
        .at(
            from.extends.as_ref().map(|(_, s)| s.clone()),
            "no such policy",
        )
        .suggest(did_you_mean(
            target,
            policies.iter().map(|p| p.name.as_str()),
        ))
        .note("`extends` names another [policies.NAME] table in this file"),
        Broken::TooDeep { from } => Diagnostic::error(
            format!("policies.{}.extends", from.name),
            format!(
                "policy `{}` has more than {MAX_EXTENDS_DEPTH} ancestors through `extends`, but a chain may be at most {MAX_EXTENDS_DEPTH} deep",
                shown(&from.name)
            ),
        )
        .at(
            from.extends.as_ref().map(|(_, s)| s.clone()),
            "too deep",
        )
        .note("the limit (MAX_EXTENDS_DEPTH in retrykit-config) bounds the time and memory a load takes")
        .note("extend a policy nearer the root, or move shared settings to [defaults]"),
        Broken::Cycle(mut members) => {
            // Start at the smallest name, so the same ring reads the same
            // whichever policy led into it.
            let start = (0..members.len())
                .min_by_key(|&i| &members[i].name)
                .unwrap_or(0);
            members.rotate_left(start);
            let path = members
                .iter()
                .chain(members.first())
                .map(|m| m.name.as_str())
                .collect::<Vec<_>>()
                .join(" → ");
            let first = members[0];
            Diagnostic::error(
                format!("policies.{}.extends", first.name),
                format!("`extends` forms a cycle: {path}"),
            )
            .at(
                first.extends.as_ref().map(|(_, s)| s.clone()),
                "cycle starts here",
            )
            .note("a policy cannot inherit from itself; remove `extends` from one of them")
        }
    }
}
