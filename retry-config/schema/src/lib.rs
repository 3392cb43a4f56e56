//! # retry-schema
//!
//! The one description of the policy file that both sides of the framework
//! read: retry-config's loader at run time and retry-macros' check at build
//! time. Today it holds the rule for finding the file ([`discover`]); a
//! second copy of any of this elsewhere is a bug.
//!
//! ```
//! let found = retry_schema::discover::Discovery::new().named(Some("/no/such/retry.toml".into())).run();
//! assert!(found.file.is_none());
//! assert_eq!(found.searched_list(), "/no/such/retry.toml");
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod discover;
pub mod duration;
pub mod suggest;
