//! Reading the file's structure: sections, tables and keys, each value parsed
//! with its span. Every problem is collected; nothing stops at the first one.

use crate::diagnostic::{Diagnostic, Diagnostics, Source, Span};
use crate::layers::{Fields, Layer, Set};
use crate::schema::{self, Cx, Key};
use crate::section::Section;
use retrykit_schema::layering::{
    BREAKERS, BUDGETS, DEFAULTS, EXTENDS, LIMITS, POLICIES, PROFILE_SECTIONS, PROFILES, SECTIONS,
};
use retrykit_schema::suggest::did_you_mean;
use std::ops::Range;
use std::sync::Arc;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

mod chaos;
mod limits;
mod names;

pub(crate) use chaos::{ALLOW_CHAOS, PRODUCTION};

/// A named table: a policy, a budget, a breaker, or a profile's overlay of one.
#[derive(Debug, Clone)]
pub(crate) struct Named {
    pub name: String,
    pub span: Span,
    pub fields: Fields,
    /// `extends = "..."` (policies only).
    pub extends: Option<(String, Span)>,
}

/// A profile: overlays on existing policies, budgets and breakers.
#[derive(Debug, Clone)]
pub(crate) struct Profile {
    pub name: String,
    pub policies: Vec<Named>,
    pub budgets: Vec<Named>,
    pub breakers: Vec<Named>,
    pub limits: Vec<Named>,
    /// `production = true` (with where), or `None` when not written; a
    /// profile named `production` is one unless it says `false`.
    pub production: Option<(bool, Span)>,
    /// `allow_chaos = true` (with where): chaos is allowed under a
    /// production profile.
    pub allow_chaos: Option<(bool, Span)>,
}

impl Profile {
    /// Whether the profile is production's: marked so, or named so.
    pub(crate) fn is_production(&self) -> bool {
        match self.production {
            Some((marked, _)) => marked,
            None => self.name == PRODUCTION,
        }
    }

    /// Whether the profile allows chaos under it.
    pub(crate) fn allows_chaos(&self) -> bool {
        !self.is_production() || self.allow_chaos.as_ref().is_some_and(|(allow, _)| *allow)
    }
}

/// The whole file, structurally valid parts only.
#[derive(Debug, Clone, Default)]
pub(crate) struct Document {
    pub defaults: Fields,
    pub policies: Vec<Named>,
    pub budgets: Vec<Named>,
    pub breakers: Vec<Named>,
    pub limits: Vec<Named>,
    pub profiles: Vec<Profile>,
}

impl Document {
    pub(crate) fn profile(&self, name: &str) -> Option<&Profile> {
        self.profiles.iter().find(|p| p.name == name)
    }

    /// The file's tables of `section`.
    pub(crate) fn tables(&self, section: Section) -> &[Named] {
        match section {
            Section::Policy => &self.policies,
            Section::Budget => &self.budgets,
            Section::Breaker => &self.breakers,
            Section::Limit => &self.limits,
        }
    }
}

impl Profile {
    /// The profile's overlays of `section`'s tables.
    pub(crate) fn overlays(&self, section: Section) -> &[Named] {
        match section {
            Section::Policy => &self.policies,
            Section::Budget => &self.budgets,
            Section::Breaker => &self.breakers,
            Section::Limit => &self.limits,
        }
    }
}

/// Parses `source` into a [`Document`], adding every problem to `diags`;
/// `retry_on` is checked against `known_classes` when the program's are known.
pub(crate) fn parse(
    source: &Arc<Source>,
    known_classes: Option<&[String]>,
    diags: &mut Diagnostics,
) -> Document {
    let (root, errors) = DeTable::parse_recoverable(source.text());
    let mut broken = Vec::new();
    for e in errors {
        let span = e.span().map(|r| Span::new(source.clone(), r));
        let message = e.message().trim_end().to_owned();
        let mut d = Diagnostic::error("", format!("invalid TOML: {}", first_line(&message)))
            .at(span, "here")
            .note("the file must be valid TOML (https://toml.io)");
        if let Some(keys) = e
            .span()
            .and_then(|r| under_broken_header(source.text(), r.start))
        {
            d = d
                .note("the keys under this table header are not checked until the header is fixed");
            broken.push(keys);
        }
        diags.push(d);
    }
    let walker = Walker {
        source,
        known_classes,
        diags,
        broken,
    };
    walker.document(root.get_ref())
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or(s)
}

/// When the error at byte `at` is on a table header line (`[policies.x`
/// unclosed), the bytes of the keys under it: up to the next header. The
/// parser files those keys under the table before, so their "unknown key"
/// would be about a table nobody wrote.
fn under_broken_header(text: &str, at: usize) -> Option<Range<usize>> {
    let at = at.min(text.len());
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    if !text[line_start..].trim_start().starts_with('[') {
        return None;
    }
    let body = text[line_start..]
        .find('\n')
        .map_or(text.len(), |i| line_start + i + 1);
    let mut end = body;
    for line in text[body..].split_inclusive('\n') {
        if line.trim_start().starts_with('[') {
            break;
        }
        end += line.len();
    }
    Some(body..end)
}

struct Walker<'a> {
    source: &'a Arc<Source>,
    known_classes: Option<&'a [String]>,
    diags: &'a mut Diagnostics,
    /// The keys under table headers TOML could not read (see [`under_broken_header`]).
    broken: Vec<Range<usize>>,
}

impl Walker<'_> {
    fn span(&self, spanned: &Spanned<impl Sized>) -> Span {
        Span::new(self.source.clone(), spanned.span())
    }

    fn unknown_key(
        &mut self,
        key: &Spanned<std::borrow::Cow<'_, str>>,
        path: &str,
        what: &str,
        valid: &[&str],
    ) {
        let name = key.get_ref();
        if self
            .broken
            .iter()
            .any(|keys| keys.contains(&key.span().start))
        {
            // Filed under the wrong table by a broken header, which is the error.
            return;
        }
        self.diags.push(
            Diagnostic::error(join(path, name), format!("unknown key `{name}` in {what}"))
                .at(Some(self.span(key)), "unknown key")
                .suggest(did_you_mean(name, valid.iter().copied()))
                .note(format!("expected one of: {}", valid.join(", "))),
        );
    }

    /// The value as a table, or an error saying the key must be one.
    fn table<'v, 'i>(
        &mut self,
        value: &'v Spanned<DeValue<'i>>,
        path: &str,
    ) -> Option<&'v DeTable<'i>> {
        match value.get_ref() {
            DeValue::Table(t) => Some(t),
            _ => {
                self.diags.push(
                    Diagnostic::error(path, format!("`{path}` must be a table"))
                        .at(Some(self.span(value)), "expected a table")
                        .note(format!("write it as a section: [{path}]")),
                );
                None
            }
        }
    }

    fn document(mut self, root: &DeTable<'_>) -> Document {
        let mut doc = Document::default();
        if self.beyond_limits(root) {
            // Nothing is read: the limits bound the work a load does.
            return doc;
        }
        for (key, value) in root.iter() {
            match key.get_ref().as_ref() {
                DEFAULTS => {
                    if let Some(t) = self.table(value, DEFAULTS) {
                        doc.defaults = self.fields(
                            t,
                            DEFAULTS,
                            "[defaults]",
                            Layer::Defaults,
                            Section::Policy,
                        );
                    }
                }
                POLICIES => {
                    if let Some(t) = self.table(value, POLICIES) {
                        doc.policies = self.named(t, POLICIES, Section::Policy, Layer::File, true);
                    }
                }
                BUDGETS => {
                    if let Some(t) = self.table(value, BUDGETS) {
                        doc.budgets = self.named(t, BUDGETS, Section::Budget, Layer::File, false);
                    }
                }
                BREAKERS => {
                    if let Some(t) = self.table(value, BREAKERS) {
                        doc.breakers =
                            self.named(t, BREAKERS, Section::Breaker, Layer::File, false);
                    }
                }
                LIMITS => {
                    if let Some(t) = self.table(value, LIMITS) {
                        doc.limits = self.named(t, LIMITS, Section::Limit, Layer::File, false);
                    }
                }
                PROFILES => {
                    if let Some(t) = self.table(value, PROFILES) {
                        doc.profiles = self.profiles(t);
                    }
                }
                _ => self.unknown_key(key, "", "the file", &SECTIONS),
            }
        }
        doc
    }

    fn profiles(&mut self, table: &DeTable<'_>) -> Vec<Profile> {
        let mut out = Vec::new();
        for (key, value) in table.iter() {
            let name = key.get_ref().to_string();
            let path = format!("{PROFILES}.{name}");
            self.check_name_as(key, &path, "profile", None);
            let Some(t) = self.table(value, &path) else {
                continue;
            };
            let mut profile = Profile {
                name: name.clone(),
                policies: Vec::new(),
                budgets: Vec::new(),
                breakers: Vec::new(),
                limits: Vec::new(),
                production: None,
                allow_chaos: None,
            };
            for (k, v) in t.iter() {
                let sub = format!("{path}.{}", k.get_ref());
                let layer = Layer::Profile(name.clone());
                match k.get_ref().as_ref() {
                    POLICIES => {
                        if let Some(t) = self.table(v, &sub) {
                            profile.policies = self.named(t, &sub, Section::Policy, layer, false);
                        }
                    }
                    BUDGETS => {
                        if let Some(t) = self.table(v, &sub) {
                            profile.budgets = self.named(t, &sub, Section::Budget, layer, false);
                        }
                    }
                    BREAKERS => {
                        if let Some(t) = self.table(v, &sub) {
                            profile.breakers = self.named(t, &sub, Section::Breaker, layer, false);
                        }
                    }
                    LIMITS => {
                        if let Some(t) = self.table(v, &sub) {
                            profile.limits = self.named(t, &sub, Section::Limit, layer, false);
                        }
                    }
                    PRODUCTION => profile.production = self.switch(v, &sub),
                    ALLOW_CHAOS => profile.allow_chaos = self.switch(v, &sub),
                    _ => {
                        let mut valid = PROFILE_SECTIONS.to_vec();
                        valid.extend([PRODUCTION, ALLOW_CHAOS]);
                        self.unknown_key(k, &path, &format!("profile `{name}`"), &valid)
                    }
                }
            }
            out.push(profile);
        }
        out
    }

    /// A table of named tables: `[policies.NAME]`, `[budgets.NAME]`,
    /// `[breakers.NAME]` and their overlays (`layer` says which).
    fn named(
        &mut self,
        table: &DeTable<'_>,
        path: &str,
        section: Section,
        layer: Layer,
        may_extend: bool,
    ) -> Vec<Named> {
        let policies = section == Section::Policy;
        let overlay = !matches!(layer, Layer::File);
        let mut out = Vec::new();
        for (key, value) in table.iter() {
            let name = key.get_ref().to_string();
            let sub = join(path, &name);
            self.check_name(key, &sub, section, overlay);
            let Some(t) = self.table(value, &sub) else {
                continue;
            };
            let mut extends = None;
            let mut rest = DeTable::new();
            let mut chaos = None;
            for (k, v) in t.iter() {
                if k.get_ref() == retrykit_schema::keys::CHAOS && policies {
                    chaos = Some(v);
                } else if k.get_ref() == EXTENDS && policies {
                    if !may_extend {
                        self.diags.push(
                            Diagnostic::error(join(&sub, EXTENDS), "a profile cannot change `extends`")
                                .at(Some(self.span(k)), "not allowed here")
                                .note("set `extends` in the base [policies] table; profiles only change values"),
                        );
                    } else if let Some(target) = v.get_ref().as_str() {
                        extends = Some((target.to_owned(), self.span(v)));
                    } else {
                        self.diags.push(
                            Diagnostic::error(
                                join(&sub, EXTENDS),
                                "`extends` must be a policy name (a string)",
                            )
                            .at(Some(self.span(v)), "expected a policy name")
                            .note("write it as: extends = \"outbox\""),
                        );
                    }
                } else {
                    rest.insert(k.clone(), v.clone());
                }
            }
            let described = format!("{} `{name}`", section.what());
            let mut fields = self.fields(&rest, &sub, &described, layer.clone(), section);
            if let Some(chaos) = chaos {
                self.chaos(chaos, &sub, &layer, &mut fields);
            }
            out.push(Named {
                name,
                span: self.span(key),
                fields,
                extends,
            });
        }
        out
    }

    /// The keys of one table of `section` (`[defaults]` takes policy keys).
    fn fields(
        &mut self,
        table: &DeTable<'_>,
        path: &str,
        what: &str,
        layer: Layer,
        section: Section,
    ) -> Fields {
        let keys = section.keys();
        let policy = section == Section::Policy;
        let mut fields = Fields::default();
        for (k, v) in table.iter() {
            let Some(key) = Key::find(keys, k.get_ref()) else {
                let mut valid: Vec<&str> = keys.iter().map(|k| k.name()).collect();
                if policy && path.starts_with("policies.") {
                    valid.push(EXTENDS);
                }
                if policy && path == DEFAULTS && k.get_ref() == EXTENDS {
                    self.diags.push(
                        Diagnostic::error("defaults.extends", "[defaults] cannot extend a policy")
                            .at(Some(self.span(k)), "not allowed here")
                            .note("[defaults] is already the base of every policy"),
                    );
                    continue;
                }
                self.unknown_key(k, path, what, &valid);
                continue;
            };
            let key_path = join(path, key.name());
            let cx = Cx {
                source: self.source,
                offset: 0,
                key_path: &key_path,
                env_var: None,
                known_classes: self.known_classes,
            };
            if let Some(value) = schema::read(key, v, &cx, self.diags) {
                fields.set(
                    key,
                    Set {
                        value,
                        span: Some(self.span(v)),
                        layer: layer.clone(),
                    },
                );
            }
        }
        fields
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}
