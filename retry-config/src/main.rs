//! `retry-policy`: check, show, explain and list retry policies.
fn main() {}
