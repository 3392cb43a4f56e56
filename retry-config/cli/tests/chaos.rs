//! `retry-policy` on chaos: `show` says it is active and at what rates (or
//! off), `explain` gives each chaos key and its layer, `check` lists where
//! the file injects chaos and refuses it under a production profile.

mod common;

use common::{run_file as run, text};

const FILE: &str = r#"
[policies.broker]
max_attempts = 4

[profiles.staging.policies.broker.chaos]
fault_rate = 0.2
seed = 7
latency_rate = 0.1
latency = "300ms"
"#;

#[test]
fn show_says_chaos_is_active_where_and_at_what_rates() {
    let out = run(
        FILE,
        &["--profile", "staging", "show", "broker", "--seed", "1"],
        &[],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stdout.contains(
            "chaos is active (profile `staging`): faults 20% transient, latency 10% 300ms, seed 7;"
        ),
        "{stdout}"
    );
    let off = run(
        FILE,
        &["--profile", "staging", "show", "broker", "--seed", "1"],
        &[("RETRY_CHAOS", "off")],
    );
    let (stdout, _) = text(&off);
    assert!(
        stdout
            .contains("chaos off (RETRY_CHAOS=off, profile `staging`): 1 policies' chaos ignored"),
        "{stdout}"
    );
    let base = run(FILE, &["show", "broker", "--seed", "1"], &[]);
    assert!(!text(&base).0.contains("chaos"), "{}", text(&base).0);
}

#[test]
fn explain_gives_each_chaos_key_and_its_layer() {
    let out = run(FILE, &["--profile", "staging", "explain", "broker"], &[]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let words = |l: &str| l.split_whitespace().collect::<Vec<_>>().join(" ");
    let lines: Vec<String> = stdout.lines().map(words).collect();
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("chaos.fault_rate 0.2 profile `staging`")),
        "{stdout}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("chaos.fault transient built-in default")),
        "{stdout}"
    );
}

#[test]
fn check_lists_chaos_and_refuses_it_in_production() {
    let out = run(FILE, &["check"], &[]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stdout.contains("chaos active (profile `staging`): broker: faults 20% transient, latency 10% 300ms, seed 7"),
        "{stdout}"
    );
    let prod = format!("{FILE}\n[profiles.production.policies.broker.chaos]\nfault_rate = 0.01\n");
    let out = run(&prod, &["check"], &[]);
    let (stdout, _) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("policy `broker`: chaos (faults 1% transient) is refused under production profile `production`"),
        "{stdout}"
    );
}

/// docs/chaos.md's simulator line is what `simulate` prints for the outbox
/// demo's staging `publish`.
#[test]
fn simulate_applies_the_policy_s_chaos_as_the_doc_says() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let page = std::fs::read_to_string(format!("{root}/docs/chaos.md")).unwrap();
    let shown = "$ retry-policy --config examples/retry.toml --profile staging simulate publish --clients 1000 --seed 1\n";
    let at = page.find(shown).expect("docs/chaos.md shows the command") + shown.len();
    let line = page[at..].lines().next().unwrap();
    let config = format!("{root}/examples/retry.toml");
    let args: Vec<&str> = shown[2..].split_whitespace().skip(1).collect();
    let args: Vec<&str> = args
        .iter()
        .map(|a| {
            if *a == "examples/retry.toml" {
                config.as_str()
            } else {
                a
            }
        })
        .collect();
    let out = common::run_with_env(&args, &[]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        line.starts_with("chaos of `publish` (faults 20% transient, seed 44): "),
        "{line}"
    );
    assert!(
        stdout.lines().any(|l| l == line),
        "the doc shows {line:?}; the command printed:\n{stdout}"
    );
}

/// docs/chaos.md's latency line is what `simulate` prints for the doc's file.
#[test]
fn simulate_applies_injected_latency_as_the_doc_says() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let page = std::fs::read_to_string(format!("{root}/docs/chaos.md")).unwrap();
    let intro = "A latency experiment: with this file as `retry.toml`,\n\n```toml\n";
    let at = page.find(intro).expect("docs/chaos.md shows the file") + intro.len();
    let file = &page[at..at + page[at..].find("```").unwrap()];
    assert!(file.contains("latency_rate = 0.1"), "{file}");
    let shown = "$ retry-policy --profile staging simulate publish --clients 1000 --seed 1\n";
    let at = page.find(shown).expect("docs/chaos.md shows the command") + shown.len();
    let line = page[at..].lines().next().unwrap();
    let args: Vec<&str> = shown[2..].split_whitespace().skip(1).collect();
    let out = run(file, &args, &[]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        line.starts_with("chaos of `publish` (latency 10% 100ms..400ms, seed 44): "),
        "{line}"
    );
    assert!(
        stdout.lines().any(|l| l == line),
        "the doc shows {line:?}; the command printed:\n{stdout}"
    );
}
