//! The rule for table names: they must map to environment variables.

use super::Walker;
use crate::diagnostic::Diagnostic;
use crate::env;
use crate::section::Section;
use toml::Spanned;

impl Walker<'_> {
    /// Names must map to environment variables: letters, digits, `-` and `_`.
    pub(super) fn check_name(
        &mut self,
        key: &Spanned<std::borrow::Cow<'_, str>>,
        path: &str,
        section: Section,
        overlay: bool,
    ) {
        let what = if overlay {
            format!("{} overlay", section.what())
        } else {
            section.what().to_owned()
        };
        self.check_name_as(key, path, &what, (!overlay).then_some(section));
    }

    /// [`check_name`](Self::check_name) for a table called `what`; a
    /// `section`'s own tables must also be addressable by its variables.
    pub(super) fn check_name_as(
        &mut self,
        key: &Spanned<std::borrow::Cow<'_, str>>,
        path: &str,
        what: &str,
        section: Option<Section>,
    ) {
        let name = key.get_ref();
        let ok = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !ok {
            self.diags.push(
                Diagnostic::error(path, format!("invalid {what} name `{name}`"))
                    .at(Some(self.span(key)), "invalid name")
                    .note("names may contain ASCII letters, digits, `-` and `_` (so they map to environment variables)"),
            );
            return;
        }
        // Profiles are named whole by RETRY_PROFILE; overlays name what the
        // file defines, which is checked there.
        let Some(section) = section else {
            return;
        };
        if let Some((reason, fixed)) = env::unaddressable(name, section) {
            let mut d = Diagnostic::error(
                path,
                format!("invalid {what} name `{name}`: no environment variable can address it"),
            )
            .at(Some(self.span(key)), "unreachable from the environment")
            .note(reason);
            if !fixed.is_empty() {
                d = d.note(format!(
                    "use a single `-` or `_` between words, and none at the end, e.g. `{fixed}`"
                ));
            }
            self.diags.push(d);
        }
    }
}
