//! What linked code registers with `inventory` (`#[retry]` call sites,
//! declared error classes), so a loader can check a policy file against the
//! program before any call.

use super::Registry;

/// Where a `#[retry(policy = "...")]` sits in the code, and what the build
/// knew of it.
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
    /// The policy file (an absolute path) the build checked this name
    /// against, if any: the last place run-time discovery looks.
    pub config: Option<&'static str>,
    /// retrykit-config's loader, when the crate depends on it: naming it
    /// here keeps the linker from dropping the lazy load.
    pub loader: Option<fn()>,
    /// Whether the error type's `Classify::from_timeout` gives a value;
    /// `None` when the build could not tell (a generic error type).
    pub carries_timeout: Option<fn() -> bool>,
    /// Whether the error type's `Classify::from_breaker_open` gives a
    /// value; `None` when the build could not tell.
    pub carries_breaker_open: Option<fn() -> bool>,
    /// Whether the function is blocking (not `async`), so it cannot hedge.
    pub blocking: bool,
    /// Whether it was built with the hedged loop (the build saw its policy
    /// set `hedge_after`); `init()` refuses a hedging policy on a site
    /// without it.
    pub hedged: bool,
    /// Whether its calls wait on tokio's timer: its first call then checks
    /// for a tokio runtime with time enabled, and panics naming the fix.
    pub waits_on_tokio: bool,
}

impl CallSite {
    /// A call site with nothing known beyond where it is.
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

    /// Whether the error type is known not to carry a timeout, so
    /// `attempt_timeout` cannot be enforced there.
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

    /// Whether the error type is known not to carry a breaker refusal, so
    /// a breaker cannot hold its attempts back there.
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

/// An error class some code in the program can produce (registered by
/// `#[derive(Classify)]`), so a check can warn of a `retry_on` class that
/// nothing produces.
#[derive(Debug)]
pub struct DeclaredClass {
    /// The class name, as `retry_on` would list it.
    pub name: &'static str,
    /// The type (or module) that produces it, for diagnostics.
    pub by: &'static str,
}

inventory::collect!(DeclaredClass);

/// Every declared error class.
pub fn declared_classes() -> impl Iterator<Item = &'static DeclaredClass> {
    inventory::iter::<DeclaredClass>.into_iter()
}

/// Every registered call site.
pub fn call_sites() -> impl Iterator<Item = &'static CallSite> {
    inventory::iter::<CallSite>.into_iter()
}

/// Call sites whose policy name `registry` does not define.
pub fn missing_policies(registry: &Registry) -> Vec<&'static CallSite> {
    call_sites()
        .filter(|site| registry.policy(site.policy).is_none())
        .collect()
}
