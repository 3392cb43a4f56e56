//! A call's state and the one loop over it: `#[retry]`'s async expansion
//! [`drive`]s a [`Run`]; the blocking one uses [`Retry`].

pub use crate::drive;
pub use crate::race::Race;
pub use crate::retry::Retry;
pub use crate::run::Run;
