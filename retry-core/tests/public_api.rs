//! The public API, pinned: what a user names and nothing else.
//!
//! The root exports the policy and its builder, backoff and jitter,
//! classification, the retry loop, hooks and their events, the report, the
//! budget, the registry (its type at the root; install and lookup, and what
//! a configuration loader needs, in `registry`), the oracle and its state,
//! the decision kernel stepped by hand (`kernel`, for simulators), hedged
//! requests' settings, latency estimate and decision (`hedge`), circuit
//! breakers (`CircuitBreaker` at the root, the rest in `breaker`), the hook
//! traits (`hooks`, with `HookSet` at the root), `clock` for callers that
//! inject a clock or sleeper, and (with `macros`) `#[retry]`.
//!
//! Hidden or moved, and why:
//! - the fleet simulator: its own crate, retrykit-sim (retry-config/simulate),
//!   with `rand_distr`, so no user builds it;
//! - `Run`, `PolicyCache`, `drive!`: the loop state and a call site's policy
//!   cache, named only by `#[retry]`'s expansion: `__private`;
//! - `is_installed` is crate-private;
//! - `Clock`, `Sleeper`, `BlockingSleeper` and their impls: in `clock`, not
//!   the root (a user who injects time names them; most never do);
//! - `inventory`: re-exported once, as `__private::inventory`;
//! - `JitterRng`: crate-private, so `rand` is not in the public API.

#[allow(unused_imports)]
use retrykit_core::clock::{
    BlockingSleeper, Clock, DefaultClock, DefaultSleeper, Sleeper, SystemClock, ThreadSleeper,
};
#[cfg(feature = "tokio")]
#[allow(unused_imports)]
use retrykit_core::clock::{TokioClock, TokioSleeper};
#[allow(unused_imports)]
use retrykit_core::hedge::{
    Admission, HedgeAfter, HedgeSettings, HedgeStep, HedgeStop, HedgeView, Hedging,
    LatencyEstimate, Percentile, is_fatal, next_hedge,
};
#[allow(unused_imports)]
use retrykit_core::registry::{RegistryBuilder, current, install, policy};
#[allow(unused_imports)] // the import itself is the check: each path resolves
use retrykit_core::{
    AdaptiveLimiter, AttemptTimeout, Backoff, CarriesTimeout, Class, Classify, Ending, GiveUpEvent,
    Hooks, Jitter, Oracle, OracleState, Policy, PolicyBuilder, PolicyError, Problem, Registry,
    Report, Retry, RetryBudget, RetryBudgetBuilder, RetryEvent, Verdict, clock, registry,
};

/// Every name `lib.rs` exports at the root, apart from `#[doc(hidden)]` ones.
const ROOT: [&str; 37] = [
    "AdaptiveLimiter",
    "AttemptTimeout",
    "Backoff",
    "BudgetMode",
    "BudgetScope",
    "CarriesBreakerOpen",
    "CarriesTimeout",
    "CircuitBreaker",
    "Class",
    "Classify",
    "Ending",
    "GiveUpEvent",
    "HookSet",
    "Hooks",
    "Jitter",
    "Oracle",
    "OracleState",
    "Policy",
    "PolicyBuilder",
    "PolicyError",
    "Problem",
    "Problems",
    "RECORDS_METRICS",
    "Registry",
    "Report",
    "Retry",
    "RetryBudget",
    "RetryBudgetBuilder",
    "RetryEvent",
    "Verdict",
    "breaker",
    "clock",
    "hedge",
    "hooks",
    "kernel",
    "registry",
    "retry",
];

/// Every public item the `registry` module defines.
const REGISTRY: [&str; 17] = [
    "CallSite",
    "DeclaredClass",
    "LazyLoader",
    "Registry",
    "RegistryBuilder",
    "call_sites",
    "current",
    "declared_classes",
    "install",
    "is_strict",
    "missing_policies",
    "origin",
    "policy",
    "set_origin",
    "set_strict",
    "set_withheld",
    "with_policy",
];

/// Every public item the `clock` module defines.
const CLOCK: [&str; 9] = [
    "BlockingSleeper",
    "Clock",
    "DefaultClock",
    "DefaultSleeper",
    "Sleeper",
    "SystemClock",
    "ThreadSleeper",
    "TokioClock",
    "TokioSleeper",
];

/// The names a source file makes public at its top level: `pub use` (each
/// name in braces, or the last path segment), `pub mod`, `pub fn`, `pub
/// struct`, `pub enum`, `pub trait`, `pub type`. Items right after
/// `#[doc(hidden)]` are skipped; names are sorted and deduplicated (a `cfg`
/// pair defines one name twice).
fn exported(source: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut hidden = false;
    let mut lines = source.lines();
    while let Some(line) = lines.next() {
        if line.starts_with("#[doc(hidden)]") {
            hidden = true;
            continue;
        }
        if line.starts_with("#[") || line.starts_with("///") {
            continue;
        }
        let was_hidden = std::mem::take(&mut hidden);
        let Some(item) = line.strip_prefix("pub ") else {
            continue;
        };
        if was_hidden {
            continue;
        }
        if let Some(path) = item.strip_prefix("use ") {
            let mut statement = path.to_owned();
            while !statement.contains(';') {
                statement.push_str(lines.next().expect("a `pub use` ends with `;`"));
            }
            let statement = statement.trim_end_matches(';');
            let list = match statement.split_once('{') {
                Some((_, braced)) => braced.trim_end_matches('}').to_owned(),
                None => statement.rsplit("::").next().unwrap_or_default().to_owned(),
            };
            names.extend(
                list.split(',')
                    .map(|n| n.trim().to_owned())
                    .filter(|n| !n.is_empty()),
            );
        } else {
            let words: Vec<&str> = item.split_whitespace().collect();
            let name = match words.as_slice() {
                ["const", "fn", name, ..] | [_, name, ..] => *name,
                _ => continue,
            };
            let end = name.find(|c: char| !(c.is_alphanumeric() || c == '_'));
            names.push(name[..end.unwrap_or(name.len())].to_owned());
        }
    }
    names.sort();
    names.dedup();
    names
}

fn read(file: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The integrations, each a module behind its own cargo feature, so the
/// engine's root stays the list above.
const INTEGRATIONS: [&str; 5] = ["fleet", "http", "metrics", "reqwest", "tower"];

#[test]
fn the_root_exports_what_a_user_names_and_nothing_else() {
    let mut expected: Vec<&str> = ROOT.iter().chain(&INTEGRATIONS).copied().collect();
    expected.sort_unstable();
    assert_eq!(exported(&read("src/lib.rs")), expected);
}

#[test]
fn the_registry_module_is_install_and_lookup() {
    assert_eq!(exported(&read("src/registry.rs")), REGISTRY);
}

#[test]
fn the_clock_module_is_the_clock_and_the_sleepers() {
    assert_eq!(exported(&read("src/clock.rs")), CLOCK);
}

#[test]
fn the_reader_sees_what_it_should_and_skips_what_is_hidden() {
    let source = "#[doc(hidden)]\npub mod hidden;\npub mod shown;\npub use a::{B,\n    C};\n\
                  pub use d::E;\n#[cfg(x)]\npub type F = u8;\n#[cfg(not(x))]\npub type F = u16;\n\
                  pub const fn g() {}\npub(crate) fn h() {}\n    pub fn nested() {}\n";
    assert_eq!(exported(source), ["B", "C", "E", "F", "g", "shown"]);
}
