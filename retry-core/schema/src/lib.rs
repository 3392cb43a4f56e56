//! # retrykit-schema
//!
//! The one description of the policy file that every part of the framework
//! reads: retrykit-config's loader and tools at run time, `#[retry]`'s check at
//! build time, and retrykit-core's validation (which names its fields by the
//! keys here). A second copy of any of this elsewhere is a bug.
//!
//! - [`keys`]: every key, the kind of value it takes, an example, its default;
//! - [`classes`]: the built-in error classes and the rule for `retry_on` names;
//! - [`duration`]: the duration grammar, for the file and for command-line flags;
//! - [`hedge`]: `hedge_after`'s grammar (a percentile or a duration);
//! - [`grpc`]: gRPC status codes by name, and the class each has by default;
//! - [`layering`]: the file's sections and the order its layers apply in;
//! - [`discover`]: where the file is;
//! - [`suggest`]: "did you mean", for every misspelled name.
//!
//! It reads no TOML itself (retrykit-core depends on it and stays free of a
//! TOML parser): retrykit-config and retrykit-macros walk the file, by these rules.
//!
//! ```
//! use retrykit_schema::keys::{Key, POLICY_KEYS};
//! let found = retrykit_schema::discover::Discovery::new().named(Some("/no/such/retry.toml".into())).run();
//! assert!(found.file.is_none());
//! assert_eq!(found.searched_list(), "/no/such/retry.toml");
//! assert_eq!(Key::find(POLICY_KEYS, "jiter"), None);
//! assert_eq!(retrykit_schema::suggest::did_you_mean("jiter", POLICY_KEYS.iter().map(|k| k.name())).as_deref(), Some("jitter"));
//! ```
//!
//! ## Adding a key
//!
//! 1. One row in the `keys!` table at the end of `src/keys.rs`: its name, its
//!    [`keys::Kind`], an example value and its built-in default. retrykit-config
//!    then reads it (from the file and the environment), lists it in
//!    `explain` and in unknown-key messages, and `#[retry(new_key = ...)]`
//!    is told it belongs in retry.toml. (A key of a new [`keys::Kind`] also
//!    needs that kind read from TOML, in retrykit-config's `src/schema.rs`.)
//! 2. The engine's side, which this crate cannot see: the field and its
//!    `PolicyBuilder` setter in retrykit-core (naming its problems with
//!    `Key::NewKey.name()`), and the key's row in retrykit-config's
//!    `src/schema/engine.rs`, which binds each key to its setter and getter
//!    (its `match` is exhaustive, so the compiler asks for the row).
//! 3. Its tests: a value read from the file, a bad one refused, and the
//!    default agreeing with retrykit-core's (retrykit-config's
//!    `built_in_defaults_are_retry_cores` test covers every key at once).
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]

pub mod classes;
pub mod discover;
pub mod duration;
pub mod grpc;
pub mod hedge;
pub mod keys;
pub mod layering;
pub mod suggest;
