//! Every example binary handles its arguments and a closed stdout alike
//! (clap, and `examples::output`): `--help` prints usage and exits 0, an
//! unknown flag is an error (status 2), and a reader that closed the pipe
//! ends the demo quietly (status 0, no panic).

use std::process::{Command, Output, Stdio};

const DEMOS: [(&str, &str); 7] = [
    ("flaky", env!("CARGO_BIN_EXE_flaky")),
    ("fleet", env!("CARGO_BIN_EXE_fleet")),
    ("grpc", env!("CARGO_BIN_EXE_grpc")),
    ("http", env!("CARGO_BIN_EXE_http")),
    ("load", env!("CARGO_BIN_EXE_load")),
    ("outbox", env!("CARGO_BIN_EXE_outbox")),
    ("tail", env!("CARGO_BIN_EXE_tail")),
];

/// Runs `bin args` with stdout closed before it starts (as `| head -0`
/// leaves it) when `closed`, else captured.
fn run(bin: &str, args: &[&str], closed: bool) -> Output {
    let mut child = Command::new(bin)
        .args(args)
        .env("RETRY_PROFILE", "test")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if closed {
        drop(child.stdout.take());
    }
    child.wait_with_output().unwrap()
}

#[test]
fn help_prints_usage_and_exits_0() {
    for (name, bin) in DEMOS {
        let out = run(bin, &["--help"], false);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{name}: {stdout}");
        assert!(stdout.contains("Usage:"), "{name}: {stdout}");
    }
}

#[test]
fn an_unknown_flag_is_an_error_and_runs_nothing() {
    for (name, bin) in DEMOS {
        let out = run(bin, &["--no-such-flag"], false);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
        assert!(
            stderr.contains("unexpected argument '--no-such-flag'"),
            "{name}: {stderr}"
        );
        assert!(
            out.stdout.is_empty(),
            "{name} ran: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}

#[cfg(unix)]
#[test]
fn a_closed_reader_ends_each_demo_quietly() {
    // `--help` into a closed pipe for all; the demos that run without flags,
    // run (outbox has its own closed-pipe test of a run; fleet and tail need
    // a server and flags, and print their report through the same writer).
    let runs = DEMOS
        .iter()
        .map(|&(name, bin)| (name, bin, &["--help"][..]))
        .chain([
            ("flaky", env!("CARGO_BIN_EXE_flaky"), &[][..]),
            ("http", env!("CARGO_BIN_EXE_http"), &[]),
            ("load", env!("CARGO_BIN_EXE_load"), &["--duration", "100ms"]),
        ]);
    for (name, bin, args) in runs {
        let out = run(bin, args, true);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{name} {args:?}: {stderr}");
        assert_eq!(out.status.code(), Some(0), "{name} {args:?}: {stderr}");
        assert_eq!(stderr, "", "{name} {args:?}");
    }
}
