//! The lazy load's rule for a bad environment: with no `init` there is
//! nobody to refuse it to, so a bad `RETRY_*` value costs only what it
//! concerns, and says so. A bad `RETRY_STRICT` leaves strict mode off; a
//! `RETRY_PROFILE` the file does not define leaves the base settings; a bad
//! `RETRY_POLICY__*` / `RETRY_BUDGET__*` value withholds the policies it
//! concerns (the one it names and those extending it, or those drawing on
//! the budget), whose call sites then run once and say why at their first
//! call. Each is said on stderr when the file is loaded, naming the
//! variable, its value (escaped, cut) and the fix. `init` (and `reload`)
//! still refuse them all.

use super::Setup;
use crate::config::Config;
use crate::diagnostic::{Diagnostic, quoted, said};
use crate::env;
use crate::section::Section;

/// The variable that selects the profile.
const PROFILE_VAR: &str = "RETRY_PROFILE";

impl Setup {
    /// Drops what the environment got wrong from this setup, saying each on
    /// stderr; returns the policies to withhold, each with why.
    pub(super) fn set_aside_bad_environment(&mut self) -> Vec<(String, String)> {
        if let Err(problem) = self.options.env.strict() {
            say(&problem, "strict mode stays off");
            self.options.env = self.options.env.without_strict();
        }
        let Err(mut problems) = self.load() else {
            return Vec::new();
        };
        let profile_problem = problems.errors().find(|d| d.key == "profile").cloned();
        if let Some(problem) = profile_problem {
            let profile = self.options.profile.take().unwrap_or_default();
            let problem = problem.note(format!(
                "{PROFILE_VAR} is `{}`: set it to a profile the file defines, or unset it",
                quoted(&profile)
            ));
            say(
                &problem,
                "the file's base settings are used, without a profile",
            );
            // A missing profile stops the load before the overrides are read.
            match self.load() {
                Ok(_) => return Vec::new(),
                Err(without_profile) => problems = without_profile,
            }
        }
        let bad: Vec<&Diagnostic> = problems
            .errors()
            .filter(|d| env::override_target(&d.key).is_some())
            .collect();
        if bad.is_empty() {
            return Vec::new();
        }
        let vars: Vec<&str> = bad.iter().map(|d| d.key.as_str()).collect();
        let unchanged = self.options.env.clone();
        self.options.env = unchanged.without(&vars);
        // The file's own errors (or those under its profile) are reported as before.
        let Ok(config) = self.load() else {
            self.options.env = unchanged;
            return Vec::new();
        };
        let mut withheld: Vec<(String, String)> = Vec::new();
        for problem in bad {
            let var = problem.key.as_str();
            let value = quoted(unchanged.value(var).unwrap_or_default());
            let concerned = concerned(&config, var);
            let whom = match concerned.as_slice() {
                [] => "it names nothing the file defines, so no policy is changed".to_owned(),
                names => format!(
                    "policies {} run once, without retry, until it is fixed",
                    names.join(", ")
                ),
            };
            say(problem, &format!("{var} is not used: {whom}"));
            let fix = problem.notes.last().map_or(Default::default(), |n| said(n));
            let why = format!(
                "{var} is `{value}`: {}\n  fix: {fix} (or unset {var})",
                said(&problem.message)
            );
            for name in concerned {
                if !withheld.iter().any(|(n, _)| *n == name) {
                    withheld.push((name, why.clone()));
                }
            }
        }
        withheld
    }
}

/// The policies a bad override `var` concerns, in file order: those whose
/// `extends` chain holds the policy it names, or those drawing on the
/// budget or breaker it names.
fn concerned(config: &Config, var: &str) -> Vec<String> {
    let Some((section, target)) = env::override_target(var) else {
        return Vec::new();
    };
    let named = |name: &str| env::env_name(name) == target;
    config
        .policy_names()
        .filter(|&policy| {
            let Some(p) = config.policy(policy) else {
                return false;
            };
            match section {
                Section::Budget => config.budget_names().filter(|b| named(b)).any(|b| {
                    config.budget(b).is_some_and(|budget| {
                        p.budgets()
                            .iter()
                            .any(|own| std::sync::Arc::ptr_eq(own, budget))
                    })
                }),
                Section::Breaker => config.breaker_names().filter(|b| named(b)).any(|b| {
                    config
                        .breaker(b)
                        .zip(p.breaker())
                        .is_some_and(|(named, own)| std::sync::Arc::ptr_eq(own, named))
                }),
                Section::Limit => config.limit_names().filter(|l| named(l)).any(|l| {
                    config
                        .limit(l)
                        .zip(p.limit())
                        .is_some_and(|(named, own)| std::sync::Arc::ptr_eq(own, named))
                }),
                Section::Policy => {
                    named(policy)
                        || config
                            .extends(policy)
                            .is_some_and(|chain| chain.iter().any(|a| named(a)))
                }
            }
        })
        .map(str::to_owned)
        .collect()
}

/// Says `problem` on stderr, then what the lazy load does about it.
fn say(problem: &Diagnostic, outcome: &str) {
    eprintln!(
        "retrykit-config: {}retrykit-config: {outcome} (init() refuses this; the lazy load goes on)",
        problem.render()
    );
}
