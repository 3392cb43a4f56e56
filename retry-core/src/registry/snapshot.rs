//! Each thread's view of the current registry, which every lookup by name
//! reads: checking that it is current is one load of the install
//! generation. The view keeps the registry it last saw alive until this
//! thread's next lookup after a reload.

use super::loading::ensure_loaded;
use super::{CURRENT, GENERATION, Registry};
use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::Ordering;

#[cfg(not(loom))]
thread_local! {
    /// This thread's view: the registry current at its last lookup; `None`
    /// until its first lookup, which runs the lazy load.
    static VIEW: RefCell<Option<Arc<Registry>>> = const { RefCell::new(None) };
}

// Each of loom's threads has its own view (they share one OS thread).
#[cfg(loom)]
loom::thread_local! {
    static VIEW: RefCell<Option<Arc<Registry>>> = RefCell::new(None);
}

/// Runs `read` on the current registry as this thread sees it. A lookup
/// inside `read`, while the thread is torn down, or the thread's first,
/// reads the shared registry instead.
pub(crate) fn with_current<R>(read: impl FnOnce(&Registry) -> R) -> R {
    let mut read = Some(read);
    let viewed = VIEW.try_with(|view| {
        let mut view = view.try_borrow_mut().ok()?;
        let current = view.as_mut()?;
        // The one held, unless an install since counted another (`install`
        // counts before the swap, so a view never goes back to an older one).
        if current.generation() != GENERATION.load(Ordering::Acquire) {
            *current = CURRENT.load_full();
        }
        read.take().map(|read| read(current))
    });
    if let Ok(Some(out)) = viewed {
        return out;
    }
    let read = read.expect("`read` is still here when the view did not run it");
    first_lookup_or_nested(read)
}

/// The lazy load if due, then `read` on the shared registry; makes this
/// thread's view if it can (after the load, which may itself look up).
fn first_lookup_or_nested<R>(read: impl FnOnce(&Registry) -> R) -> R {
    ensure_loaded();
    let _ = VIEW.try_with(|view| {
        if let Ok(mut view) = view.try_borrow_mut() {
            view.get_or_insert_with(|| CURRENT.load_full());
        }
    });
    read(&CURRENT.load())
}
