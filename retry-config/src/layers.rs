//! Layers of settings and where each value came from.
//!
//! A policy's effective settings are the built-in defaults, overlaid by
//! `[defaults]`, then its `extends` chain (the farthest ancestor first, the
//! policy's own table last), then the selected profile's overlays of that
//! chain, then environment variables for that chain. A later layer wins.
//! The order is retrykit-schema's ([`retrykit_schema::layering::ORDER`]), which
//! `#[retry]`'s build-time check follows too.

use crate::diagnostic::Span;
use crate::schema::{Key, Value};
use std::collections::BTreeMap;
use std::fmt;

/// The layer a setting's effective value came from.
///
/// ```
/// use retrykit_config::Layer;
/// assert_eq!(Layer::Profile("test".into()).to_string(), "profile `test`");
/// assert_eq!(Layer::Env("RETRY_POLICY__DB__BASE".into()).to_string(), "environment RETRY_POLICY__DB__BASE");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Layer {
    /// retrykit-core's built-in default (nothing in the file set it).
    Builtin,
    /// The file's `[defaults]` table.
    Defaults,
    /// An ancestor policy named in the `extends` chain.
    Extends(String),
    /// The policy's (or budget's) own table.
    File,
    /// The selected profile's overlay.
    Profile(String),
    /// An environment variable (its name).
    Env(String),
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Layer::Builtin => f.write_str("built-in default"),
            Layer::Defaults => f.write_str("[defaults]"),
            Layer::Extends(name) => write!(f, "extends `{name}`"),
            Layer::File => f.write_str("own table"),
            Layer::Profile(name) => write!(f, "profile `{name}`"),
            Layer::Env(var) => write!(f, "environment {var}"),
        }
    }
}

/// A value with where it was written and the layer it belongs to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Set {
    pub value: Value,
    pub span: Option<Span>,
    pub layer: Layer,
}

/// The keys one table (or one overlay) sets.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Fields {
    values: BTreeMap<Key, Set>,
}

impl Fields {
    pub(crate) fn set(&mut self, key: Key, set: Set) {
        self.values.insert(key, set);
    }

    pub(crate) fn get(&self, key: Key) -> Option<&Set> {
        self.values.get(&key)
    }

    /// Overlays `other` on top of `self`, relabelling its values as `layer`
    /// (an ancestor's own values read as `extends` in a descendant).
    pub(crate) fn overlay(&mut self, other: &Fields, layer: Option<&Layer>) {
        for (key, set) in &other.values {
            let mut set = set.clone();
            if let Some(layer) = layer {
                set.layer = layer.clone();
            }
            self.values.insert(*key, set);
        }
    }
}
