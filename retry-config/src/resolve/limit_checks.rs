//! Checks of a concurrency limit table that retrykit-core cannot make,
//! since it never sees the file (`max_in_flight` has no default), and the
//! lookup of the limit a policy names.

use super::ResolvedLimit;
use crate::diagnostic::Diagnostic;
use crate::document::{Document, Named};
use crate::layers::Fields;
use crate::schema::{Key, Value};
use retrykit_core::limit::ConcurrencyLimit;
use retrykit_schema::suggest::did_you_mean;
use std::collections::HashMap;
use std::sync::Arc;

/// An error when limit `l` leaves `max_in_flight` unset: a limit's size is
/// the dependency's, so it has no default. The limit is not built then.
pub(super) fn checks(l: &Named, fields: &Fields) -> Vec<Diagnostic> {
    if fields.get(Key::MaxInFlight).is_some() {
        return Vec::new();
    }
    let (name, key) = (&l.name, Key::MaxInFlight.name());
    vec![
        Diagnostic::error(
            format!("limits.{name}.{key}"),
            format!("limit `{name}` needs `{key}`: a limit's size has no default"),
        )
        .at(Some(l.span.clone()), format!("no `{key}`"))
        .note(format!(
            "fix: add {key} = {} (the most attempts the dependency should have in flight at once)",
            Key::MaxInFlight.example()
        )),
    ]
}

/// The limit policy `policy` names in `fields` (`None`: none), found by
/// `index` among `built`. An error for a name the file does not define,
/// with a did-you-mean; `Err(None)` for a limit that is defined but
/// invalid (reported where it is).
// A missing limit is the cold path: boxing its diagnostic would only add noise.
#[allow(clippy::result_large_err)]
pub(super) fn named(
    policy: &str,
    fields: &Fields,
    doc: &Document,
    (index, built): (&HashMap<&str, usize>, &[Option<ResolvedLimit>]),
) -> Result<Option<Arc<ConcurrencyLimit>>, Option<Diagnostic>> {
    let Some(set) = fields.get(Key::Limit) else {
        return Ok(None);
    };
    let Value::MaybeName(Some(name)) = &set.value else {
        return Ok(None);
    };
    match index.get(name.as_str()) {
        Some(&i) => match built.get(i).and_then(Option::as_ref) {
            Some(l) => Ok(Some(l.limit.clone())),
            None => Err(None),
        },
        None => {
            let mut d = Diagnostic::error(
                format!("policies.{policy}.limit"),
                format!("policy `{policy}` uses limit `{name}`, which is not defined"),
            )
            .at(set.span.clone(), "no such limit")
            .suggest(did_you_mean(
                name,
                doc.limits.iter().map(|l| l.name.as_str()),
            ))
            .note(format!(
                "define it in a [limits.{name}] table, or set limit = \"none\""
            ));
            if !matches!(set.layer, crate::layers::Layer::File) {
                d = d.note(format!("this value comes from {}", set.layer));
            }
            Err(Some(d))
        }
    }
}
