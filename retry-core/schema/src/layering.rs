//! How a file is laid out, and where a policy's settings come from: the
//! layers in the order they apply ([`ORDER`], a later layer winning), and
//! the tables of the file behind them ([`tables`]). retrykit-config's loader
//! resolves every policy by [`ORDER`]; `#[retry]`'s build-time check asks
//! [`tables`] which values a policy can end up with under each profile.
//!
//! ```
//! use retrykit_schema::layering::{Table, effective, tables};
//! // `fast` extends `outbox`; the `test` profile overlays `outbox`.
//! let layers = tables(&["outbox", "fast"], Some("test"));
//! let set_cap = |t: &Table<'_>| match t {
//!     Table::Policy("outbox") => Some("30s"),
//!     Table::ProfilePolicy { policy: "outbox", .. } => Some("5ms"),
//!     _ => None,
//! };
//! // A profile's overlay of an ancestor beats the policy's own file tables.
//! let (from, cap) = effective(&layers, set_cap).unwrap();
//! assert_eq!((from.to_string(), cap), ("[profiles.test.policies.outbox]".to_owned(), "5ms"));
//! ```

use std::collections::HashSet;
use std::fmt;

/// The `[defaults]` section: the base of every policy.
///
/// ```
/// assert_eq!(retrykit_schema::layering::DEFAULTS, "defaults");
/// ```
pub const DEFAULTS: &str = "defaults";
/// The `[policies.NAME]` tables.
///
/// ```
/// assert_eq!(retrykit_schema::layering::POLICIES, "policies");
/// ```
pub const POLICIES: &str = "policies";
/// The `[budgets.NAME]` tables.
///
/// ```
/// assert_eq!(retrykit_schema::layering::BUDGETS, "budgets");
/// ```
pub const BUDGETS: &str = "budgets";
/// The `[breakers.NAME]` tables: circuit breakers shared by the policies
/// that name them.
///
/// ```
/// assert_eq!(retrykit_schema::layering::BREAKERS, "breakers");
/// ```
pub const BREAKERS: &str = "breakers";
/// The `[limits.NAME]` tables: concurrency limits, shared by the policies
/// that name them.
///
/// ```
/// assert_eq!(retrykit_schema::layering::LIMITS, "limits");
/// ```
pub const LIMITS: &str = "limits";
/// The `[profiles.NAME]` tables, each with `policies`, `budgets` and
/// `breakers` overlays.
///
/// ```
/// assert_eq!(retrykit_schema::layering::PROFILES, "profiles");
/// ```
pub const PROFILES: &str = "profiles";
/// A policy's parent: `extends = "NAME"`, in the file's own policy tables only.
///
/// ```
/// assert_eq!(retrykit_schema::layering::EXTENDS, "extends");
/// ```
pub const EXTENDS: &str = "extends";

/// The sections a file may have.
///
/// ```
/// assert!(retrykit_schema::layering::SECTIONS.contains(&"profiles"));
/// ```
pub const SECTIONS: [&str; 6] = [DEFAULTS, POLICIES, BUDGETS, BREAKERS, LIMITS, PROFILES];

/// The sections a profile may have: overlays of policies, budgets and
/// breakers (a profile has no `[defaults]`).
///
/// ```
/// assert!(!retrykit_schema::layering::PROFILE_SECTIONS.contains(&"defaults"));
/// ```
pub const PROFILE_SECTIONS: [&str; 4] = [POLICIES, BUDGETS, BREAKERS, LIMITS];

/// A layer of a policy's settings.
///
/// ```
/// use retrykit_schema::layering::{Layer, ORDER};
/// assert!(ORDER.iter().position(|l| *l == Layer::Profile) > ORDER.iter().position(|l| *l == Layer::Chain));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Layer {
    /// The built-in defaults ([`crate::keys::Key::built_in`]).
    BuiltIn,
    /// The file's `[defaults]`.
    Defaults,
    /// The policy's `extends` chain, the farthest ancestor first and the
    /// policy's own table last.
    Chain,
    /// The selected profile's overlays of that chain, in the same order.
    Profile,
    /// `RETRY_POLICY__<NAME>__<KEY>` variables for that chain, in the same
    /// order (run time only).
    Environment,
}

/// The layers in the order they apply: a value set by a later one wins.
/// Budgets and breakers have no `[defaults]` and no chain: their own table,
/// the profile's overlay, then the environment.
///
/// ```
/// use retrykit_schema::layering::{Layer, ORDER};
/// assert_eq!(ORDER[0], Layer::BuiltIn);
/// assert_eq!(ORDER[4], Layer::Environment);
/// ```
pub const ORDER: [Layer; 5] = [
    Layer::BuiltIn,
    Layer::Defaults,
    Layer::Chain,
    Layer::Profile,
    Layer::Environment,
];

/// A table of the file that sets policy values.
///
/// ```
/// use retrykit_schema::layering::Table;
/// assert_eq!(Table::Policy("db").to_string(), "[policies.db]");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Table<'a> {
    /// `[defaults]`.
    Defaults,
    /// `[policies.NAME]`.
    Policy(&'a str),
    /// `[profiles.PROFILE.policies.NAME]`.
    ProfilePolicy {
        /// The profile.
        profile: &'a str,
        /// The policy it overlays.
        policy: &'a str,
    },
}

impl fmt::Display for Table<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Table::Defaults => write!(f, "[{DEFAULTS}]"),
            Table::Policy(policy) => write!(f, "[{POLICIES}.{policy}]"),
            Table::ProfilePolicy { profile, policy } => {
                write!(f, "[{PROFILES}.{profile}.{POLICIES}.{policy}]")
            }
        }
    }
}

/// The tables a policy's values come from under `profile` (`None`: no
/// profile selected), lowest precedence first: the file's part of
/// [`ORDER`]. `chain` is the policy's [`chain`], the policy last.
///
/// ```
/// use retrykit_schema::layering::{Table, tables};
/// assert_eq!(
///     tables(&["base", "fast"], None),
///     [Table::Defaults, Table::Policy("base"), Table::Policy("fast")]
/// );
/// ```
pub fn tables<'a>(chain: &[&'a str], profile: Option<&'a str>) -> Vec<Table<'a>> {
    let mut out = Vec::new();
    for layer in ORDER {
        match (layer, profile) {
            (Layer::Defaults, _) => out.push(Table::Defaults),
            (Layer::Chain, _) => out.extend(chain.iter().map(|&p| Table::Policy(p))),
            (Layer::Profile, Some(profile)) => out.extend(
                chain
                    .iter()
                    .map(|&policy| Table::ProfilePolicy { profile, policy }),
            ),
            // Built-in values and variables are not in the file.
            (Layer::BuiltIn | Layer::Profile | Layer::Environment, _) => {}
        }
    }
    out
}

/// The value the last of `tables` that sets one has (a later layer wins),
/// with that table; `None` when none does and the built-in default applies.
///
/// ```
/// use retrykit_schema::layering::{Table, effective};
/// let tables = [Table::Defaults, Table::Policy("a")];
/// assert_eq!(effective(&tables, |t| (*t == Table::Defaults).then_some(3)), Some((Table::Defaults, 3)));
/// assert_eq!(effective(&tables, |_| None::<u32>), None);
/// ```
pub fn effective<'a, V>(
    tables: &[Table<'a>],
    value_in: impl Fn(&Table<'a>) -> Option<V>,
) -> Option<(Table<'a>, V)> {
    tables
        .iter()
        .rev()
        .find_map(|table| value_in(table).map(|v| (*table, v)))
}

/// The `extends` chain of `policy`: its farthest ancestor first, the policy
/// last. It stops before a cycle, and at a name with no parent (an unknown
/// parent ends it too: the loader reports both).
///
/// ```
/// use retrykit_schema::layering::chain;
/// let parent = |p: &str| match p { "fast" => Some("outbox"), "a" => Some("b"), "b" => Some("a"), _ => None };
/// assert_eq!(chain("fast", parent), ["outbox", "fast"]);
/// assert_eq!(chain("a", parent), ["b", "a"]);
/// ```
pub fn chain<'a>(policy: &'a str, parent: impl Fn(&str) -> Option<&'a str>) -> Vec<&'a str> {
    let mut chain = vec![policy];
    // A set, so that a deep chain costs its length, not its square.
    let mut seen = HashSet::from([policy]);
    while let Some(next) = parent(chain[chain.len() - 1]) {
        if !seen.insert(next) {
            break;
        }
        chain.push(next);
    }
    chain.reverse();
    chain
}
