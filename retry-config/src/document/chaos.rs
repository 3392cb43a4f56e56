//! A policy's `chaos` table (`[policies.NAME.chaos]`, or a profile's
//! overlay of it), read into the policy's own fields: each of its keys
//! layers like any other (docs/chaos.md); and a profile's switches,
//! `production` and `allow_chaos`.

use super::{Walker, join};
use crate::diagnostic::{Diagnostic, Span};
use crate::layers::{Fields, Layer, Set};
use crate::schema::{self, Cx, Key};
use retrykit_schema::keys::CHAOS_KEYS;
use toml::Spanned;
use toml::de::DeValue;

/// A profile's `production = true` (or its name, `production`): chaos is
/// refused under it unless `allow_chaos = true`.
pub(crate) const PRODUCTION: &str = "production";
/// A profile's `allow_chaos = true`.
pub(crate) const ALLOW_CHAOS: &str = "allow_chaos";

impl Walker<'_> {
    /// Reads the `chaos` table `value` of the policy at `path` into `fields`.
    pub(super) fn chaos(
        &mut self,
        value: &Spanned<DeValue<'_>>,
        path: &str,
        layer: &Layer,
        fields: &mut Fields,
    ) {
        let path = join(path, retrykit_schema::keys::CHAOS);
        let Some(table) = self.table(value, &path) else {
            return;
        };
        let valid: Vec<&str> = CHAOS_KEYS.iter().map(|k| k.name()).collect();
        for (k, v) in table.iter() {
            let Some(key) = Key::find(CHAOS_KEYS, k.get_ref()) else {
                self.unknown_key(k, &path, &format!("`{path}`"), &valid);
                continue;
            };
            let key_path = join(&path, key.name());
            let cx = Cx {
                source: self.source,
                offset: 0,
                key_path: &key_path,
                env_var: None,
                known_classes: self.known_classes,
            };
            if let Some(value) = schema::read(key, v, &cx, self.diags) {
                let span = Some(self.span(v));
                let layer = layer.clone();
                fields.set(key, Set { value, span, layer });
            }
        }
    }

    /// A profile's boolean switch `key` (`production`, `allow_chaos`) with
    /// where it is written; `None` (and an error) when it is not a boolean.
    pub(super) fn switch(
        &mut self,
        value: &Spanned<DeValue<'_>>,
        path: &str,
    ) -> Option<(bool, Span)> {
        match value.get_ref() {
            DeValue::Boolean(b) => Some((*b, self.span(value))),
            other => {
                self.diags.push(
                    Diagnostic::error(
                        path,
                        format!(
                            "`{path}` must be true or false, found {}",
                            schema::type_name(other)
                        ),
                    )
                    .at(Some(self.span(value)), "expected a boolean")
                    .note(format!(
                        "write it as: {} = true",
                        path.rsplit('.').next().unwrap_or(path)
                    )),
                );
                None
            }
        }
    }
}
