//! The `outbox` demo binary as a user runs it: what its summary says, how it
//! reports bad flags and a bad profile, and what it leaves behind. Every run
//! is short (a few events, no outage, the `test` profile's millisecond
//! waits) and seeded.

use std::path::Path;
use std::process::{Command, Output};

/// A fresh, empty directory for one test, to be the demo's `TMPDIR`;
/// removed when dropped.
fn scratch(test: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("outbox-demo-test-{test}-"))
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap()
}

/// The demo with `args`, its temporary files under `tmp`, and no `RETRY_*`
/// variable from the caller's environment.
fn run(tmp: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_outbox"));
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("RETRY_") {
            cmd.env_remove(name);
        }
    }
    cmd.env("TMPDIR", tmp).args(args).output().unwrap()
}

/// A short, quiet demo run: `events` events, no outage, the `test` profile.
fn quick(tmp: &Path, events: &str, rates: [&str; 3]) -> Output {
    quick_with(tmp, events, rates, "0s", &[])
}

/// [`quick`] with an outage of `outage` (from the start) and more flags.
fn quick_with(tmp: &Path, events: &str, rates: [&str; 3], outage: &str, more: &[&str]) -> Output {
    let [failure, throttle, reject] = rates;
    let flags = format!(
        "--events {events} --failure-rate {failure} --throttle-rate {throttle} \
         --reject-rate {reject} --outage {outage} --outage-at 0s --profile test --seed 1"
    );
    let args: Vec<&str> = flags
        .split_whitespace()
        .chain(more.iter().copied())
        .collect();
    run(tmp, &args)
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The number after `label` on the summary line that starts with it.
fn summary_number(text: &str, label: &str) -> u32 {
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with(label))
        .unwrap_or_else(|| panic!("no `{label}` line in:\n{text}"));
    line[line.find(label).unwrap() + label.len()..]
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("no number on {line:?}"))
}

/// The (value, events) rows of the histogram under the line containing
/// `title`: the line after the title is the column header, then rows up
/// to the first blank line.
fn histogram(text: &str, title: &str) -> Vec<(u32, u32)> {
    let mut lines = text.lines().skip_while(|l| !l.contains(title));
    assert!(lines.next().is_some(), "no `{title}` table in:\n{text}");
    lines.next(); // the column header
    lines
        .take_while(|l| !l.trim().is_empty())
        .map(|l| {
            let cells: Vec<u32> = l.split_whitespace().map(|c| c.parse().unwrap()).collect();
            (cells[0], cells[1])
        })
        .collect()
}

#[test]
fn dead_letters_beyond_the_listed_five_are_counted() {
    let tmp = scratch("dead-letters");
    let out = quick(tmp.path(), "7", ["0", "0", "1"]);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    assert_eq!(summary_number(&text, "dead-lettered (gave up)"), 7);
    let listed = text
        .lines()
        .skip_while(|l| l.trim() != "dead letters")
        .filter(|l| l.trim_start().starts_with("order-"))
        .count();
    assert_eq!(listed, 5, "{text}");
    assert!(text.contains("and 2 more"), "{text}");
}

#[test]
fn scheduled_attempts_and_publish_calls_are_told_apart() {
    // Every call fails: each event uses the whole `outbox` schedule (8
    // scheduled attempts), each attempt the whole `publish` policy (3 calls).
    // Without the breaker, which would stop calling a broker that always fails.
    let tmp = scratch("attempts");
    let out = quick_with(tmp.path(), "2", ["1", "0", "0"], "0s", &["--no-breaker"]);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    assert_eq!(
        histogram(&text, "scheduled attempts per event"),
        [(8, 2)],
        "{text}"
    );
    assert_eq!(
        histogram(&text, "publish calls per event"),
        [(24, 2)],
        "{text}"
    );
    assert!(text.contains("max_attempts = 8"), "{text}");
    assert_eq!(summary_number(&text, "scheduled attempts"), 16);
    assert_eq!(summary_number(&text, "publish calls"), 48);
}

#[test]
fn an_unknown_profile_is_reported_once_with_its_help() {
    let tmp = scratch("profile");
    let out = run(tmp.path(), &["--profile", "prod", "--events", "1"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(!err.contains("error: error"), "{err}");
    assert!(err.contains("profile `prod` is not defined"), "{err}");
    assert!(
        err.contains("defined profiles: demo, test, staging"),
        "{err}"
    );
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));

    let out = run(tmp.path(), &["--profile", "tset", "--events", "1"]);
    let err = stderr(&out);
    assert!(err.contains("did you mean `test`?"), "{err}");
    assert!(!err.contains("error: error"), "{err}");
}

#[test]
fn rates_outside_zero_to_one_are_refused_naming_the_flag() {
    let tmp = scratch("rates");
    for (flag, value) in [
        ("--failure-rate", "2"),
        ("--failure-rate", "nan"),
        ("--failure-rate", "-0.1"),
        ("--throttle-rate", "inf"),
        ("--reject-rate", "1.5"),
        ("--reject-rate", "NaN"),
    ] {
        // `--flag=value`, so that clap reads `-0.1` as a value, not a flag.
        let arg = format!("{flag}={value}");
        let out = run(
            tmp.path(),
            &["--events", "2", "--outage", "0s", "--profile", "test", &arg],
        );
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{flag} {value}: {err}");
        assert!(err.contains(flag), "{flag} {value}: {err}");
        assert!(err.contains("from 0 to 1"), "{flag} {value}: {err}");
        assert!(stdout(&out).is_empty(), "{flag} {value} ran the demo");
    }
}

#[test]
fn outage_flags_read_durations_as_retry_toml_does() {
    let tmp = scratch("outage-grammar");
    // `M` is ambiguous in retry.toml (minutes or milliseconds?), so it is here too.
    for flag in ["--outage", "--outage-at"] {
        let arg = format!("{flag}=1M");
        let out = run(tmp.path(), &["--events", "2", "--profile", "test", &arg]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{flag}: {err}");
        assert!(err.contains(flag), "{flag}: {err}");
        assert!(
            err.contains("`m` (minutes) or `ms` (milliseconds)"),
            "{flag}: {err}"
        );
        assert!(stdout(&out).is_empty(), "{flag} ran the demo");
    }
}

#[test]
fn rates_that_add_up_beyond_one_are_refused() {
    // Each call has one outcome, so 0.9 + 0.05 + 0.1 cannot all hold.
    let tmp = scratch("rate-sum");
    let out = quick(tmp.path(), "2", ["0.9", "0.05", "0.1"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    for flag in ["--failure-rate", "--throttle-rate", "--reject-rate"] {
        assert!(err.contains(flag), "{err}");
    }
    assert!(err.contains("1.05"), "{err}");
    assert!(stdout(&out).is_empty());
}

#[test]
fn the_relay_command_checks_its_rates_too() {
    let tmp = scratch("relay-rates");
    let db = tmp.path().join("outbox.db");
    let broker = tmp.path().join("broker.db");
    let out = run(
        tmp.path(),
        &[
            "relay",
            "--db",
            db.to_str().unwrap(),
            "--broker-db",
            broker.to_str().unwrap(),
            "--failure-rate",
            "nan",
        ],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--failure-rate"), "{err}");
    assert!(!db.exists(), "the relay ran");
}

#[test]
fn event_counts_outside_the_supported_range_are_refused() {
    let tmp = scratch("events");
    for n in ["0", "100001", "-1", "many"] {
        let arg = format!("--events={n}");
        let out = run(tmp.path(), &[&arg, "--outage", "0s", "--profile", "test"]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "--events {n}: {err}");
        assert!(err.contains("--events"), "--events {n}: {err}");
        assert!(err.contains("from 1 to 100000"), "--events {n}: {err}");
    }
}

#[test]
fn a_run_leaves_no_temporary_files_behind() {
    let tmp = scratch("cleanup");
    let out = quick(tmp.path(), "3", ["0.3", "0", "0"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn a_failed_run_leaves_no_temporary_files_behind() {
    let tmp = scratch("cleanup-failed");
    // An outbox database in a directory that does not exist: the run fails
    // after the demo made its temporary directory.
    let missing = Path::new(env!("CARGO_TARGET_TMPDIR")).join("no-such-dir/outbox.db");
    let out = run(
        tmp.path(),
        &[
            "--db",
            missing.to_str().unwrap(),
            "--events",
            "1",
            "--profile",
            "test",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[cfg(unix)]
#[test]
fn ctrl_c_stops_the_run_and_removes_its_temporary_files() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let tmp = scratch("ctrl-c");
    // A broker down for a minute: the run is still going when interrupted.
    let mut child = Command::new(env!("CARGO_BIN_EXE_outbox"))
        .env("TMPDIR", tmp.path())
        .args(["--events", "3", "--outage", "60s", "--outage-at", "0s"])
        .args(["--profile", "test", "--seed", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The first progress line comes from inside the relay loop, which only
    // starts once the Ctrl-C listener is in place.
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first_progress = lines.find(|l| l.as_ref().is_ok_and(|l| l.starts_with('[')));
    assert!(first_progress.is_some(), "no progress line");
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn an_unreachable_postgres_url_is_named_with_the_cause_and_the_fix() {
    let tmp = scratch("pg-unreachable");
    // Port 1 on the loopback interface: nothing listens there.
    let url = "postgres://postgres@127.0.0.1:1/postgres";
    let out = run(
        tmp.path(),
        &["--database", url, "--events", "1", "--profile", "test"],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains(url), "{err}");
    assert!(err.contains("refused"), "{err}");
    assert!(err.contains("--database postgres"), "{err}");
}

#[test]
fn database_and_lease_flags_refuse_what_they_cannot_use() {
    let tmp = scratch("pg-flags");
    let broker = tmp.path().join("broker.db");
    let broker = broker.to_str().unwrap();
    // A private cluster lives as long as the demo: `relay` cannot start one.
    let out = run(
        tmp.path(),
        &["relay", "--database", "postgres", "--broker-db", broker],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("postgres://USER@HOST:PORT/DB"), "{err}");
    for (flag, value, says) in [
        ("--database", "", "the database is empty"),
        ("--lease", "1ms", "from 10ms to 1h"),
        ("--lease", "soon", "from 10ms to 1h"),
        ("--relays", "0", "--relays"),
        ("--latency", "1y", "from 0s to 10s"),
        ("--ack-latency", "11s", "from 0s to 10s"),
    ] {
        let arg = format!("{flag}={value}");
        let out = run(tmp.path(), &[&arg, "--events", "1", "--profile", "test"]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{arg}: {err}");
        assert!(err.contains(flag) && err.contains(says), "{arg}: {err}");
    }
}

/// Issue 22: a URL of a database the demo cannot use was taken for a SQLite
/// file name; the error now says what `--database` takes.
#[test]
fn a_database_url_of_another_kind_says_what_is_expected() {
    let tmp = scratch("mysql");
    for url in ["mysql://x/y", "sqlite://x.db"] {
        let out = run(
            tmp.path(),
            &["--database", url, "--events", "1", "--profile", "test"],
        );
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{url}: {err}");
        assert!(err.contains("--database"), "{err}");
        assert!(err.contains(url), "{err}");
        assert!(err.contains("SQLite file"), "{err}");
        assert!(err.contains("postgres://"), "{err}");
    }
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// Issue 22: `outbox | head -1` panicked on the closed pipe (println! on
/// EPIPE). The demo stops quietly: exit 0, nothing on stderr, its temporary
/// files removed. Once with stdout closed before the first line (every write
/// fails), once after reading the first line, as `head -1` does.
#[cfg(unix)]
#[test]
fn a_closed_stdout_stops_the_demo_quietly() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    for read_first in [false, true] {
        let tmp = scratch("closed-stdout");
        let mut child = Command::new(env!("CARGO_BIN_EXE_outbox"))
            .env("TMPDIR", tmp.path())
            .args(["--events", "20", "--outage", "0s", "--profile", "test"])
            .args(["--seed", "1"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut reader = BufReader::new(child.stdout.take().unwrap());
        if read_first {
            let mut first = String::new();
            reader.read_line(&mut first).unwrap();
            assert!(first.starts_with("placing 20 orders"), "{first}");
        }
        drop(reader);
        let out = child.wait_with_output().unwrap();
        let err = stderr(&out);
        assert!(!err.contains("panicked"), "{err}");
        assert_eq!(out.status.code(), Some(0), "read_first {read_first}: {err}");
        assert_eq!(err, "");
        let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
        assert!(left.is_empty(), "left behind: {left:?}");
    }
}

/// Relays started together on fresh files race to switch them to WAL, and
/// SQLite answers the loser "database is locked" at once, without waiting
/// out its busy timeout. Holding a write lock on each file while the relay
/// opens it makes that answer certain: the relay must warn, retry, and run
/// once the lock is gone, for the outbox and for the broker's log alike.
#[test]
fn a_relay_that_finds_its_files_locked_waits_for_them() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let tmp = scratch("locked");
    let files = [tmp.path().join("outbox.db"), tmp.path().join("broker.db")];
    // Rollback-journal files, each with a write transaction open.
    let locks: Vec<rusqlite::Connection> = files
        .iter()
        .map(|path| {
            let lock = rusqlite::Connection::open(path).unwrap();
            lock.execute_batch(
                "CREATE TABLE held (x); BEGIN IMMEDIATE; INSERT INTO held VALUES (1);",
            )
            .unwrap();
            lock
        })
        .collect();
    let mut relay = Command::new(env!("CARGO_BIN_EXE_outbox"))
        .arg("relay")
        .arg("--db")
        .arg(&files[0])
        .arg("--broker-db")
        .arg(&files[1])
        .args(["--profile", "test", "--outage", "0s"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(relay.stderr.take().unwrap()).lines();
    let mut said = String::new();
    for (lock, what) in locks
        .into_iter()
        .zip(["opening the outbox", "opening the broker's log"])
    {
        // Released only once the relay says it is waiting for this file.
        loop {
            let line = lines.next().map(Result::unwrap).unwrap_or_else(|| {
                panic!("the relay ended without waiting for a locked file; it said:\n{said}")
            });
            said.push_str(&line);
            said.push('\n');
            if line.contains(what)
                && line.contains("database is locked")
                && line.contains("retrying")
            {
                break;
            }
        }
        lock.execute_batch("COMMIT").unwrap();
    }
    let rest: Vec<String> = lines.map(Result::unwrap).collect();
    let status = relay.wait().unwrap();
    assert!(status.success(), "{said}{}", rest.join("\n"));
}

/// Issue 29: the summary counts the broker calls during the outage and says
/// whether `publish`'s breaker was on (`--no-breaker` takes it off); how many
/// fewer: docs/outbox.md, and counted exactly in outbox_breaker.rs.
#[test]
fn the_summary_counts_the_broker_calls_during_the_outage() {
    let tmp = scratch("outage-calls");
    examples::install_policies("test").unwrap();
    let publish = retrykit_core::registry::policy("publish").unwrap();
    let file_breaker = publish.breaker().and_then(|b| b.name().map(str::to_owned));
    for breaker in [true, false] {
        let flags: &[&str] = if breaker { &[] } else { &["--no-breaker"] };
        // A broker that never fails, but is down for the first 200 ms.
        let out = quick_with(tmp.path(), "5", ["0", "0", "0"], "200ms", flags);
        let text = stdout(&out);
        assert!(out.status.success(), "{text}{}", stderr(&out));
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with("broker calls in the outage"))
            .unwrap_or_else(|| panic!("no outage line in:\n{text}"));
        let calls: u32 = line.split_whitespace().nth(5).unwrap().parse().unwrap();
        assert!(calls >= 1, "{line}");
        // The breaker the policy file's `publish` names, unless turned off.
        let expected = match file_breaker.as_deref() {
            Some(name) if breaker => {
                format!("(circuit breaker `{name}`; --no-breaker turns it off)")
            }
            _ => "(no circuit breaker)".to_owned(),
        };
        assert!(line.ends_with(&expected), "{line}");
        // None lost: each published, or dead-lettered if the outage outlasted it.
        let finished =
            summary_number(&text, "published") + summary_number(&text, "dead-lettered (gave up)");
        assert_eq!(finished, 5, "{text}");
    }
    // Without an outage, there is nothing to count.
    let out = quick(tmp.path(), "2", ["0", "0", "0"]);
    assert!(!stdout(&out).contains("in the outage"), "{}", stdout(&out));
}

/// The `staging` profile's chaos fails a fifth of the publish attempts in
/// place of the call (seeded: the same count every run); the retries and
/// the outbox ride them out, and no event is lost. `RETRY_CHAOS=off` runs
/// the same profile with none.
///
/// docs/chaos.md shows the command and these summary lines: its command is
/// the one run here, and each of its lines is in the summary.
#[test]
fn staging_chaos_fails_a_fifth_of_publishes_and_loses_no_event() {
    let page =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/chaos.md")).unwrap();
    let start = page
        .find("cargo run -p examples --bin outbox -- ")
        .expect("docs/chaos.md shows the command");
    let command = &page[start..start + page[start..].find("```").unwrap()];
    let flags = command.replace('\\', " ");
    let args: Vec<&str> = flags.split_whitespace().skip(7).collect();
    let block = page[start..].split("```text\n").nth(1).unwrap();
    let doc_lines: Vec<&str> = block[..block.find("```").unwrap()].lines().collect();
    let tmp = scratch("staging-chaos");
    let out = run(tmp.path(), &args);
    let (text, err) = (stdout(&out), stderr(&out));
    assert!(out.status.success(), "{text}{err}");
    assert!(
        err.contains("chaos active (profile `staging`): publish: faults 20% transient, seed 44"),
        "the start-up line says so: {err}"
    );
    assert_eq!(summary_number(&text, "events lost"), 0, "{text}");
    assert_eq!(summary_number(&text, "published"), 200, "{text}");
    assert_eq!(summary_number(&text, "broker deliveries"), 200, "{text}");
    // Every publish call that reached the broker succeeded; the seed's
    // faults (about a fifth of the attempts) were never sent.
    assert_eq!(summary_number(&text, "publish calls"), 200, "{text}");
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("attempts failed by chaos"))
        .unwrap_or_else(|| panic!("no chaos line in:\n{text}"));
    let faults: u32 = line.split_whitespace().nth(4).unwrap().parse().unwrap();
    assert_eq!(faults, 56, "seed 44's faults: {line}");
    assert!(line.ends_with("(faults 20% transient, seed 44)"), "{line}");
    for doc_line in &doc_lines {
        assert!(
            text.lines().any(|l| l == *doc_line),
            "docs/chaos.md shows {doc_line:?}:\n{text}"
        );
    }
    assert_eq!(doc_lines.len(), 7);

    let mut cmd = Command::new(env!("CARGO_BIN_EXE_outbox"));
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("RETRY_") {
            cmd.env_remove(name);
        }
    }
    let tmp = scratch("staging-chaos-off");
    let off = cmd
        .env("TMPDIR", tmp.path())
        .env("RETRY_CHAOS", "off")
        .args(&args)
        .output()
        .unwrap();
    let text = stdout(&off);
    assert!(off.status.success(), "{text}{}", stderr(&off));
    assert_eq!(summary_number(&text, "events lost"), 0, "{text}");
    assert!(!text.contains("attempts failed by chaos"), "{text}");
    assert!(stderr(&off).contains("chaos off (RETRY_CHAOS=off, profile `staging`)"));
}
