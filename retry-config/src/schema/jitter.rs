//! Reading `jitter`: a mode's name, or `{ proportional = <ratio> }`.

// A rejected value is the cold path: boxing its diagnostic would only add noise.
#![allow(clippy::result_large_err)]

use super::{Cx, Key, engine, number, type_name};
use crate::diagnostic::Diagnostic;
use retrykit_core::Jitter;
use retrykit_schema::keys::{JITTER_MODES, PROPORTIONAL};
use retrykit_schema::suggest::did_you_mean;
use std::ops::Range;
use toml::de::{DeTable, DeValue};

pub(super) fn read(value: &toml::Spanned<DeValue<'_>>, cx: &Cx<'_>) -> Result<Jitter, Diagnostic> {
    let range = value.span();
    let fix = "jitter = \"full\" (or none, equal, decorrelated, { proportional = 0.25 })";
    match value.get_ref() {
        DeValue::String(s) => {
            if let Some(mode) = engine::jitter_mode(s) {
                return Ok(mode);
            }
            if s == PROPORTIONAL {
                return Err(cx
                    .error(
                        range,
                        "proportional jitter needs a ratio".into(),
                        "no ratio",
                    )
                    .note(format!(
                        "write it as: {}",
                        cx.fix(Key::Jitter, "{ proportional = 0.25 }")
                    )));
            }
            let mut all: Vec<&str> = JITTER_MODES.to_vec();
            all.push(PROPORTIONAL);
            Err(cx
                .error(range, format!("unknown jitter mode `{s}`"), "unknown mode")
                .suggest(did_you_mean(s, all))
                .note(format!("expected one of: {fix}")))
        }
        DeValue::Table(t) => proportional(t, range, cx),
        other => Err(cx
            .error(
                range,
                format!(
                    "`jitter` must be a string or {{ proportional = <ratio> }}, found {}",
                    type_name(other)
                ),
                "wrong type",
            )
            .note(format!("write it as: {fix}"))),
    }
}

fn proportional(
    table: &DeTable<'_>,
    range: Range<usize>,
    cx: &Cx<'_>,
) -> Result<Jitter, Diagnostic> {
    let mut ratio = None;
    for (k, v) in table.iter() {
        if k.get_ref() == PROPORTIONAL {
            ratio = Some(number(v.get_ref()).ok_or_else(|| {
                cx.error(
                    v.span(),
                    format!(
                        "the proportional ratio must be a number, found {}",
                        type_name(v.get_ref())
                    ),
                    "not a number",
                )
                .note("write it as: jitter = { proportional = 0.25 }")
            })?);
        } else {
            return Err(cx
                .error(
                    k.span(),
                    format!("unknown key `{}` in jitter", k.get_ref()),
                    "unknown key",
                )
                .suggest(did_you_mean(k.get_ref(), [PROPORTIONAL]))
                .note("the only table form is: jitter = { proportional = 0.25 }"));
        }
    }
    ratio.map(Jitter::Proportional).ok_or_else(|| {
        cx.error(
            range,
            "the jitter table needs a `proportional` ratio".into(),
            "missing ratio",
        )
        .note("write it as: jitter = { proportional = 0.25 }")
    })
}
