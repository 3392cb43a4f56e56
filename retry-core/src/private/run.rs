//! A call's state and the one loop over it: `#[retry]`'s async expansion
//! makes a [`Run`] for its site's policy and [`drive`]s it (a hedged round
//! is a [`Race`]); the blocking expansion calls
//! [`Retry::call_blocking`](crate::Retry::call_blocking).

pub use crate::drive;
pub use crate::race::Race;
pub use crate::retry::Retry;
pub use crate::run::Run;
