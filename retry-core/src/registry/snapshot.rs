//! Each thread's view of the current registry: what every lookup by name
//! reads, so that the hot path takes no reference count and no lock.
//!
//! Checking that the view is still current is one load of the install
//! generation, where `ArcSwap::load` would write to its debt list. The view
//! keeps the registry it last saw alive until this thread's next lookup
//! after a reload, and the one before that until the next such lookup: a
//! `#[retry]` call that started under it picks its policy up from there
//! (see `site::SitePolicy`).

use super::loading::ensure_loaded;
use super::{CURRENT, GENERATION, Registry};
use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// This thread's view: the registry current at its last lookup, and the
/// one it replaced.
struct View {
    current: Arc<Registry>,
    previous: Option<Arc<Registry>>,
}

impl View {
    fn new() -> Self {
        View {
            current: CURRENT.load_full(),
            previous: None,
        }
    }

    /// The current registry: the one held, unless an install since counted
    /// another. `install` counts the generation before the swap, so a
    /// thread that has read the newer registry anywhere finds the count,
    /// and its view never goes back to the one before; a view that finds
    /// the count before the swap keeps what it holds until it looks again.
    #[inline]
    fn load(&mut self) -> &Registry {
        if self.current.generation() != GENERATION.load(Ordering::Acquire) {
            self.revalidate();
        }
        &self.current
    }

    #[cold]
    #[inline(never)]
    fn revalidate(&mut self) {
        let newer = CURRENT.load_full();
        // Between an install's count and its swap the shared registry is
        // still the one held: the previous one is kept (a running call
        // may pick its policy up there).
        if !Arc::ptr_eq(&newer, &self.current) {
            self.previous = Some(std::mem::replace(&mut self.current, newer));
        }
    }
}

#[cfg(not(loom))]
thread_local! {
    /// `None` until this thread's first lookup. It is made only after the
    /// lazy load ran (or something was installed), so a thread that has
    /// one needs no further check for the lazy load.
    static VIEW: RefCell<Option<View>> = const { RefCell::new(None) };
}

// Each of loom's threads has its own view (they share one OS thread).
#[cfg(loom)]
loom::thread_local! {
    static VIEW: RefCell<Option<View>> = RefCell::new(None);
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
            view.get_or_insert_with(View::new);
        }
    });
    read(&CURRENT.load())
}

/// Runs `read` on the registry of install generation `generation` if this
/// thread still holds it (its view's current or previous registry, or the
/// shared one), without revalidating the view; `None` when it is gone.
pub(crate) fn with_generation<R>(generation: u64, read: impl FnOnce(Option<&Registry>) -> R) -> R {
    let mut read = Some(read);
    let viewed = VIEW.try_with(|view| {
        let view = view.try_borrow().ok()?;
        let view = view.as_ref()?;
        let found = match &view.previous {
            _ if view.current.generation() == generation => Some(&view.current),
            Some(previous) if previous.generation() == generation => Some(previous),
            _ => None,
        };
        found.map(|registry| read.take().map(|read| read(Some(registry))))?
    });
    if let Ok(Some(out)) = viewed {
        return out;
    }
    let read = read.expect("`read` is still here when the view did not run it");
    let shared = CURRENT.load();
    let shared: &Registry = &shared;
    read(Some(shared).filter(|registry| registry.generation() == generation))
}
