//! Where a named policy's users (a `#[retry]` call site, a tower layer or
//! reqwest middleware built with a name) get it for each call: a
//! [`PolicyCache`] each, and the first-use checks that keep a call from
//! quietly not retrying as its policy says. Each problem is said once per
//! call site, on stderr and as a tracing warning.

use crate::breaker::{BreakerOpen, BreakerState};
use crate::classify::{AttemptTimeout, Classify};
use crate::policy::Policy;
use crate::registry::linked::CallSite;
use crate::registry::{self, Registry, loading};
use std::collections::HashSet;
use std::panic::Location;
// tests/loom.rs models a reload racing a call.
#[cfg(loom)]
use loom::sync::atomic::{AtomicU64, Ordering};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, PoisonError};
use std::time::Duration;

/// The fallback for a name the registry lacks at run time: one attempt, no
/// retry (never a panic: a service keeps running), with a warning.
static SINGLE_ATTEMPT: LazyLock<Arc<Policy>> = LazyLock::new(|| {
    let single = Policy::builder().max_attempts(1).build();
    Arc::new(single.unwrap_or_else(|_| Policy::default()))
});

/// A named policy's cache, the one way every entry point that names a
/// policy gets it: it remembers where the policy sits in the registry
/// generation it last saw, and the first call after a reload looks the
/// name up again and makes the first-use checks. A call holds the policy
/// it started with, so a reload reaches the next call, never a running one.
#[derive(Debug)]
pub struct PolicyCache {
    site: CallSite,
    /// The registry generation last seen (high bits) and the policy's
    /// index in it (low `INDEX_BITS`; `MISSING` when the registry lacks
    /// the name); `UNSEEN` until the first call.
    seen: AtomicU64,
}

const INDEX_BITS: u32 = 24;
const MISSING: u64 = (1 << INDEX_BITS) - 1;
const UNSEEN: u64 = u64::MAX;

impl PolicyCache {
    /// The cache of call site `site`, empty until its first call.
    #[cfg(not(loom))]
    pub const fn new(site: CallSite) -> Self {
        PolicyCache {
            site,
            seen: AtomicU64::new(UNSEEN),
        }
    }

    /// The call site's cache (under loom, whose atomics are not `const`).
    #[cfg(loom)]
    pub fn new(site: CallSite) -> Self {
        PolicyCache {
            site,
            seen: AtomicU64::new(UNSEEN),
        }
    }

    /// The call site it serves.
    #[cfg(feature = "tower")]
    pub(crate) fn site(&self) -> &CallSite {
        &self.site
    }

    /// The policy for a call starting now.
    #[inline]
    pub fn policy(&self) -> Arc<Policy> {
        self.with_current(Arc::clone)
    }

    /// Runs `read` on the policy for a call starting now, borrowed from
    /// this thread's view of the registry, which stays alive until `read`
    /// returns whatever is installed meanwhile. A blocking `#[retry]` call
    /// runs inside it.
    ///
    /// ```
    /// use retrykit_core::__private::site::{CallSite, PolicyCache};
    /// use retrykit_core::{registry, Policy, Registry};
    /// static CACHE: PolicyCache = PolicyCache::new(CallSite::new("doc-with", file!(), line!(), "doc"));
    /// registry::install(Registry::builder().policy("doc-with", Policy::default()).build());
    /// let attempts = CACHE.with_policy(|policy| {
    ///     let fewer = Policy::builder().max_attempts(2).build().unwrap();
    ///     registry::install(Registry::builder().policy("doc-with", fewer).build());
    ///     policy.max_attempts()
    /// });
    /// assert_eq!(attempts, Some(3), "a reload does not change a borrowed policy");
    /// assert_eq!(CACHE.policy().max_attempts(), Some(2));
    /// ```
    pub fn with_policy<R>(&self, read: impl FnOnce(&Policy) -> R) -> R {
        self.with_current(|policy| read(policy))
    }

    /// Runs `read` on the policy for a call starting now.
    fn with_current<R>(&self, read: impl FnOnce(&Arc<Policy>) -> R) -> R {
        registry::with_current(|current| {
            let seen = self.seen.load(Ordering::Relaxed);
            if seen >> INDEX_BITS == current.generation() {
                let slot = seen & MISSING;
                match current.policy_at(slot as usize) {
                    Some(policy) => return read(policy),
                    None if slot == MISSING => return read(&SINGLE_ATTEMPT),
                    None => {}
                }
            }
            read(&self.refill(current))
        })
    }

    /// The first call, or the first after a reload: looks the name up in
    /// `current`, checks the site, and remembers where the policy sits.
    /// Panics (remembering nothing) at an async `#[retry]` site outside a
    /// tokio runtime with time enabled, naming the function and the fix.
    fn refill(&self, current: &Registry) -> Arc<Policy> {
        #[cfg(feature = "tokio")]
        if self.site.waits_on_tokio
            && let Some(why) = crate::clock::tokio_timer_missing()
        {
            panic!("{}", no_tokio_timer(&self.site, why));
        }
        let index = current.policy_index(self.site.policy);
        let policy = checked(&self.site, index.and_then(|i| current.policy_at(i)));
        let slot = index.map_or(Some(MISSING), |i| u64::try_from(i).ok());
        // Remembered while generation and index fit their bits (a trillion
        // reloads, sixteen million policies); past that, looked up each call.
        if let Some(slot) = slot.filter(|s| *s <= MISSING)
            && current.generation() < (UNSEEN >> INDEX_BITS)
        {
            let seen = current.generation() << INDEX_BITS | slot;
            self.seen.store(seen, Ordering::Relaxed);
        }
        policy
    }
}

/// The policy for a call to gRPC method `path` from the layer at `call`:
/// the first of [`policy_names_for`](retrykit_schema::grpc::policy_names_for)
/// the registry holds, after the first-use checks; with none, one attempt
/// (gRFC A6), said once per method.
#[cfg(feature = "grpc")]
pub(crate) fn by_method(call: &CallSite, path: &str) -> Arc<Policy> {
    let names = retrykit_schema::grpc::policy_names_for(path);
    let found = registry::with_current(|current| {
        names.iter().find_map(|name| current.policy(name).cloned())
    });
    if let Some(policy) = found {
        return checked(call, Some(&policy));
    }
    static SAID: LazyLock<Mutex<HashSet<String>>> = LazyLock::new(Default::default);
    let mut said = SAID.lock().unwrap_or_else(PoisonError::into_inner);
    // Bounded: a program's methods are few; past this, said no more.
    if said.len() < 1024 && said.insert(path.to_owned()) {
        let [method, service, default] = &names;
        say_warning!(
            format!(
                "warning: {} calls gRPC method `{path}`, which no policy names (none of `{method}`, \
                 `{service}` or `{default}` is loaded), so it runs once, without retry\n  \
                 fix: import the service config that names it (`retry-policy import grpc`), or add a \
                 `[policies.{default}]` for every method",
                site(call)
            ),
            path = path
        );
    }
    Arc::clone(&SINGLE_ATTEMPT)
}

/// The site's policy `found` in the registry, after the first-use checks:
/// the single attempt, with a warning once per site, when it is missing.
pub(crate) fn checked(call: &CallSite, found: Option<&Arc<Policy>>) -> Arc<Policy> {
    match found {
        Some(policy) => {
            if limits(policy).is_some() && call.cannot_time_out() {
                warn_timeout_not_carried(call, policy);
            }
            if policy.hedging().is_some() && !call.hedged {
                once(call, Problem::NotHedged, || not_hedged(call));
            }
            Arc::clone(policy)
        }
        None => {
            once(call, Problem::MissingPolicy, || missing_policy(call));
            if loading::is_strict() {
                std::process::exit(1);
            }
            Arc::clone(&SINGLE_ATTEMPT)
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Problem {
    MissingPolicy,
    TimeoutNotCarried,
    #[cfg(feature = "tower")]
    BreakerNotCarried,
    BlockingTimeout,
    NotHedged,
}

/// Says `message` unless this site already said this problem. A site is
/// known by where it is and the policy it names (not by its address), so
/// sites made at run time, like a tower layer's, are said once too.
fn once(call: &CallSite, problem: Problem, message: impl FnOnce() -> String) {
    type Key = (&'static str, &'static str, u32, &'static str, Problem);
    static SAID: Mutex<Option<HashSet<Key>>> = Mutex::new(None);
    let key = (call.policy, call.file, call.line, call.function, problem);
    let first = SAID
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get_or_insert_with(HashSet::new)
        .insert(key);
    if first {
        say_warning!(
            message(),
            policy = call.policy,
            site = %format_args!("{}:{}", call.file, call.line)
        );
    }
}

/// Warns once when error type `E` cannot stand for a timed-out attempt
/// under a policy that limits one, or for the policy's breaker's refusal.
#[cfg(feature = "tower")]
pub(crate) fn check_carried<E: Classify>(call: &CallSite, policy: &Policy) {
    if limits(policy).is_some() && !stands_for_timeout::<E>() {
        warn_timeout_not_carried(call, policy);
    }
    let Some(breaker) = policy.breaker() else {
        return;
    };
    if !stands_for_refusal::<E>(breaker.name()) {
        once(call, Problem::BreakerNotCarried, || {
            let name = breaker.name().unwrap_or("<unnamed>");
            format!(
                "warning: {} uses retry policy `{}`, whose circuit breaker `{name}` cannot hold its \
                 attempts back there: its error type cannot stand for an attempt the breaker refused, so \
                 every attempt is sent even while the breaker is open\n  \
                 fix: add a `#[classify(breaker_open)]` variant to the error type (or return an error type \
                 whose `Classify::from_breaker_open` gives a value), or remove the breaker from this policy",
                site(call),
                call.policy
            )
        });
    }
}

/// Whether `E` can stand for a timed-out attempt.
pub(crate) fn stands_for_timeout<E: Classify>() -> bool {
    E::from_timeout(AttemptTimeout::new(1, Duration::ZERO)).is_some()
}

/// Whether `E` can stand for an attempt the breaker `name` refused.
pub(crate) fn stands_for_refusal<E: Classify>(name: Option<&str>) -> bool {
    E::from_breaker_open(BreakerOpen::new(name, BreakerState::Open, Duration::ZERO)).is_some()
}

/// Says, once per site, that `policy`'s `attempt_timeout` cannot be
/// enforced there.
fn warn_timeout_not_carried(call: &CallSite, policy: &Policy) {
    once(call, Problem::TimeoutNotCarried, || {
        let limits = limits(policy).unwrap_or_default();
        format!(
            "warning: {} uses retry policy `{}`, whose {limits} is not enforced on an attempt in flight there: \
             its error type cannot stand for a timed-out attempt, so an attempt is never cut short\n  \
             fix: add a `#[classify(timeout)]` unit variant to the error type (or return an error type \
             whose `Classify::from_timeout` gives a value), or set attempt_timeout = \"none\" (and deadline = \"none\") for this policy",
            site(call),
            call.policy
        )
    });
}

/// The limits `policy` puts on an attempt in flight, as a message names
/// them (`attempt_timeout (1s) and deadline (400ms)`); `None` without.
pub(crate) fn limits(policy: &Policy) -> Option<String> {
    let timeout = policy
        .attempt_timeout()
        .map(|t| format!("attempt_timeout ({t:?})"));
    let deadline = policy.deadline().map(|d| format!("deadline ({d:?})"));
    match (timeout, deadline) {
        (Some(t), Some(d)) => Some(format!("{t} and {d}")),
        (t, d) => t.or(d),
    }
}

/// Says, once per place in the code, that a blocking call at `at` cannot
/// enforce `policy`'s limits on an attempt in flight.
pub(crate) fn warn_blocking_timeout(at: &'static Location<'static>, policy: &Policy) {
    let call = CallSite::new("<blocking call>", at.file(), at.line(), "call_blocking");
    once(&call, Problem::BlockingTimeout, || {
        let limits = limits(policy).unwrap_or_default();
        format!(
            "warning: the blocking call at {}:{} runs under retry policy `{}`, which sets \
             {limits}; a blocking call cannot cut an attempt short at it, because a blocking \
             attempt cannot be cancelled (the deadline still stops further retries)\n  \
             fix: make the function async, bound the attempt inside it (a socket or query \
             timeout), or set attempt_timeout = \"none\" and deadline = \"none\" for this policy",
            at.file(),
            at.line(),
            policy.name().unwrap_or("<unnamed>"),
        )
    });
}

fn site(call: &CallSite) -> String {
    format!("`{}` at {}:{}", call.function, call.file, call.line)
}

/// The warning for a call whose policy the registry lacks.
pub(crate) fn missing_policy(call: &CallSite) -> String {
    let name = call.policy;
    if let Some(why) = loading::withheld(name) {
        return format!(
            "warning: {} uses retry policy `{name}`, which was left out of the policies loaded, \
             so it runs once, without retry, until this is fixed: {why}",
            site(call)
        );
    }
    let defined = registry::current();
    let names: Vec<&str> = defined.policy_names().collect();
    let suggestion = retrykit_schema::suggest::did_you_mean(name, names.iter().copied())
        .map(|s| format!(" (did you mean `{s}`?)"))
        .unwrap_or_default();
    let known = match names.len() {
        0 => "it defines no policies".to_owned(),
        n if n <= 12 => format!("it defines {}", names.join(", ")),
        n => format!(
            "it defines {n} policies, among them {}",
            names[..12].join(", ")
        ),
    };
    let why = match (loading::origin(), registry::is_installed()) {
        (Some(origin), true) => format!("{origin}; {known}"),
        (Some(origin), false) => origin,
        (None, true) => format!("the registry was installed by the program; {known}"),
        (None, false) => "nothing was loaded: no configuration loader is linked into this \
                          program (the crate with this #[retry] does not depend on \
                          retrykit-config, and nothing installed a registry)"
            .to_owned(),
    };
    format!(
        "warning: {} uses retry policy `{name}`, which is not defined{suggestion}, so it runs once, without retry\n  \
         {why}\n  \
         fix: define [policies.{name}] in the policy file (RETRY_CONFIG, or the nearest retry.toml), \
         and call retrykit_config::init() at start-up to make this an error there (RETRY_STRICT=1 makes it fatal)",
        site(call)
    )
}

/// The panic for an async `#[retry]` call where tokio's timer cannot run.
#[cfg(feature = "tokio")]
fn no_tokio_timer(call: &CallSite, why: &str) -> String {
    format!(
        "{} is an async #[retry] fn, whose waits run on tokio's timer, but {why}\n  \
         fix: run it in a tokio runtime with time enabled: #[tokio::main], a runtime built \
         with enable_time() (or enable_all()) on its Builder, or #[tokio::test(start_paused = true)] \
         in a test",
        site(call)
    )
}

/// The warning for a `#[retry]` site that runs a hedging policy unhedged.
fn not_hedged(call: &CallSite) -> String {
    let why = if call.blocking {
        "is a blocking fn"
    } else {
        "was built without the hedged loop (its build saw no hedge_after for its policy)"
    };
    format!(
        "{} uses policy `{}`, which sets hedge_after, but {why}: its calls run one attempt at a time, without hedges\n  \
         fix: build it with the policy file that sets hedge_after (an async fn taking no `&mut`), or set hedge_after = \"none\" for policy `{}`",
        site(call),
        call.policy,
        call.policy
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_warning_names_the_policy_the_site_and_the_fix() {
        const CALL: CallSite = CallSite::new("site-test-missing", "src/jobs.rs", 7, "app::run");
        let text = missing_policy(&CALL);
        assert!(text.contains("`app::run` at src/jobs.rs:7"), "{text}");
        assert!(text.contains("policy `site-test-missing`"), "{text}");
        assert!(
            text.contains("fix: define [policies.site-test-missing]"),
            "{text}"
        );
    }
}
