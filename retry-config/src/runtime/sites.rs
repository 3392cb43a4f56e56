//! The call sites a configuration cannot serve, and whether they fail an
//! install.

use crate::config::Config;
use crate::diagnostic::Diagnostic;
use crate::diagnostic::Diagnostics;
use retrykit_core::__private::loader;
use retrykit_core::Registry;
use retrykit_schema::suggest::did_you_mean;

/// Call sites the configuration cannot serve, as errors: a policy it lacks,
/// an `attempt_timeout` or a breaker's refusal the site's error type cannot
/// carry, or a hedging policy on a blocking fn.
pub(super) fn call_site_problems(registry: &Registry, config: &Config) -> Diagnostics {
    let missing = loader::missing_policies(registry).into_iter().map(|site| {
        Diagnostic::error(
            format!("policies.{}", site.policy),
            format!(
                "`{}` at {}:{} uses policy `{}`, which {} does not define",
                site.function,
                site.file,
                site.line,
                site.policy,
                config.source().name()
            ),
        )
        .suggest(did_you_mean(site.policy, config.policy_names()))
        .note(format!("add a [policies.{}] table", site.policy))
    });
    let untimed = loader::call_sites().filter_map(|site| {
        let timeout = registry.policy(site.policy)?.attempt_timeout()?;
        site.cannot_time_out().then(|| {
            Diagnostic::error(
                format!("policies.{}.attempt_timeout", site.policy),
                format!(
                    "policy `{}` sets attempt_timeout = {}, but `{}` at {}:{} returns an error type that cannot stand for a timed-out attempt, so the timeout could never be enforced there",
                    site.policy,
                    crate::show_duration(timeout),
                    site.function,
                    site.file,
                    site.line
                ),
            )
            .note(format!(
                "add a `#[classify(timeout)]` unit variant to that error type, or set attempt_timeout = \"none\" for policy `{}`",
                site.policy
            ))
        })
    });
    let unbreakable = loader::call_sites().filter_map(|site| {
        let breaker = registry.policy(site.policy)?.breaker()?;
        let name = breaker.name().unwrap_or_default();
        site.cannot_carry_breaker_open().then(|| {
            Diagnostic::error(
                format!("policies.{}.breaker", site.policy),
                format!(
                    "policy `{}` names breaker `{name}`, but `{}` at {}:{} returns an error type that cannot stand for an attempt the breaker refused, so the breaker could never hold its attempts back there",
                    site.policy, site.function, site.file, site.line
                ),
            )
            .note(format!(
                "add a `#[classify(breaker_open)]` variant to that error type (or implement `Classify::from_breaker_open` and `retrykit_core::CarriesBreakerOpen`), or set breaker = \"none\" for policy `{}`",
                site.policy
            ))
        })
    });
    let unhedgeable = loader::call_sites().filter_map(|site| {
        let hedging = registry.policy(site.policy)?.hedge_settings()?;
        let why = if site.blocking {
            "is a blocking fn: it runs one attempt at a time, so it cannot hedge".to_owned()
        } else if !site.hedged {
            format!(
                "was built without its hedged loop: the build saw no hedge_after for policy `{}` (no policy file, another one, or an environment override)",
                site.policy
            )
        } else {
            return None;
        };
        let fix = if site.blocking {
            format!(
                "make the function async, give it a policy without hedge_after, or set hedge_after = \"none\" for policy `{}`",
                site.policy
            )
        } else {
            format!(
                "build with the policy file that sets hedge_after (RETRY_CONFIG or a retry.toml the build finds), or set hedge_after = \"none\" for policy `{}`",
                site.policy
            )
        };
        Some(
            Diagnostic::error(
                format!("policies.{}.hedge_after", site.policy),
                format!(
                    "policy `{}` sets hedge_after = \"{}\", but `{}` at {}:{} {why}",
                    site.policy, hedging.after, site.function, site.file, site.line
                ),
            )
            .note(fix),
        )
    });
    missing
        .chain(untimed)
        .chain(unbreakable)
        .chain(unhedgeable)
        .collect()
}

/// Whether every call site's policy must be defined for an install to go ahead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CallSites {
    /// `init`, `reload` and the watcher: a missing name fails the install.
    Required,
    /// The lazy loader: nobody can act on an error there, so the valid file is
    /// installed and the sites it lacks run once, without retry (retrykit-core's
    /// fallback), with the problem on stderr.
    Reported,
}
