//! `RETRY_STRICT` as retrykit-core reads it (without retrykit-config): a
//! value that is neither on nor off is reported, once, naming the values it
//! takes, rather than silently meaning off (issue 22). Each case runs this
//! test binary again as a child with the variable set, since it is read once
//! per process.

use std::process::Command;

const CHILD: &str = "RETRYKIT_STRICT_ENV_CHILD";
const TEST: &str = "retry_strict_is_read_once_and_a_value_it_does_not_take_is_reported";

/// Runs this test in a child with `RETRY_STRICT=value` (or unset); its
/// stdout (what `is_strict` said) and stderr.
fn child(value: Option<&str>) -> (String, String) {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["--exact", TEST, "--nocapture", "--test-threads", "1"])
        .env(CHILD, "1")
        .env_remove("RETRY_STRICT");
    if let Some(value) = value {
        command.env("RETRY_STRICT", value);
    }
    let out = command.output().unwrap();
    assert!(out.status.success(), "{out:?}");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn retry_strict_is_read_once_and_a_value_it_does_not_take_is_reported() {
    if std::env::var_os(CHILD).is_some() {
        let asked = [
            retrykit_core::registry::is_strict(),
            retrykit_core::registry::is_strict(),
        ];
        println!("strict={asked:?}");
        return;
    }
    for value in ["2", "enabled", "o n"] {
        let (said, warned) = child(Some(value));
        assert!(said.contains("strict=[false, false]"), "{value:?}: {said}");
        assert_eq!(
            warned.matches("RETRY_STRICT is").count(),
            1,
            "said once: {warned}"
        );
        assert!(
            warned.contains(&format!("`{value}`")),
            "quotes it: {warned}"
        );
        assert!(
            warned.contains("1, true, yes, on") && warned.contains("0, false, no, off"),
            "names the values it takes: {warned}"
        );
        assert!(warned.contains("fix: set RETRY_STRICT=1"), "{warned}");
    }
    // A long value with a control character is quoted bounded and escaped.
    let long = format!("\u{1b}[31m{}", "x".repeat(10_000));
    let (_, warned) = child(Some(&long));
    assert!(warned.contains("`\\u{1b}[31mxxx"), "escaped: {warned}");
    assert!(warned.len() < 600, "bounded: {} bytes", warned.len());
    for (value, on) in [
        (Some(" On "), true),
        (Some("YES"), true),
        (Some("0"), false),
    ] {
        let (said, warned) = child(value);
        let expected = format!("strict=[{on}, {on}]");
        assert!(said.contains(&expected), "{value:?}: {said}");
        assert!(!warned.contains("RETRY_STRICT"), "{value:?}: {warned}");
    }
    for value in [Some(""), None] {
        let (said, warned) = child(value);
        assert!(said.contains("strict=[false, false]"), "{value:?}: {said}");
        assert!(!warned.contains("RETRY_STRICT"), "{value:?}: {warned}");
    }
}
