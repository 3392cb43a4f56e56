//! Issue 41 point 15, at the tool: no output of `retry-policy` prints a
//! store URL's password: not `check` in any format, not `explain`, `list`
//! or `show`, whether the URL comes from the file or the environment, and
//! whether it is valid or not. Each case also shows the store's host, so
//! a case that printed nothing of the URL could not pass. (The fleet
//! link's own line when Redis does not answer, which these commands may
//! print too, is held to the same: no case's output holds the password.
//! Whether it is printed before the command exits is the link's timing, so
//! no case requires it.)
#![cfg_attr(not(feature = "redis"), allow(dead_code, unused_imports))]

mod common;

use common::{run_with_env, stderr, stdout, write};

const SECRET: &str = "hunter2";

/// A breaker and a budget on Redis stores given by `breaker` and `budget`.
fn file(breaker: &str, budget: &str) -> String {
    format!(
        "[policies.a]\nbreaker = \"b\"\nbudget = \"g\"\nattempt_timeout = \"1s\"\n\n\
         [breakers.b]\nscope = \"fleet\"\nstore = \"{breaker}\"\n\n\
         [budgets.g]\nscope = \"fleet\"\nstore = \"{budget}\"\nratio = 0.1\n"
    )
}

/// A case: the file, the arguments, the environment, and what the output
/// must show.
type Case<'a> = (&'a str, &'a [&'a str], &'a [(&'a str, &'a str)], &'a str);

// A fleet scope is read only with the `redis` feature (on by default).
#[cfg(feature = "redis")]
#[test]
fn no_command_prints_a_stores_password() {
    // Nothing listens on port 1: a link started fails.
    let good = format!("redis://u:{SECRET}@127.0.0.1:1/0");
    let bad = format!("redis://u:{SECRET}@127.0.0.1:1/0x");
    let fine = "redis://127.0.0.1:1/";
    let valid = file(&good, &good);
    let invalid = file(&bad, &bad);
    let from_env = file(fine, fine);
    let env_vars = [
        ("RETRY_BREAKER__B__STORE", bad.as_str()),
        ("RETRY_BUDGET__G__STORE", bad.as_str()),
    ];
    let cases: &[Case] = &[
        (&valid, &["explain", "b"], &[], "redis://127.0.0.1:1/0"),
        (&valid, &["explain", "g"], &[], "redis://127.0.0.1:1/0"),
        (&valid, &["list"], &[], "through redis://127.0.0.1:1/0"),
        (&valid, &["show", "a"], &[], "through redis://127.0.0.1:1/0"),
        (
            &invalid,
            &["check"],
            &[],
            "store = \"redis://***@127.0.0.1:1/0x\"",
        ),
        (
            &invalid,
            &["check", "--format", "json"],
            &[],
            "redis://127.0.0.1:1/0x",
        ),
        (
            &invalid,
            &["check", "--format", "short"],
            &[],
            "[breakers.b.store]",
        ),
        (
            &invalid,
            &["explain", "a"],
            &[],
            "its database \"0x\" is not a number",
        ),
        (
            &from_env,
            &["check"],
            &env_vars,
            "RETRY_BREAKER__B__STORE=redis://***@127",
        ),
        (
            &from_env,
            &["check"],
            &env_vars,
            "RETRY_BUDGET__G__STORE=redis://***@127",
        ),
        (
            &from_env,
            &["explain", "b"],
            &env_vars,
            "(got \"redis://127.0.0.1:1/0x\")",
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (text, args, vars, shows) in cases {
        let path = write(dir.path(), "retry.toml", text);
        let mut all = vec!["--config", path.to_str().unwrap()];
        all.extend_from_slice(args);
        let out = run_with_env(&all, vars);
        let said = format!("{}{}", stdout(&out), stderr(&out));
        assert!(
            !said.contains(SECRET),
            "{args:?} {vars:?} prints it:\n{said}"
        );
        assert!(
            said.contains(shows),
            "{args:?} {vars:?}: no {shows:?} in:\n{said}"
        );
    }
}
