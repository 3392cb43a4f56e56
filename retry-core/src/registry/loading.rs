//! The registry's first contents when the program installs none: linked
//! loaders, what was loaded from, and strict mode.

use super::linked::call_sites;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{LazyLock, Mutex, Once, PoisonError};

static LAZY_LOAD: Once = Once::new();
static ORIGIN: Mutex<Option<String>> = Mutex::new(None);
static STRICT: AtomicBool = AtomicBool::new(false);

/// Records what the current registry was loaded from, or why nothing was
/// ("no retry.toml found; searched ..."): the warning of a call site whose
/// policy is missing quotes it.
pub fn set_origin(text: impl Into<String>) {
    *ORIGIN.lock().unwrap_or_else(PoisonError::into_inner) = Some(text.into());
}

/// Policies the loader left out, each with why.
static WITHHELD: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());

/// Records the policies a loader left out of the registry it is about to
/// install, each with the reason: a site naming one runs once, without
/// retry, and its first call says the reason.
pub fn set_withheld(policies: impl IntoIterator<Item = (String, String)>) {
    *WITHHELD.lock().unwrap_or_else(PoisonError::into_inner) = policies.into_iter().collect();
}

/// Why the loader left policy `name` out (see [`set_withheld`]).
pub(crate) fn withheld(name: &str) -> Option<String> {
    WITHHELD
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .find(|(policy, _)| policy == name)
        .map(|(_, why)| why.clone())
}

/// What [`set_origin`] last recorded.
pub fn origin() -> Option<String> {
    ORIGIN
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
}

/// Turns strict mode on or off. In strict mode a call whose policy is
/// missing ends the process (exit code 1) after saying why, instead of
/// running once without retry; `RETRY_STRICT=1` turns it on too.
pub fn set_strict(strict: bool) {
    STRICT.store(strict, Ordering::Relaxed);
}

/// Whether strict mode is on: [`set_strict`], or `RETRY_STRICT` set to `1`,
/// `true`, `yes` or `on` (read once). Any other value than these and `0`,
/// `false`, `no`, `off` or empty leaves strict mode off, with a warning.
///
/// ```
/// retrykit_core::registry::set_strict(true);
/// assert!(retrykit_core::registry::is_strict());
/// retrykit_core::registry::set_strict(false);
/// ```
pub fn is_strict() -> bool {
    STRICT.load(Ordering::Relaxed) || strict_from_env()
}

/// The values of `RETRY_STRICT` that turn strict mode on, and off (any
/// case, trimmed), as retrykit-config accepts them.
const STRICT_ON: [&str; 4] = ["1", "true", "yes", "on"];
const STRICT_OFF: [&str; 4] = ["0", "false", "no", "off"];
/// The most characters of a rejected value the warning quotes.
const MAX_SHOWN: usize = 48;

/// `RETRY_STRICT`, read once: whether it turns strict mode on.
fn strict_from_env() -> bool {
    static FROM_ENV: LazyLock<bool> = LazyLock::new(|| {
        let value = std::env::var_os("RETRY_STRICT");
        strict_setting(value.as_deref()).unwrap_or_else(|warning| {
            say_warning!(warning);
            false
        })
    });
    *FROM_ENV
}

/// Whether `RETRY_STRICT=value` turns strict mode on, or the warning for a
/// value that is neither on nor off, quoting at most [`MAX_SHOWN`]
/// characters of it with control characters escaped.
fn strict_setting(value: Option<&std::ffi::OsStr>) -> Result<bool, String> {
    let Some(raw) = value else { return Ok(false) };
    let raw = raw.to_string_lossy();
    let word = raw.trim().to_ascii_lowercase();
    if word.is_empty() || STRICT_OFF.contains(&word.as_str()) {
        return Ok(false);
    }
    if STRICT_ON.contains(&word.as_str()) {
        return Ok(true);
    }
    let mut shown = String::new();
    for c in raw.chars().take(MAX_SHOWN) {
        if c.is_control() {
            shown.extend(c.escape_debug());
        } else {
            shown.push(c);
        }
    }
    if raw.chars().nth(MAX_SHOWN).is_some() {
        shown.push('…');
    }
    Err(format!(
        "warning: RETRY_STRICT is `{shown}`, which turns strict mode neither on nor off, so \
         strict mode stays off\n  \
         RETRY_STRICT takes {} (on) or {} (off), in any case\n  \
         fix: set RETRY_STRICT=1 for strict mode, or unset it (or set RETRY_STRICT=0) for the default",
        STRICT_ON.join(", "),
        STRICT_OFF.join(", "),
    ))
}

/// A loader run on the first lookup when nothing was installed yet.
/// Crates register one with `inventory::submit!`.
#[derive(Debug)]
pub struct LazyLoader {
    /// Who registered it, for diagnostics.
    pub name: &'static str,
    /// Loads and installs a registry; reports its own errors.
    pub load: fn(),
}

inventory::collect!(LazyLoader);

/// Runs the first registered loader, once, unless something was installed.
pub(crate) fn ensure_loaded() {
    if super::is_installed() || LAZY_LOAD.is_completed() {
        return;
    }
    LAZY_LOAD.call_once(|| {
        let registered = inventory::iter::<LazyLoader>.into_iter().map(|l| l.load);
        let named = call_sites().filter_map(|site| site.loader);
        // Every loader runs the same discovery: the first is enough.
        if let Some(load) = registered.chain(named).next() {
            load();
        }
    });
}
