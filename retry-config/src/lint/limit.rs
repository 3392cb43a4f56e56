//! Warnings about a concurrency limit that is valid but likely not what was
//! written: a limit no policy names.

use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::resolve::{ResolvedLimit, ResolvedPolicy};
use std::sync::Arc;

/// Warns about each limit no policy names: it holds nothing back.
pub(crate) fn lint_limits(
    limits: &[ResolvedLimit],
    policies: &[ResolvedPolicy],
    diags: &mut Diagnostics,
) {
    for l in limits {
        let used = policies
            .iter()
            .any(|p| p.policy.limit().is_some_and(|pl| Arc::ptr_eq(pl, &l.limit)));
        if !used {
            diags.push(
                Diagnostic::warning(
                    format!("limits.{}", l.name),
                    format!("limit `{}` is not used by any policy", l.name),
                )
                .at(Some(l.span.clone()), "unused")
                .note(format!(
                    "add limit = \"{}\" to the policies that call the dependency it guards, or remove the table",
                    l.name
                )),
            );
        }
    }
}
