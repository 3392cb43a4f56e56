//! The keys of a policy or budget table: each key's name, the kind of value
//! it accepts, an example for fixes, and its built-in default, one row per
//! key in the table at the end of this file. retrykit-config reads a value by
//! its key's [`Kind`], `#[retry]` names the keys in its errors, and
//! retrykit-core's validation names the fields it checks with [`Key::name`], so
//! a problem it finds maps back to the key that set it.
//!
//! ```
//! use retrykit_schema::keys::{BuiltIn, Key, Kind, POLICY_KEYS};
//! let key = Key::find(POLICY_KEYS, "max_attempts").unwrap();
//! assert_eq!(key.kind(), Kind::Count);
//! assert_eq!(key.built_in(), BuiltIn::Count(3));
//! ```

use crate::duration::show_duration;
use std::time::Duration;

/// The backoff shapes, as written in files.
///
/// ```
/// assert!(retrykit_schema::keys::SHAPES.contains(&"exponential"));
/// ```
pub const SHAPES: &[&str] = &["constant", "linear", "exponential"];

/// The jitter modes written as plain words; the table form is
/// `{ proportional = <ratio> }` ([`PROPORTIONAL`]).
///
/// ```
/// assert!(retrykit_schema::keys::JITTER_MODES.contains(&"decorrelated"));
/// ```
pub const JITTER_MODES: &[&str] = &["none", "full", "equal", "decorrelated"];

/// The key of jitter's table form, `{ proportional = 0.25 }`.
///
/// ```
/// assert_eq!(retrykit_schema::keys::PROPORTIONAL, "proportional");
/// ```
pub const PROPORTIONAL: &str = "proportional";

/// The word that switches off a duration that may be absent (a deadline,
/// an attempt timeout, a hint ceiling), a policy's budgets or its breaker.
///
/// ```
/// assert_eq!(retrykit_schema::keys::NONE, "none");
/// ```
pub const NONE: &str = "none";

/// What values a key accepts.
///
/// ```
/// use retrykit_schema::keys::{Key, Kind};
/// assert_eq!(Key::Deadline.kind(), Kind::DurationOrNone);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// One of [`SHAPES`].
    Shape,
    /// One of [`JITTER_MODES`], or `{ proportional = <ratio> }`.
    Jitter,
    /// A number, integer or float.
    Number,
    /// A duration string ([`crate::duration`]).
    Duration,
    /// A duration string, or [`NONE`].
    DurationOrNone,
    /// A whole number from 0 to `u32::MAX`.
    Count,
    /// An array of class names ([`crate::classes`]).
    Classes,
    /// The name of a `[budgets.NAME]` table, an array of such names, or [`NONE`].
    NamesOrNone,
    /// The name of one `[breakers.NAME]` table, or [`NONE`].
    NameOrNone,
    /// An array of HTTP status codes (whole numbers).
    Statuses,
    /// An array of HTTP method names (strings, upper case).
    Methods,
    /// An array of gRPC status code names ([`crate::grpc::CODES`]).
    GrpcCodes,
    /// A whole number of bytes, from 0 up.
    Bytes,
    /// One of [`BUDGET_MODES`]: how a budget limits retries.
    BudgetMode,
    /// One of [`SCOPES`]: where a budget is kept.
    Scope,
    /// A store's URL (`redis://...`), or [`NONE`].
    StoreOrNone,
    /// A percentile (`"p95"`), a duration, or [`NONE`] ([`crate::hedge`]).
    HedgeAfter,
    /// One of [`LIMIT_KINDS`]: how a concurrency limit sets its size.
    LimitKind,
    /// A share from 0 to 1 (a chaos rate).
    Rate,
    /// One of [`CHAOS_FAULTS`]: the class of the faults chaos injects.
    FaultClass,
}

/// The classes of the faults a policy's `chaos` table may inject.
///
/// ```
/// assert!(retrykit_schema::keys::CHAOS_FAULTS.contains(&"throttled"));
/// ```
pub const CHAOS_FAULTS: &[&str] = &["transient", "timeout", "throttled", "permanent"];

/// The table of a policy (in the file or a profile) that sets its chaos:
/// `[policies.NAME.chaos]`, keys [`CHAOS_KEYS`].
///
/// ```
/// assert_eq!(retrykit_schema::keys::CHAOS, "chaos");
/// ```
pub const CHAOS: &str = "chaos";

/// The kinds of concurrency limit a `[limits.NAME]` table may name:
/// `fixed` (`max_in_flight` attempts at once), and the adaptive `aimd`
/// (additive increase, multiplicative decrease on a drop) and `gradient`
/// (the latency against the dependency's no-load latency).
///
/// ```
/// assert_eq!(retrykit_schema::keys::LIMIT_KINDS, &["fixed", "aimd", "gradient"]);
/// ```
pub const LIMIT_KINDS: &[&str] = &["fixed", "aimd", "gradient"];

/// What an `aimd` limit's `drop_on` may name: the classes that say the
/// dependency is overloaded.
///
/// ```
/// assert_eq!(retrykit_schema::keys::DROP_CLASSES, &["timeout", "throttled"]);
/// ```
pub const DROP_CLASSES: &[&str] = &["timeout", "throttled"];

/// Where a budget may be kept, as written in files: `local` (each process
/// its own) or `fleet` (shared through the budget's `store`).
///
/// ```
/// assert_eq!(retrykit_schema::keys::SCOPES, &["local", "fleet"]);
/// ```
pub const SCOPES: &[&str] = &["local", "fleet"];

/// A store URL as messages show it: without the password (and user) of
/// `redis://user:password@host`, so no message prints a credential.
///
/// ```
/// use retrykit_schema::keys::store_shown;
/// assert_eq!(store_shown("redis://me:secret@cache:6379/0"), "redis://cache:6379/0");
/// assert_eq!(store_shown("cache:6379"), "cache:6379");
/// ```
pub fn store_shown(url: &str) -> String {
    let mut shown = String::with_capacity(url.len());
    let mut from = 0;
    for userinfo in credentials(url) {
        shown.push_str(&url[from..userinfo.start]);
        // The `@` after the user and password goes with them.
        from = userinfo.end + 1;
    }
    shown.push_str(&url[from..]);
    shown
}

/// Where `text` holds a URL's user and password: for each `scheme://` in
/// it, the part of its authority before the last `@` (the authority ends at
/// `/`, `?`, `#`, a quote, a backslash or white space). Messages and
/// excerpts hide these ranges, so none prints a credential.
///
/// ```
/// let text = r#"store = "redis://me:secret@cache:6379/0""#;
/// let found: Vec<_> = retrykit_schema::keys::credentials(text).map(|r| &text[r]).collect();
/// assert_eq!(found, ["me:secret"]);
/// ```
pub fn credentials(text: &str) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
    text.match_indices("://").filter_map(move |(at, sep)| {
        let start = at + sep.len();
        let authority = &text[start..];
        let end = authority
            .find(|c: char| matches!(c, '/' | '?' | '#' | '"' | '\'' | '\\') || c.is_whitespace())
            .unwrap_or(authority.len());
        let userinfo = authority[..end].rfind('@')?;
        Some(start..start + userinfo)
    })
}

/// How a budget limits retries, as written in files: `window` (a share of
/// calls over a sliding window, the default), `adaptive` (client-side
/// rate limiting, the AWS SDKs' adaptive mode, which paces every attempt)
/// or `grpc_throttling` (gRFC A6's retry throttling, a service config's
/// `retryThrottling`: a token bucket that stops retries and hedges while
/// half or more of it is spent).
///
/// ```
/// assert_eq!(
///     retrykit_schema::keys::BUDGET_MODES,
///     &["window", "adaptive", "grpc_throttling"]
/// );
/// ```
pub const BUDGET_MODES: &[&str] = &["window", "adaptive", "grpc_throttling"];

/// A key's built-in default: what a policy has when no layer sets the key.
///
/// ```
/// use retrykit_schema::keys::{BuiltIn, Key};
/// assert_eq!(Key::Base.built_in().as_toml().as_deref(), Some("\"100ms\""));
/// assert_eq!(Key::RetryOn.built_in(), BuiltIn::Unset);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BuiltIn {
    /// A word: a backoff shape, a jitter mode.
    Word(&'static str),
    /// A number.
    Number(f64),
    /// A whole number.
    Count(u32),
    /// A duration.
    Duration(Duration),
    /// Switched off: [`NONE`].
    None,
    /// Not set at all, which has its own meaning: `retry_on` unset retries
    /// every class but permanent; a `grpc_throttling` budget's `max_tokens`
    /// and `token_ratio` have no default and must be set.
    Unset,
    /// An empty list: nothing besides what the engine always does.
    Empty,
}

impl Key {
    /// Whether the budget key means something to a budget of `mode` (one of
    /// [`BUDGET_MODES`]): an adaptive budget has no setting but its mode; a
    /// `grpc_throttling` one has `max_tokens` and `token_ratio` (and no
    /// scope: its bucket is kept in each process); those two mean nothing
    /// to the other modes.
    ///
    /// ```
    /// use retrykit_schema::keys::Key;
    /// assert!(Key::Ratio.applies_to_mode("window"));
    /// assert!(!Key::Ratio.applies_to_mode("adaptive"));
    /// assert!(Key::Mode.applies_to_mode("adaptive"));
    /// assert!(Key::MaxTokens.applies_to_mode("grpc_throttling"));
    /// assert!(!Key::MaxTokens.applies_to_mode("window"));
    /// assert!(!Key::Scope.applies_to_mode("grpc_throttling"));
    /// ```
    pub fn applies_to_mode(self, mode: &str) -> bool {
        let throttling = matches!(self, Key::MaxTokens | Key::TokenRatio);
        match mode {
            "adaptive" => self == Key::Mode,
            "grpc_throttling" => self == Key::Mode || throttling,
            _ => !throttling,
        }
    }
}

impl Key {
    /// Whether the limit key means something to a limit of `kind` (one of
    /// [`LIMIT_KINDS`]): `kind`, `max_wait` and `max_waiting` to every
    /// kind, `max_in_flight` to a fixed one, the sizes to both adaptive
    /// kinds, and each adaptive kind's own keys to it. A key of another
    /// kind is an error.
    ///
    /// ```
    /// use retrykit_schema::keys::Key;
    /// assert!(Key::MaxInFlight.applies_to_limit_kind("fixed"));
    /// assert!(!Key::MaxInFlight.applies_to_limit_kind("aimd"));
    /// assert!(Key::MinLimit.applies_to_limit_kind("gradient"));
    /// assert!(Key::Decrease.applies_to_limit_kind("aimd"));
    /// assert!(!Key::Decrease.applies_to_limit_kind("gradient"));
    /// assert!(Key::MaxWait.applies_to_limit_kind("gradient"));
    /// ```
    pub fn applies_to_limit_kind(self, kind: &str) -> bool {
        match self {
            Key::MaxInFlight => kind == "fixed",
            Key::InitialLimit | Key::MinLimit | Key::MaxLimit => kind != "fixed",
            Key::Decrease | Key::DropOn | Key::DropAbove => kind == "aimd",
            Key::Tolerance | Key::Smoothing | Key::LimitProbeEvery => kind == "gradient",
            _ => true,
        }
    }

    /// Whether the breaker key means something only to a breaker whose
    /// scope is `fleet`: its store, and how its host talks to the store.
    /// A local breaker that sets one leaves it unused (a warning).
    ///
    /// ```
    /// use retrykit_schema::keys::Key;
    /// assert!(Key::StoreTimeout.fleet_only() && Key::Refresh.fleet_only());
    /// assert!(Key::BreakerStore.fleet_only());
    /// assert!(!Key::BreakerScope.fleet_only() && !Key::Probes.fleet_only());
    /// ```
    pub const fn fleet_only(self) -> bool {
        matches!(self, Key::BreakerStore | Key::StoreTimeout | Key::Refresh)
    }
}

impl BuiltIn {
    /// The number, for a [`BuiltIn::Number`].
    ///
    /// ```
    /// assert_eq!(retrykit_schema::keys::Key::Factor.built_in().number(), Some(2.0));
    /// ```
    pub const fn number(self) -> Option<f64> {
        match self {
            BuiltIn::Number(n) => Some(n),
            _ => None,
        }
    }

    /// The word, for a [`BuiltIn::Word`].
    ///
    /// ```
    /// assert_eq!(retrykit_schema::keys::Key::Backoff.built_in().word(), Some("exponential"));
    /// ```
    pub const fn word(self) -> Option<&'static str> {
        match self {
            BuiltIn::Word(w) => Some(w),
            _ => None,
        }
    }

    /// The default as a file writes it (`None` for [`BuiltIn::Unset`], which
    /// no value can write).
    ///
    /// ```
    /// use retrykit_schema::keys::Key;
    /// assert_eq!(Key::Jitter.built_in().as_toml().as_deref(), Some("\"full\""));
    /// assert_eq!(Key::Factor.built_in().as_toml().as_deref(), Some("2"));
    /// assert_eq!(Key::Deadline.built_in().as_toml().as_deref(), Some("\"none\""));
    /// ```
    pub fn as_toml(self) -> Option<String> {
        match self {
            BuiltIn::Word(word) => Some(format!("\"{word}\"")),
            BuiltIn::Number(n) => Some(n.to_string()),
            BuiltIn::Count(n) => Some(n.to_string()),
            BuiltIn::Duration(d) => Some(format!("\"{}\"", show_duration(d))),
            BuiltIn::None => Some(format!("\"{NONE}\"")),
            BuiltIn::Unset => None,
            BuiltIn::Empty => Some("[]".to_owned()),
        }
    }
}

/// Everything the schema says about one key.
struct Spec {
    name: &'static str,
    kind: Kind,
    example: &'static str,
    built_in: BuiltIn,
}

impl Key {
    /// The key as written in files (and, upper-cased, in environment variables).
    ///
    /// ```
    /// assert_eq!(retrykit_schema::keys::Key::MinDelay.name(), "min_delay");
    /// ```
    pub const fn name(self) -> &'static str {
        self.spec().name
    }

    /// The kind of value the key accepts.
    ///
    /// ```
    /// use retrykit_schema::keys::{Key, Kind};
    /// assert_eq!(Key::Window.kind(), Kind::Duration);
    /// ```
    pub const fn kind(self) -> Kind {
        self.spec().kind
    }

    /// A valid value, as a file writes it: what a fix suggests.
    ///
    /// ```
    /// assert_eq!(retrykit_schema::keys::Key::Cap.example(), "\"30s\"");
    /// ```
    pub const fn example(self) -> &'static str {
        self.spec().example
    }

    /// The built-in default (retrykit-core's; a test in retrykit-config holds
    /// the two together).
    ///
    /// ```
    /// use retrykit_schema::keys::{BuiltIn, Key};
    /// assert_eq!(Key::MaxAttempts.built_in(), BuiltIn::Count(3));
    /// ```
    pub const fn built_in(self) -> BuiltIn {
        self.spec().built_in
    }

    /// The key of `keys` called `name` (exactly: keys are lower case).
    ///
    /// ```
    /// use retrykit_schema::keys::{BUDGET_KEYS, Key, POLICY_KEYS};
    /// assert_eq!(Key::find(POLICY_KEYS, "cap"), Some(Key::Cap));
    /// assert_eq!(Key::find(BUDGET_KEYS, "cap"), None);
    /// ```
    pub fn find(keys: &[Key], name: &str) -> Option<Key> {
        keys.iter().copied().find(|k| k.name() == name)
    }

    /// The policy or budget key called `name`: how a field named by
    /// retrykit-core's validation (which names fields with [`Key::name`]) maps
    /// back to its key. A breaker's fields are found among
    /// [`BREAKER_KEYS`] (`Key::find(BREAKER_KEYS, name)`): some share a
    /// name with a budget key.
    ///
    /// ```
    /// use retrykit_schema::keys::Key;
    /// assert_eq!(Key::named("window"), Some(Key::Window));
    /// assert_eq!(Key::named("attempts"), None);
    /// ```
    pub fn named(name: &str) -> Option<Key> {
        Key::find(POLICY_KEYS, name).or_else(|| Key::find(BUDGET_KEYS, name))
    }
}

/// Declares the keys, one row each: the only place a key is added.
macro_rules! keys {
    (
        policy { $( $(#[$pdoc:meta])* $pkey:ident = $pname:literal, $pkind:ident, $pexample:literal, $pbuilt_in:expr; )* }
        budget { $( $(#[$bdoc:meta])* $bkey:ident = $bname:literal, $bkind:ident, $bexample:literal, $bbuilt_in:expr; )* }
        breaker { $( $(#[$kdoc:meta])* $kkey:ident = $kname:literal, $kkind:ident, $kexample:literal, $kbuilt_in:expr; )* }
        limit { $( $(#[$ldoc:meta])* $lkey:ident = $lname:literal, $lkind:ident, $lexample:literal, $lbuilt_in:expr; )* }
        chaos { $( $(#[$cdoc:meta])* $ckey:ident = $cname:literal, $ckind:ident, $cexample:literal, $cbuilt_in:expr; )* }
    ) => {
        /// A key of a policy, budget or breaker table.
        ///
        /// ```
        /// assert_eq!(retrykit_schema::keys::Key::AttemptTimeout.name(), "attempt_timeout");
        /// ```
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Key {
            $( $(#[$pdoc])* $pkey, )*
            $( $(#[$bdoc])* $bkey, )*
            $( $(#[$kdoc])* $kkey, )*
            $( $(#[$ldoc])* $lkey, )*
            $( $(#[$cdoc])* $ckey, )*
        }

        /// Every policy key, in the order the tools list them.
        ///
        /// ```
        /// assert_eq!(retrykit_schema::keys::POLICY_KEYS[0].name(), "backoff");
        /// ```
        pub const POLICY_KEYS: &[Key] = &[ $( Key::$pkey, )* ];

        /// Every budget key.
        ///
        /// ```
        /// assert_eq!(retrykit_schema::keys::BUDGET_KEYS.len(), 8);
        /// ```
        pub const BUDGET_KEYS: &[Key] = &[ $( Key::$bkey, )* ];

        /// Every breaker key (`[breakers.NAME]`). Some share a name with a
        /// budget key (`window`, `scope`, `store`): names are unique within
        /// a table.
        ///
        /// ```
        /// use retrykit_schema::keys::{BREAKER_KEYS, Key};
        /// assert_eq!(Key::find(BREAKER_KEYS, "window"), Some(Key::BreakerWindow));
        /// ```
        pub const BREAKER_KEYS: &[Key] = &[ $( Key::$kkey, )* ];

        /// Every concurrency limit key (`[limits.NAME]`).
        ///
        /// ```
        /// use retrykit_schema::keys::{LIMIT_KEYS, Key};
        /// assert_eq!(Key::find(LIMIT_KEYS, "kind"), Some(Key::LimitKind));
        /// ```
        pub const LIMIT_KEYS: &[Key] = &[ $( Key::$lkey, )* ];

        /// Every key of a policy's chaos table (`[policies.NAME.chaos]`).
        ///
        /// ```
        /// use retrykit_schema::keys::{CHAOS_KEYS, Key};
        /// assert_eq!(Key::find(CHAOS_KEYS, "fault_rate"), Some(Key::ChaosFaultRate));
        /// ```
        pub const CHAOS_KEYS: &[Key] = &[ $( Key::$ckey, )* ];

        impl Key {
            const fn spec(self) -> Spec {
                match self {
                    $( Key::$pkey => Spec { name: $pname, kind: Kind::$pkind, example: $pexample, built_in: $pbuilt_in }, )*
                    $( Key::$bkey => Spec { name: $bname, kind: Kind::$bkind, example: $bexample, built_in: $bbuilt_in }, )*
                    $( Key::$kkey => Spec { name: $kname, kind: Kind::$kkind, example: $kexample, built_in: $kbuilt_in }, )*
                    $( Key::$lkey => Spec { name: $lname, kind: Kind::$lkind, example: $lexample, built_in: $lbuilt_in }, )*
                    $( Key::$ckey => Spec { name: $cname, kind: Kind::$ckind, example: $cexample, built_in: $cbuilt_in }, )*
                }
            }
        }
    };
}

keys! {
    policy {
        /// The shape of the waits.
        Backoff = "backoff", Shape, "\"exponential\"", BuiltIn::Word("exponential");
        /// The first wait's envelope.
        Base = "base", Duration, "\"100ms\"", BuiltIn::Duration(Duration::from_millis(100));
        /// The growth factor of an exponential backoff.
        Factor = "factor", Number, "2.0", BuiltIn::Number(2.0);
        /// The longest computed wait.
        Cap = "cap", Duration, "\"30s\"", BuiltIn::Duration(Duration::from_secs(10));
        /// The shortest computed wait, applied after jitter.
        MinDelay = "min_delay", Duration, "\"0ms\"", BuiltIn::Duration(Duration::ZERO);
        /// How waits are randomised.
        Jitter = "jitter", Jitter, "\"full\"", BuiltIn::Word("full");
        /// Calls allowed, the first included; 0 = unlimited (with a deadline).
        MaxAttempts = "max_attempts", Count, "5", BuiltIn::Count(3);
        /// The whole call's time limit, attempts included.
        Deadline = "deadline", DurationOrNone, "\"2m\"", BuiltIn::None;
        /// Each attempt's time limit.
        AttemptTimeout = "attempt_timeout", DurationOrNone, "\"5s\"", BuiltIn::None;
        /// The error classes retried.
        RetryOn = "retry_on", Classes, "[\"transient\", \"throttled\"]", BuiltIn::Unset;
        /// The ceiling on a server's Retry-After hint.
        MaxRetryAfter = "max_retry_after", DurationOrNone, "\"60s\"", BuiltIn::Duration(Duration::from_secs(60));
        /// The shared budgets: one name, or a list of them.
        Budget = "budget", NamesOrNone, "\"broker\"", BuiltIn::None;
        /// The shared circuit breaker every attempt asks first: the name of a
        /// `[breakers.NAME]` table, or `none`.
        Breaker = "breaker", NameOrNone, "\"broker\"", BuiltIn::None;
        /// The shared concurrency limit every attempt holds a permit of
        /// while in flight: the name of a `[limits.NAME]` table, or `none`.
        Limit = "limit", NameOrNone, "\"db\"", BuiltIn::None;
        /// HTTP statuses retried besides 408, 429, 500, 502, 503 and 504.
        RetryOnStatus = "retry_on_status", Statuses, "[409]", BuiltIn::Empty;
        /// HTTP methods sent again besides the idempotent ones.
        RetryMethods = "retry_methods", Methods, "[\"POST\"]", BuiltIn::Empty;
        /// The gRPC status codes that do not end a call, by name (retried,
        /// and non-fatal to hedges); unset: the defaults of [`crate::grpc`].
        GrpcRetryOn = "grpc_retry_on", GrpcCodes, "[\"UNAVAILABLE\", \"ABORTED\"]", BuiltIn::Unset;
        /// The most request-body bytes kept to send a request again.
        MaxReplayBody = "max_replay_body", Bytes, "65536", BuiltIn::Count(65536);
        /// When to send a hedge (another copy of a slow attempt): a
        /// percentile of the policy's observed latency or a duration;
        /// `none` sends none.
        HedgeAfter = "hedge_after", HedgeAfter, "\"p95\"", BuiltIn::None;
        /// The hedge delay used while fewer than 100 calls have been seen.
        HedgeFloor = "hedge_floor", Duration, "\"100ms\"", BuiltIn::Duration(Duration::from_millis(100));
        /// The most hedges sent per call (over a 10 s window), at most
        /// `max_attempts - 1`.
        HedgeShare = "hedge_share", Number, "0.1", BuiltIn::Number(0.1);
    }
    budget {
        /// How the budget limits retries: `window`, `adaptive` or `grpc_throttling`.
        Mode = "mode", BudgetMode, "\"adaptive\"", BuiltIn::Word("window");
        /// The fraction of calls that may be retried.
        Ratio = "ratio", Number, "0.1", BuiltIn::Number(0.1);
        /// Retries per second allowed whatever the call volume.
        MinPerSec = "min_per_sec", Number, "10", BuiltIn::Number(10.0);
        /// The sliding window the ratio is measured over.
        Window = "window", Duration, "\"10s\"", BuiltIn::Duration(Duration::from_secs(10));
        /// Where the budget is kept: each process (`local`) or a shared store (`fleet`).
        Scope = "scope", Scope, "\"fleet\"", BuiltIn::Word("local");
        /// The fleet budget's store, a Redis URL.
        Store = "store", StoreOrNone, "\"redis://127.0.0.1:6379/\"", BuiltIn::None;
        /// A `grpc_throttling` budget's bucket: above 0, at most 1000
        /// (gRFC A6's `maxTokens`); no default.
        MaxTokens = "max_tokens", Number, "10", BuiltIn::Unset;
        /// What each success gives back to a `grpc_throttling` budget's
        /// bucket: at least 0.001, three decimals at most (gRFC A6's
        /// `tokenRatio`); no default.
        TokenRatio = "token_ratio", Number, "0.1", BuiltIn::Unset;
    }
    breaker {
        /// The share of counted attempts that failed at which the breaker opens.
        FailureRatio = "failure_ratio", Number, "0.5", BuiltIn::Number(0.1);
        /// The fewest attempts in the window before the breaker judges.
        MinCalls = "min_calls", Count, "20", BuiltIn::Count(100);
        /// The sliding window the failure ratio is measured over.
        BreakerWindow = "window", Duration, "\"30s\"", BuiltIn::Duration(Duration::from_secs(30));
        /// How long the breaker stays open after its first trip.
        OpenFor = "open_for", Duration, "\"5s\"", BuiltIn::Duration(Duration::from_secs(5));
        /// The longest open period: each trip in a row doubles it up to this.
        MaxOpenFor = "max_open_for", Duration, "\"1m\"", BuiltIn::Duration(Duration::from_secs(30));
        /// The largest random share cut from each open period (0 to 1).
        OpenJitter = "open_jitter", Number, "0.2", BuiltIn::Number(0.2);
        /// The attempts half-open lets through; all must succeed to close.
        Probes = "probes", Count, "3", BuiltIn::Count(1);
        /// An attempt at least this slow counts as a failure.
        SlowCall = "slow_call", DurationOrNone, "\"2s\"", BuiltIn::None;
        /// The error classes that count as failures (unset: transient, timeout and throttled).
        TripOn = "trip_on", Classes, "[\"transient\", \"timeout\"]", BuiltIn::Unset;
        /// The longest open period, whatever the trips in a row: a probe
        /// goes at least this often, so a dependency that is back is found
        /// within it.
        ProbeEvery = "probe_every", Duration, "\"2s\"", BuiltIn::Duration(Duration::from_millis(1250));
        /// After a close, the held-back attempts go at one per
        /// `release_ramp` at first, doubling every `release_ramp` while they
        /// succeed; a throttled answer slows it (1 ms to 1 min).
        ReleaseRamp = "release_ramp", Duration, "\"50ms\"", BuiltIn::Duration(Duration::from_millis(20));
        /// The error classes that count as failures during a release (unset:
        /// `trip_on` less throttled, so a throttled answer does not reopen it).
        ReleaseTripOn = "release_trip_on", Classes, "[\"transient\", \"throttled\"]", BuiltIn::Unset;
        /// Where the breaker is kept: each process (`local`) or a shared store (`fleet`).
        BreakerScope = "scope", Scope, "\"fleet\"", BuiltIn::Word("local");
        /// The fleet breaker's store, a Redis URL.
        BreakerStore = "store", StoreOrNone, "\"redis://127.0.0.1:6379/\"", BuiltIn::None;
        /// A fleet breaker's longest round trip to its store before the host
        /// decides alone (1 ms to 10 s); only with `scope = "fleet"`.
        StoreTimeout = "store_timeout", Duration, "\"5ms\"", BuiltIn::Duration(Duration::from_millis(5));
        /// How often a fleet breaker syncs with its store (1 ms to 10 s);
        /// only with `scope = "fleet"`.
        Refresh = "refresh", Duration, "\"20ms\"", BuiltIn::Duration(Duration::from_millis(20));
    }
    limit {
        /// How the limit sets its size: `fixed`, or adaptive: `aimd` or `gradient`.
        LimitKind = "kind", LimitKind, "\"fixed\"", BuiltIn::Word("fixed");
        /// A fixed limit's most attempts in flight at once (1 to 1000000);
        /// no default.
        MaxInFlight = "max_in_flight", Count, "64", BuiltIn::Unset;
        /// The longest a call waits for a permit; `none`: as long as its
        /// deadline allows (without a deadline, until one is free).
        MaxWait = "max_wait", DurationOrNone, "\"100ms\"", BuiltIn::None;
        /// The most calls queued for a permit (0 to 100000; 0: never wait).
        MaxWaiting = "max_waiting", Count, "100", BuiltIn::Count(1000);
        /// An adaptive limit's size before any attempt (from `min_limit`
        /// to `max_limit`).
        InitialLimit = "initial_limit", Count, "20", BuiltIn::Count(20);
        /// An adaptive limit's smallest size (1 to 1000000).
        MinLimit = "min_limit", Count, "1", BuiltIn::Count(1);
        /// An adaptive limit's largest size (1 to 1000000).
        MaxLimit = "max_limit", Count, "200", BuiltIn::Count(1000);
        /// The share of its size an `aimd` limit keeps on a drop (above 0,
        /// below 1).
        Decrease = "decrease", Number, "0.9", BuiltIn::Number(0.9);
        /// The classes that are drops to an `aimd` limit: `timeout`,
        /// `throttled` (unset: both).
        DropOn = "drop_on", Classes, "[\"timeout\", \"throttled\"]", BuiltIn::Unset;
        /// An answer slower than this is a drop to an `aimd` limit; `none`:
        /// no answer is.
        DropAbove = "drop_above", DurationOrNone, "\"200ms\"", BuiltIn::None;
        /// How many times the no-load latency a `gradient` limit lets a
        /// round trip take before it shrinks (1 to 10).
        Tolerance = "tolerance", Number, "1.5", BuiltIn::Number(1.0);
        /// The weight of each round trip's new size in a `gradient` limit
        /// (above 0, at most 1).
        Smoothing = "smoothing", Number, "0.2", BuiltIn::Number(0.2);
        /// Round trips between two probes of a `gradient` limit's no-load
        /// latency (10 to 100000).
        LimitProbeEvery = "probe_every", Count, "200", BuiltIn::Count(200);
    }
    chaos {
        /// The share of attempts failed on purpose (0 to 1).
        ChaosFaultRate = "fault_rate", Rate, "0.05", BuiltIn::Number(0.0);
        /// The class the injected faults take: one of [`CHAOS_FAULTS`].
        ChaosFault = "fault", FaultClass, "\"transient\"", BuiltIn::Word("transient");
        /// The Retry-After an injected throttled fault carries (up to 10m).
        ChaosRetryAfter = "retry_after", DurationOrNone, "\"1s\"", BuiltIn::None;
        /// The share of attempts delayed before they are sent (0 to 1).
        ChaosLatencyRate = "latency_rate", Rate, "0.1", BuiltIn::Number(0.0);
        /// The injected delay (up to 10m); the shortest, with `latency_max`.
        ChaosLatency = "latency", Duration, "\"300ms\"", BuiltIn::Duration(Duration::ZERO);
        /// The longest injected delay: each is drawn evenly from `latency`
        /// to this; `none`: always `latency`.
        ChaosLatencyMax = "latency_max", DurationOrNone, "\"500ms\"", BuiltIn::None;
        /// Where the injections' random draws start: the same seed repeats
        /// the same injections; unset, random per process.
        ChaosSeed = "seed", Count, "42", BuiltIn::Unset;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_within_a_table_and_lower_case() {
        let all: Vec<Key> = POLICY_KEYS.iter().chain(BUDGET_KEYS).copied().collect();
        for key in &all {
            assert_eq!(Key::named(key.name()), Some(*key));
        }
        for table in [&all[..], BREAKER_KEYS, LIMIT_KEYS, CHAOS_KEYS] {
            for key in table {
                assert_eq!(Key::find(table, key.name()), Some(*key));
                assert_eq!(key.name(), key.name().to_lowercase());
            }
            let mut names: Vec<&str> = table.iter().map(|k| k.name()).collect();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), table.len());
        }
    }

    #[test]
    fn a_word_default_is_one_of_the_words_its_kind_accepts() {
        for key in POLICY_KEYS
            .iter()
            .chain(BUDGET_KEYS)
            .chain(BREAKER_KEYS)
            .chain(LIMIT_KEYS)
            .chain(CHAOS_KEYS)
        {
            if let BuiltIn::Word(word) = key.built_in() {
                let words = match key.kind() {
                    Kind::Shape => SHAPES,
                    Kind::Jitter => JITTER_MODES,
                    Kind::BudgetMode => BUDGET_MODES,
                    Kind::Scope => SCOPES,
                    Kind::LimitKind => LIMIT_KINDS,
                    Kind::FaultClass => CHAOS_FAULTS,
                    other => panic!("{key:?}: a word default for a {other:?} key"),
                };
                assert!(words.contains(&word), "{key:?}: {word}");
            }
        }
    }
}
