//! A `#[retry]` call site at run time: its per-thread cache of its policy,
//! and the first-use checks that keep a call from quietly not retrying as
//! its policy says (a policy the registry lacks, an `attempt_timeout` the
//! error type cannot carry). Each problem is said once per call site, on
//! stderr and as a tracing warning.

use crate::policy::Policy;
use crate::registry::linked::CallSite;
use crate::registry::{self, loading};
use std::cell::Cell;
use std::collections::HashSet;
use std::panic::Location;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, PoisonError};
use std::thread::LocalKey;

/// The fallback for a name the registry lacks at run time: one attempt, no
/// retry (never a panic: a service keeps running), with a warning.
static SINGLE_ATTEMPT: LazyLock<Arc<Policy>> = LazyLock::new(|| {
    let single = Policy::builder().max_attempts(1).build();
    Arc::new(single.unwrap_or_else(|_| Policy::default()))
});

/// One call site's cached lookup, kept per thread: while the registry's
/// install generation is unchanged, the policy it
/// holds is current, so a call costs one atomic load and one reference-count
/// increment instead of a hash lookup. Each expansion declares one in a
/// `thread_local!`.
///
/// ```
/// use retry_core::__private::site::{CallSite, SiteCache};
/// use retry_core::{registry, Policy, Registry};
/// thread_local! { static SITE: SiteCache = const { SiteCache::new() }; }
/// const CALL: CallSite = CallSite::new("doc-site", file!(), line!(), "doc");
/// registry::install(Registry::builder().policy("doc-site", Policy::default()).build());
/// assert_eq!(SiteCache::lookup(&SITE, &CALL).max_attempts(), Some(3));
/// let fewer = Policy::builder().max_attempts(2).build().unwrap();
/// registry::install(Registry::builder().policy("doc-site", fewer).build());
/// assert_eq!(SiteCache::lookup(&SITE, &CALL).max_attempts(), Some(2));
/// ```
pub struct SiteCache {
    generation: Cell<u64>,
    policy: Cell<Option<Arc<Policy>>>,
    /// A second reference to the same policy, lent whole to one call that
    /// holds its policy (a failing one, or one that needs it from the
    /// start) and given back when that call ends: one call after another
    /// takes and returns it without touching the reference count.
    spare: Cell<Option<Arc<Policy>>>,
    /// Whether a call can leave its policy until it fails (see
    /// `policy_for_call`), worked out when the policy is cached.
    deferrable: Cell<bool>,
}

/// What every thread's calls at one `#[retry]` site share: whether the
/// site's policy, as of one registry generation, needs nothing at a call's
/// start (no timeout, deadline, budget or metrics), so a call can leave it
/// until it fails. One word, read with one relaxed load: a call that finds
/// it current touches neither the registry nor a thread-local (whose
/// destructor check was a third of the annotated success path).
///
/// ```
/// use retry_core::__private::site::SiteState;
/// static STATE: SiteState = SiteState::new();
/// assert!(!STATE.defers_at(4));
/// STATE.record(4, true);
/// assert!(STATE.defers_at(4) && !STATE.defers_at(5));
/// STATE.record(5, false);
/// assert!(!STATE.defers_at(5));
/// ```
#[derive(Debug)]
pub struct SiteState(AtomicU64);

impl SiteState {
    /// Nothing known yet: the first call looks.
    ///
    /// ```
    /// assert!(!retry_core::__private::site::SiteState::new().defers_at(0));
    /// ```
    #[allow(clippy::new_without_default)] // const, for a `static`
    pub const fn new() -> Self {
        SiteState(AtomicU64::new(0))
    }

    /// Whether calls may defer the policy at registry `generation`.
    ///
    /// ```
    /// use retry_core::__private::site::SiteState;
    /// let state = SiteState::new();
    /// state.record(7, true);
    /// assert!(state.defers_at(7) && !state.defers_at(8));
    /// ```
    #[inline]
    pub fn defers_at(&self, generation: u64) -> bool {
        self.0.load(Ordering::Relaxed) == Self::packed(generation, true)
    }

    /// Records whether calls may defer the policy at `generation`. Threads
    /// racing here each write what they read; a value for a generation
    /// other than the current one is simply not believed.
    ///
    /// ```
    /// use retry_core::__private::site::SiteState;
    /// let state = SiteState::new();
    /// state.record(3, false);
    /// assert!(!state.defers_at(3));
    /// ```
    pub fn record(&self, generation: u64, defers: bool) {
        self.0
            .store(Self::packed(generation, defers), Ordering::Relaxed);
    }

    /// The generation and the flag in one word (the generation would need
    /// 2^63 installs to wrap onto another).
    const fn packed(generation: u64, defers: bool) -> u64 {
        generation.wrapping_mul(2) | defers as u64
    }
}

impl SiteCache {
    /// An empty cache; the first lookup fills it.
    ///
    /// ```
    /// let _ = retry_core::__private::site::SiteCache::new();
    /// ```
    #[allow(clippy::new_without_default)] // const, for `thread_local!`
    pub const fn new() -> Self {
        SiteCache {
            generation: Cell::new(u64::MAX),
            policy: Cell::new(None),
            spare: Cell::new(None),
            deferrable: Cell::new(false),
        }
    }

    /// The policy of call site `call` through this thread's cache in `site`.
    /// A miss (the first call, or the first after a reload) also checks the
    /// site: a missing policy or an `attempt_timeout` its error type cannot
    /// carry is said once per site.
    ///
    /// ```
    /// use retry_core::__private::site::{CallSite, SiteCache};
    /// thread_local! { static SITE: SiteCache = const { SiteCache::new() }; }
    /// const CALL: CallSite = CallSite::new("no-such-site", file!(), line!(), "doc");
    /// assert_eq!(SiteCache::lookup(&SITE, &CALL).max_attempts(), Some(1));
    /// ```
    pub fn lookup(site: &'static LocalKey<SiteCache>, call: &'static CallSite) -> Arc<Policy> {
        site.try_with(|cache| cache.get(call))
            .unwrap_or_else(|_| checked(call))
    }

    fn get(&self, call: &'static CallSite) -> Arc<Policy> {
        self.refresh(call);
        self.cached(call)
    }

    /// A reference to the policy the cache holds (`refresh` made sure there
    /// is one; the checked lookup stands in if not).
    fn cached(&self, call: &'static CallSite) -> Arc<Policy> {
        let current = self.policy.take().unwrap_or_else(|| checked(call));
        self.policy.set(Some(Arc::clone(&current)));
        current
    }

    /// The policy for a call that holds it until it ends: the spare
    /// reference if it is in (no count taken), else a counted one.
    fn lend(&self, call: &'static CallSite) -> Arc<Policy> {
        self.spare.take().unwrap_or_else(|| self.cached(call))
    }

    /// Takes back a policy a call held as of registry `generation`, now
    /// that the call is over: as the spare while that generation is this
    /// thread's current one and no spare is in; dropped otherwise (a reload
    /// came, the call ended on another thread, or another call's came back
    /// first). Out of line: only a call that held its policy gets here.
    /// (Tested in `tests/site_policy_spare.rs`.)
    #[cold]
    #[inline(never)]
    pub(crate) fn give_back(
        site: &'static LocalKey<SiteCache>,
        generation: u64,
        policy: Arc<Policy>,
    ) {
        let _ = site.try_with(move |cache| {
            if cache.generation.get() == generation {
                // Whichever is not kept is dropped here.
                let kept = cache.spare.take();
                cache.spare.set(Some(kept.unwrap_or(policy)));
            }
        });
    }
}

impl SiteCache {
    /// The policy of one call at site `call`, through this thread's cache
    /// in `site`: the registry generation the cache was read at, and the
    /// policy held at once if the call's first attempt needs it (an attempt
    /// timeout, a deadline, a budget, metrics); otherwise `None`, and the
    /// call takes it at its first failure as of that generation, so the
    /// success path takes no reference count.
    ///
    /// ```
    /// use retry_core::__private::site::{CallSite, SiteCache};
    /// use retry_core::{registry, Policy, Registry};
    /// use std::time::Duration;
    /// thread_local! { static SITE: SiteCache = const { SiteCache::new() }; }
    /// const CALL: CallSite = CallSite::new("doc-for-call", file!(), line!(), "doc");
    /// registry::install(Registry::builder().policy("doc-for-call", Policy::default()).build());
    /// let (_, held) = SiteCache::policy_for_call(&SITE, &CALL);
    /// // Left for the first failure (held at once when metrics are recorded).
    /// assert_eq!(held.is_none(), !retry_core::__private::RECORDS_METRICS);
    /// let timed = Policy::builder().deadline(Some(Duration::from_secs(5))).build().unwrap();
    /// registry::install(Registry::builder().policy("doc-for-call", timed).build());
    /// assert!(SiteCache::policy_for_call(&SITE, &CALL).1.is_some());
    /// ```
    #[inline]
    pub fn policy_for_call(
        site: &'static LocalKey<SiteCache>,
        call: &'static CallSite,
    ) -> (u64, Option<Arc<Policy>>) {
        site.try_with(|cache| {
            let generation = cache.refresh(call);
            if cache.deferrable.get() {
                return (generation, None);
            }
            (generation, Some(cache.lend(call)))
        })
        .unwrap_or_else(|_| (0, Some(checked(call))))
    }

    /// The policy a call at site `call` that started at registry
    /// `generation` runs under, now that it needs it (see `as_of`): from
    /// this thread's cache when the generation is still current (its spare
    /// reference, or a counted one; no lookup by name), else as of that
    /// generation.
    pub(crate) fn policy_as_of(
        site: &'static LocalKey<SiteCache>,
        call: &'static CallSite,
        generation: u64,
    ) -> Arc<Policy> {
        site.try_with(|cache| (cache.refresh(call) == generation).then(|| cache.lend(call)))
            .ok()
            .flatten()
            .unwrap_or_else(|| as_of(call, generation))
    }

    /// Makes the cache current for `call`; returns the registry generation
    /// it was read at.
    #[inline]
    fn refresh(&self, call: &'static CallSite) -> u64 {
        // Read the generation before the registry: if an install lands in
        // between, the cache is stamped older than what it holds and the
        // next call simply looks again.
        let generation = registry::generation();
        if self.generation.get() != generation {
            self.fill(call, generation);
        }
        generation
    }

    /// Caches `call`'s policy as of `generation`: the first call on this
    /// thread, or the first after a reload.
    #[cold]
    #[inline(never)]
    fn fill(&self, call: &'static CallSite, generation: u64) {
        self.generation.set(generation);
        // The spare is the last generation's policy.
        drop(self.spare.take());
        let policy = checked(call);
        self.deferrable.set(!needs_policy_at_start(&policy));
        self.policy.set(Some(policy));
    }
}

/// Whether a call's first attempt needs its policy in hand: to arm an
/// attempt timeout, start a deadline, deposit in or be paced by a budget,
/// or record metrics.
fn needs_policy_at_start(policy: &Policy) -> bool {
    policy.attempt_timeout().is_some()
        || policy.deadline().is_some()
        || !policy.budgets.is_empty()
        || cfg!(feature = "metrics")
}

/// `call`'s policy as of install `generation`: what a call that started
/// then and has now failed runs under. A generation the registry no longer
/// keeps (a call whose first attempt outlived several reloads) gets the
/// current policy, with a warning once per site.
pub(crate) fn as_of(call: &CallSite, generation: u64) -> Arc<Policy> {
    match registry::policy_as_of(call.policy, generation) {
        Some(Some(policy)) => policy,
        // Missing then: the start ran it as a single attempt.
        Some(None) => checked(call),
        None => {
            once(call, Problem::OutlivedReloads, || {
                format!(
                    "warning: a call of {} outlived several reloads of the policy registry \
                     during its first attempt; it retries under the current `{}`, not the \
                     policy it started with",
                    site(call),
                    call.policy
                )
            });
            checked(call)
        }
    }
}

/// The site's policy, after the first-use checks. Also the lookup of a
/// tower `RetryLayer::policy(name)`, whose call site is where it was built.
pub(crate) fn checked(call: &CallSite) -> Arc<Policy> {
    match registry::policy(call.policy) {
        Some(policy) => {
            if policy.attempt_timeout().is_some() && call.cannot_time_out() {
                once(call, Problem::TimeoutNotCarried, || {
                    timeout_not_carried(call, &policy)
                });
            }
            policy
        }
        None => {
            once(call, Problem::MissingPolicy, || missing_policy(call));
            if loading::is_strict() {
                // Strict mode asked for this to stop the program, not to limp on.
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
    OutlivedReloads,
    BlockingTimeout,
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
        let message = message();
        eprintln!("{message}");
        #[cfg(feature = "tracing")]
        tracing::warn!(
            target: "retry",
            policy = call.policy,
            site = %format_args!("{}:{}", call.file, call.line),
            "{message}"
        );
    }
}

/// Says, once per site, that `policy`'s `attempt_timeout` cannot be
/// enforced there (for sites whose error type is known only at the call).
#[cfg(feature = "tower")]
pub(crate) fn warn_timeout_not_carried(call: &CallSite, policy: &Policy) {
    once(call, Problem::TimeoutNotCarried, || {
        timeout_not_carried(call, policy)
    });
}

/// Says, once per place in the code, that a blocking call at `at` runs
/// under a policy whose `attempt_timeout` it cannot enforce: a blocking
/// attempt cannot be cancelled.
pub(crate) fn warn_blocking_timeout(at: &'static Location<'static>, policy: &Policy) {
    let call = CallSite::new("<blocking call>", at.file(), at.line(), "call_blocking");
    once(&call, Problem::BlockingTimeout, || {
        let timeout = policy.attempt_timeout().unwrap_or_default();
        format!(
            "warning: the blocking call at {}:{} runs under retry policy `{}`, which sets \
             attempt_timeout ({timeout:?}); a blocking call cannot enforce it, because a blocking \
             attempt cannot be cancelled\n  \
             fix: make the function async, bound the attempt inside it (a socket or query \
             timeout), or set attempt_timeout = \"none\" for this policy",
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
    let defined = registry::current();
    let names: Vec<&str> = defined.policy_names().collect();
    let suggestion = retry_schema::suggest::did_you_mean(name, names.iter().copied())
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
                          retry-config, and nothing installed a registry)"
            .to_owned(),
    };
    format!(
        "warning: {} uses retry policy `{name}`, which is not defined{suggestion}, so it runs once, without retry\n  \
         {why}\n  \
         fix: define [policies.{name}] in the policy file (RETRY_CONFIG, or the nearest retry.toml), \
         and call retry_config::init() at start-up to make this an error there (RETRY_STRICT=1 makes it fatal)",
        site(call)
    )
}

fn timeout_not_carried(call: &CallSite, policy: &Policy) -> String {
    let timeout = policy.attempt_timeout().unwrap_or_default();
    format!(
        "warning: {} uses retry policy `{}`, whose attempt_timeout ({timeout:?}) is not enforced there: \
         its error type cannot stand for a timed-out attempt, so an attempt is never cut short\n  \
         fix: add a `#[classify(timeout)]` unit variant to the error type (or return an error type \
         whose `Classify::from_timeout` gives a value), or set attempt_timeout = \"none\" for this policy",
        site(call),
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
