//! `retry-policy`: check, show, explain and list the retry policies of a
//! `retry.toml`. Exit codes follow cargo and ripgrep: 0 success, 1 the
//! configuration has errors, 2 the command itself could not run.
#![forbid(unsafe_code)]

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
