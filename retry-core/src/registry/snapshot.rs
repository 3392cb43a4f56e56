//! Each thread's view of the current registry: what every lookup by name
//! reads, so that a lookup takes no reference count and no lock.
//!
//! Checking that the view is still current is one load of the install
//! generation, where `ArcSwap::load` would write to its debt list. The view
//! keeps the registry it last saw alive until this thread's next lookup
//! after a reload.

use super::loading::ensure_loaded;
use super::{CURRENT, GENERATION, Registry};
use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// This thread's view: the registry current at its last lookup.
struct View {
    current: Arc<Registry>,
}

impl View {
    fn new() -> Self {
        View {
            current: CURRENT.load_full(),
        }
    }

    /// The current registry: the one held, unless an install since counted
    /// another. `install` counts the generation before the swap, so a
    /// thread that has read the newer registry anywhere finds the count,
    /// and its view never goes back to the one before; a view that finds
    /// the count before the swap keeps what it holds until it looks again.
    fn load(&mut self) -> &Registry {
        if self.current.generation() != GENERATION.load(Ordering::Acquire) {
            self.revalidate();
        }
        &self.current
    }

    fn revalidate(&mut self) {
        // Between an install's count and its swap the shared registry is
        // still the one held.
        self.current = CURRENT.load_full();
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
fn first_lookup_or_nested<R>(read: impl FnOnce(&Registry) -> R) -> R {
    ensure_loaded();
    let _ = VIEW.try_with(|view| {
        if let Ok(mut view) = view.try_borrow_mut() {
            view.get_or_insert_with(View::new);
        }
    });
    read(&CURRENT.load())
}
