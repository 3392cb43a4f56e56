//! What linked code registers with `inventory`: each `#[retry]` call site
//! and each error class a `#[derive(Classify)]` type can produce, so a
//! loader can check a policy file against the program before any call.

use super::Registry;

/// Where a `#[retry(policy = "...")]` sits in the code, registered by the
/// macro so that start-up checks can list names the config lacks and the
/// first call can say why it will not retry.
///
/// ```
/// const SITE: retrykit_core::__private::loader::CallSite =
///     retrykit_core::__private::loader::CallSite::new("outbox", file!(), line!(), "publish");
/// retrykit_core::__private::inventory::submit! { SITE }
/// assert!(retrykit_core::__private::loader::call_sites().any(|c| c.policy == "outbox"));
/// ```
#[derive(Debug)]
pub struct CallSite {
    /// The policy name it uses.
    pub policy: &'static str,
    /// Its source file.
    pub file: &'static str,
    /// Its line.
    pub line: u32,
    /// The annotated function.
    pub function: &'static str,
    /// The policy file the build checked this name against (an absolute
    /// path), if any: the last place run-time discovery looks.
    pub config: Option<&'static str>,
    /// A loader for the configuration, set by `#[retry]` when the crate
    /// depends on retrykit-config: naming it here links it into the program
    /// whatever else the program names, so the lazy load cannot be dropped
    /// by the linker.
    pub loader: Option<fn()>,
    /// Whether the function's error type can stand for a timed-out attempt
    /// (`Classify::from_timeout` gives a value); `None` when the build could
    /// not tell (a generic error type).
    pub carries_timeout: Option<fn() -> bool>,
    /// Whether the function's error type can stand for an attempt a
    /// circuit breaker refused (`Classify::from_breaker_open` gives a
    /// value); `None` when the build could not tell (a generic error type).
    pub carries_breaker_open: Option<fn() -> bool>,
    /// Whether the annotated function is blocking (not `async`): it runs
    /// one attempt at a time, so a policy that hedges cannot serve it.
    /// `false` for a site that does not say.
    pub blocking: bool,
    /// Whether it was built with the hedged loop (an async fn whose policy
    /// the build saw set `hedge_after`): a site without it runs a hedging
    /// policy one attempt at a time, which `init()` refuses.
    pub hedged: bool,
    /// Whether its calls wait on tokio's timer (an async `#[retry]` fn):
    /// then its first call checks that it runs inside a tokio runtime with
    /// time enabled, and panics naming the fix when not, rather than let
    /// the first retry panic inside tokio.
    pub waits_on_tokio: bool,
}

impl CallSite {
    /// A call site with nothing known beyond where it is.
    ///
    /// ```
    /// let site = retrykit_core::__private::loader::CallSite::new("db", "src/db.rs", 3, "query");
    /// assert_eq!((site.policy, site.line, site.config), ("db", 3, None));
    /// ```
    pub const fn new(
        policy: &'static str,
        file: &'static str,
        line: u32,
        function: &'static str,
    ) -> Self {
        CallSite {
            policy,
            file,
            line,
            function,
            config: None,
            loader: None,
            carries_timeout: None,
            carries_breaker_open: None,
            blocking: false,
            hedged: false,
            waits_on_tokio: false,
        }
    }

    /// Whether the function's error type is known to be unable to stand for a
    /// timed-out attempt, so a policy's `attempt_timeout` cannot be enforced there.
    ///
    /// ```
    /// let mut site = retrykit_core::__private::loader::CallSite::new("db", "src/db.rs", 3, "query");
    /// assert!(!site.cannot_time_out()); // unknown
    /// site.carries_timeout = Some(|| false);
    /// assert!(site.cannot_time_out());
    /// ```
    pub fn cannot_time_out(&self) -> bool {
        self.carries_timeout.is_some_and(|carries| !carries())
    }

    /// Whether the function's error type is known to be unable to stand for
    /// an attempt a circuit breaker refused, so a policy's breaker could
    /// never hold its attempts back there.
    ///
    /// ```
    /// let mut site = retrykit_core::__private::loader::CallSite::new("db", "src/db.rs", 3, "query");
    /// assert!(!site.cannot_carry_breaker_open()); // unknown
    /// site.carries_breaker_open = Some(|| false);
    /// assert!(site.cannot_carry_breaker_open());
    /// ```
    pub fn cannot_carry_breaker_open(&self) -> bool {
        self.carries_breaker_open.is_some_and(|carries| !carries())
    }
}

inventory::collect!(CallSite);

/// An error class some code in the program can produce, registered (by
/// `#[derive(Classify)]`, or by hand) so that configuration checks can warn
/// about a `retry_on` that names a class nothing produces.
///
/// ```
/// retrykit_core::__private::inventory::submit! {
///     retrykit_core::__private::derive::DeclaredClass { name: "conflict", by: "OrderError" }
/// }
/// assert!(retrykit_core::__private::loader::declared_classes().any(|c| c.name == "conflict"));
/// ```
#[derive(Debug)]
pub struct DeclaredClass {
    /// The class name, as `retry_on` would list it.
    pub name: &'static str,
    /// The type (or module) that produces it, for diagnostics.
    pub by: &'static str,
}

inventory::collect!(DeclaredClass);

/// Every declared error class.
///
/// ```
/// retrykit_core::__private::inventory::submit! {
///     retrykit_core::__private::derive::DeclaredClass { name: "stale", by: "CacheError" }
/// }
/// assert!(retrykit_core::__private::loader::declared_classes().any(|c| (c.name, c.by) == ("stale", "CacheError")));
/// ```
pub fn declared_classes() -> impl Iterator<Item = &'static DeclaredClass> {
    inventory::iter::<DeclaredClass>.into_iter()
}

/// Every registered call site.
///
/// ```
/// const SITE: retrykit_core::__private::loader::CallSite =
///     retrykit_core::__private::loader::CallSite::new("cache", file!(), line!(), "refresh");
/// retrykit_core::__private::inventory::submit! { SITE }
/// assert!(retrykit_core::__private::loader::call_sites().any(|c| (c.policy, c.function) == ("cache", "refresh")));
/// ```
pub fn call_sites() -> impl Iterator<Item = &'static CallSite> {
    inventory::iter::<CallSite>.into_iter()
}

/// Call sites whose policy name `registry` does not define.
///
/// ```
/// use retrykit_core::__private::loader::{self, CallSite};
/// use retrykit_core::{Policy, Registry};
/// const SITE: CallSite = CallSite::new("doc-missing", file!(), line!(), "send");
/// retrykit_core::__private::inventory::submit! { SITE }
/// let missing = |reg: &Registry| loader::missing_policies(reg).iter().any(|s| s.policy == "doc-missing");
/// assert!(missing(&Registry::default()));
/// assert!(!missing(&Registry::builder().policy("doc-missing", Policy::default()).build()));
/// ```
pub fn missing_policies(registry: &Registry) -> Vec<&'static CallSite> {
    call_sites()
        .filter(|site| registry.policy(site.policy).is_none())
        .collect()
}
