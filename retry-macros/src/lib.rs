//! Proc-macros for the retry framework: `#[retry]` and `#[derive(Classify)]`.
//! Not implemented yet (see the macros issue); nothing here pretends to work.
