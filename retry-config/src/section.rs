//! The kinds of named table a file defines (`[policies.NAME]`,
//! `[budgets.NAME]`, `[breakers.NAME]`, `[limits.NAME]`): what each is called in messages,
//! the keys it takes, and the prefix of the variables that override it. The
//! one place a reader of the file, of the environment or of a profile asks.

use crate::schema::{BREAKER_KEYS, BUDGET_KEYS, Key, LIMIT_KEYS, POLICY_KEYS};
use retrykit_schema::layering::{BREAKERS, BUDGETS, LIMITS, POLICIES};

/// A kind of named table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Section {
    Policy,
    Budget,
    Breaker,
    Limit,
}

impl Section {
    /// Every kind, in the order the file's sections are read.
    pub(crate) const ALL: [Section; 4] = [
        Section::Policy,
        Section::Budget,
        Section::Breaker,
        Section::Limit,
    ];

    /// The keys its tables take.
    pub(crate) const fn keys(self) -> &'static [Key] {
        match self {
            Section::Policy => POLICY_KEYS,
            Section::Budget => BUDGET_KEYS,
            Section::Breaker => BREAKER_KEYS,
            Section::Limit => LIMIT_KEYS,
        }
    }

    /// One table, as messages name it: `policy`, `budget`, `breaker`.
    pub(crate) const fn what(self) -> &'static str {
        match self {
            Section::Policy => "policy",
            Section::Budget => "budget",
            Section::Breaker => "breaker",
            Section::Limit => "limit",
        }
    }

    /// The section of the file: `policies`, `budgets`, `breakers`.
    pub(crate) const fn plural(self) -> &'static str {
        match self {
            Section::Policy => POLICIES,
            Section::Budget => BUDGETS,
            Section::Breaker => BREAKERS,
            Section::Limit => LIMITS,
        }
    }

    /// The prefix of the variables that override its tables.
    pub(crate) const fn env_prefix(self) -> &'static str {
        match self {
            Section::Policy => "RETRY_POLICY__",
            Section::Budget => "RETRY_BUDGET__",
            Section::Breaker => "RETRY_BREAKER__",
            Section::Limit => "RETRY_LIMIT__",
        }
    }

    /// A key its variables may set, for examples in messages.
    pub(crate) const fn example_key(self) -> Key {
        match self {
            Section::Policy => Key::Base,
            Section::Budget => Key::Ratio,
            Section::Breaker => Key::FailureRatio,
            Section::Limit => Key::MaxInFlight,
        }
    }
}
