//! A policy's chaos (docs/chaos.md): built from its fields by retrykit-core,
//! switched off by `RETRY_CHAOS=off`, and refused under a production
//! profile that does not say `allow_chaos = true`.

use crate::diagnostic::{Diagnostic, Span};
use crate::document::{ALLOW_CHAOS, PRODUCTION, Profile};
use crate::layers::{Fields, Layer};
use crate::schema::Key;
use crate::schema::engine::build_chaos;
use retrykit_core::chaos::Chaos;
use retrykit_schema::keys::CHAOS_KEYS;
use retrykit_schema::layering::PROFILES;
use std::sync::Arc;

/// The variable that switches every chaos table off at start-up.
pub(crate) const CHAOS_VAR: &str = "RETRY_CHAOS";

/// The chaos of policy `policy` (`None`: none, or off), or its problems: a
/// value out of bounds, or chaos under a production `profile`.
// A refused chaos table is the cold path: boxing its diagnostic would only add noise.
#[allow(clippy::result_large_err)]
pub(crate) fn chaos(
    policy: &str,
    span: &Span,
    fields: &Fields,
    profile: Option<&Profile>,
    off: bool,
) -> Result<Option<Arc<Chaos>>, Diagnostic> {
    let built = build_chaos(fields, off).map_err(|e| {
        let key = e.field.strip_prefix("chaos.").unwrap_or(e.field);
        let set = Key::find(CHAOS_KEYS, key).and_then(|k| fields.get(k));
        let d = Diagnostic::error(
            format!("policies.{policy}.{}", e.field),
            format!("policy `{policy}`: `{}` {}", e.field, e.rule),
        );
        let d = match set {
            Some(set) => with_layer(
                d.at(set.span.clone(), format!("{key} = {}", set.value)),
                &set.layer,
            ),
            None => d.at(Some(span.clone()), "in this policy"),
        };
        d.note("fix: see docs/chaos.md for each key's bounds")
    })?;
    let Some(chaos) = built.filter(Chaos::active) else {
        return Ok(None);
    };
    if let Some(p) = profile.filter(|p| !p.allows_chaos()) {
        // Where the chaos is written: the rate that makes it active.
        let set = [Key::ChaosFaultRate, Key::ChaosLatencyRate]
            .into_iter()
            .filter_map(|k| fields.get(k).map(|s| (k, s)))
            .find(|(_, s)| !matches!(s.value, crate::schema::Value::Number(0.0)));
        let name = &p.name;
        let why = match &p.production {
            Some((_, at)) => format!("[{PROFILES}.{name}] says `{PRODUCTION} = true` at {at}"),
            None => format!("a profile named `{PRODUCTION}` is production's"),
        };
        let mut d = Diagnostic::error(
            format!("policies.{policy}.chaos"),
            format!(
                "policy `{policy}`: chaos ({chaos}) is refused under production profile `{name}`"
            ),
        );
        d = match set {
            Some((k, s)) => with_layer(
                d.at(s.span.clone(), format!("{} = {}", k.name(), s.value)),
                &s.layer,
            ),
            None => d.at(Some(span.clone()), "chaos in this policy"),
        };
        return Err(d.note(why).note(format!(
            "fix: keep chaos in a test or staging profile; to inject it in production on purpose, \
             set `{ALLOW_CHAOS} = true` in [{PROFILES}.{name}]"
        )));
    }
    Ok(Some(Arc::new(chaos)))
}

/// A warning for policy `policy`'s active chaos when no profile is
/// selected: the base settings are what a program without `RETRY_PROFILE`
/// runs, production's included, and no production guard applies to them.
pub(crate) fn without_profile(policy: &str, span: &Span, fields: &Fields) -> Diagnostic {
    let set = [Key::ChaosFaultRate, Key::ChaosLatencyRate]
        .into_iter()
        .find_map(|k| fields.get(k).map(|s| (k, s)));
    let d = Diagnostic::warning(
        format!("policies.{policy}.chaos"),
        format!("policy `{policy}` injects chaos with no profile selected"),
    );
    let d = match set {
        Some((k, s)) => d.at(s.span.clone(), format!("{} = {}", k.name(), s.value)),
        None => d.at(Some(span.clone()), "chaos in this policy"),
    };
    d.note("the base settings are what a program runs without RETRY_PROFILE, and no production guard applies to them")
        .note(format!(
            "fix: move the chaos table to the profile it is meant for ([{PROFILES}.staging.policies.{policy}.chaos])"
        ))
}

fn with_layer(d: Diagnostic, layer: &Layer) -> Diagnostic {
    match layer {
        Layer::File => d,
        other => d.note(format!("this value comes from {other}")),
    }
}
