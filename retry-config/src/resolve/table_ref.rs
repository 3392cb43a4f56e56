//! A policy's reference to a shared table by name (`breaker = "NAME"`,
//! `limit = "NAME"`): the table it names, or the error for a name the file
//! does not define.

use crate::diagnostic::Diagnostic;
use crate::layers::Fields;
use crate::schema::{Key, Value};
use retrykit_schema::suggest::did_you_mean;
use std::collections::HashMap;

/// The table policy `policy` names with `key` in `fields` (`None`: none),
/// found by `index` (the position of each of the file's `kind` tables, named
/// `defined`) among `built`. An error for a name the file does not define,
/// with a did-you-mean; `Err(None)` for a table that is defined but invalid
/// (reported where it is).
// A missing table is the cold path: boxing its diagnostic would only add noise.
#[allow(clippy::result_large_err)]
pub(super) fn named<'r, 'd, R>(
    policy: &str,
    fields: &Fields,
    (key, kind): (Key, &str),
    defined: impl Iterator<Item = &'d str>,
    (index, built): (&HashMap<&str, usize>, &'r [Option<R>]),
) -> Result<Option<&'r R>, Option<Diagnostic>> {
    let Some(set) = fields.get(key) else {
        return Ok(None);
    };
    let Value::MaybeName(Some(name)) = &set.value else {
        return Ok(None);
    };
    match index.get(name.as_str()) {
        Some(&i) => built.get(i).and_then(Option::as_ref).map(Some).ok_or(None),
        None => {
            let mut d = Diagnostic::error(
                format!("policies.{policy}.{kind}"),
                format!("policy `{policy}` uses {kind} `{name}`, which is not defined"),
            )
            .at(set.span.clone(), format!("no such {kind}"))
            .suggest(did_you_mean(name, defined))
            .note(format!(
                "define it in a [{kind}s.{name}] table, or set {kind} = \"none\""
            ));
            if !matches!(set.layer, crate::layers::Layer::File) {
                d = d.note(format!("this value comes from {}", set.layer));
            }
            Err(Some(d))
        }
    }
}
