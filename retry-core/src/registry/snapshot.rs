//! Each thread's view of the current registry: what every lookup by name
//! reads, so that the hot path takes no reference count and no lock.
//!
//! Checking that the view is still current is one relaxed load of the
//! shared pointer (`arc_swap::Cache`), where `ArcSwap::load` would write to
//! its debt list. The view keeps the registry it last saw alive until this
//! thread's next lookup.

use super::loading::ensure_loaded;
use super::{CURRENT, Registry};
use arc_swap::ArcSwap;
use arc_swap::cache::Cache;
use std::cell::RefCell;
use std::sync::Arc;

type View = Cache<&'static ArcSwap<Registry>, Arc<Registry>>;

thread_local! {
    /// `None` until this thread's first lookup. It is made only after the
    /// lazy load ran (or something was installed), so a thread that has
    /// one needs no further check for the lazy load.
    static VIEW: RefCell<Option<View>> = const { RefCell::new(None) };
}

/// Runs `read` on the current registry as this thread sees it: the view
/// revalidated with one relaxed load, no reference count taken.
///
/// A lookup made from inside `read` (the view is borrowed then), or while
/// the thread is being torn down (the view is gone), reads the shared
/// registry directly instead: slower, never wrong. So does this thread's
/// first lookup, which also makes the view.
#[inline]
pub(crate) fn with_current<R>(read: impl FnOnce(&Registry) -> R) -> R {
    let mut read = Some(read);
    let viewed = VIEW.try_with(|view| {
        let mut view = view.try_borrow_mut().ok()?;
        let current = view.as_mut()?.load();
        read.take().map(|read| read(current))
    });
    if let Ok(Some(out)) = viewed {
        return out;
    }
    // Above, `read` is taken only on the way to returning its result.
    let read = read.expect("`read` is still here when the view did not run it");
    first_lookup_or_nested(read)
}

/// The lazy load if due, then `read` on the shared registry; makes this
/// thread's view if it has none and can (the load runs before the view's
/// cell is borrowed: a loader may install, and may look policies up).
#[cold]
#[inline(never)]
fn first_lookup_or_nested<R>(read: impl FnOnce(&Registry) -> R) -> R {
    ensure_loaded();
    let _ = VIEW.try_with(|view| {
        if let Ok(mut view) = view.try_borrow_mut() {
            view.get_or_insert_with(|| Cache::new(&*CURRENT));
        }
    });
    read(&CURRENT.load())
}
