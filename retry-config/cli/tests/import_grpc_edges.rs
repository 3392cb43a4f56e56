//! Issue 41 points 14, 16 and 17: `retry-policy import grpc` on the edges
//! of a service config, one row per case. Each case either imports to a
//! file that `retry-policy check` accepts, or is refused (exit 1, nothing
//! on stdout) by an error naming its JSON path; a warning is said once.

mod common;

use common::{run, stderr, stdout, write};
use std::time::{Duration, Instant};

/// What a case must do.
enum Expect {
    /// Exit 1, nothing on stdout, and an error line `<path>: ...` that
    /// contains `says`.
    Refused {
        path: &'static str,
        says: &'static str,
    },
    /// Exit 0, the output contains `toml` and `check` accepts it; `warns`
    /// appears exactly once on stderr (or stderr is empty).
    Imports {
        toml: &'static str,
        warns: Option<&'static str>,
    },
}
use Expect::{Imports, Refused};

/// A valid retryPolicy's keys and values, as JSON writes them.
const RETRY: &[(&str, &str)] = &[
    ("maxAttempts", "3"),
    ("initialBackoff", "\"0.1s\""),
    ("maxBackoff", "\"1s\""),
    ("backoffMultiplier", "2"),
    ("retryableStatusCodes", "[\"UNAVAILABLE\"]"),
];

/// A valid hedgingPolicy's keys and values.
const HEDGE: &[(&str, &str)] = &[
    ("maxAttempts", "3"),
    ("hedgingDelay", "\"0.05s\""),
    ("nonFatalStatusCodes", "[\"UNAVAILABLE\"]"),
];

/// A JSON object of `base` with `set` applied, in order: a key of `base`
/// takes the new value (`None` leaves it out), any other key is added
/// after them.
fn object(base: &[(&str, &str)], set: &[(&str, Option<&str>)]) -> String {
    let mut entries: Vec<(String, String)> = base
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    for (key, value) in set {
        match entries.iter().position(|(k, _)| k == key) {
            Some(at) => match value {
                Some(v) => entries[at].1 = v.to_string(),
                None => {
                    entries.remove(at);
                }
            },
            None => entries.extend(value.map(|v| (key.to_string(), v.to_string()))),
        }
    }
    let body: Vec<String> = entries
        .iter()
        .map(|(k, v)| format!("\"{k}\": {v}"))
        .collect();
    format!("{{{}}}", body.join(", "))
}

/// A service config of one methodConfig entry for service `a.B`: its
/// `kind` (`retryPolicy` or `hedgingPolicy`) changed by `set`, and `extra`
/// entry keys (`"timeout": "1s", `).
fn one(kind: &str, set: &[(&str, Option<&str>)], extra: &str) -> String {
    named("[{\"service\": \"a.B\"}]", kind, set, extra)
}

/// As [`one`], for the `name` list `names`.
fn named(names: &str, kind: &str, set: &[(&str, Option<&str>)], extra: &str) -> String {
    let base = if kind == "retryPolicy" { RETRY } else { HEDGE };
    format!(
        "{{\"methodConfig\": [{{\"name\": {names}, {extra}\"{kind}\": {}}}]}}",
        object(base, set)
    )
}

/// A valid retryPolicy for `a.B`, changed by `set`.
fn retry(set: &[(&str, Option<&str>)]) -> String {
    one("retryPolicy", set, "")
}

/// A valid hedgingPolicy for `a.B`, changed by `set`.
fn hedge(set: &[(&str, Option<&str>)]) -> String {
    one("hedgingPolicy", set, "")
}

/// `n` names of methods of service `a.B`, as a JSON list.
fn methods(n: usize) -> String {
    let names: Vec<String> = (0..n)
        .map(|i| format!("{{\"service\": \"a.B\", \"method\": \"M{i}\"}}"))
        .collect();
    format!("[{}]", names.join(", "))
}

/// Each case: its name, the service config, and what the import must do.
fn cases() -> Vec<(&'static str, String, Expect)> {
    let past_ours = Some("\"18446744074s\"");
    let nothing = "nothing to import";
    let too_long = "is longer than retry.toml's limit";
    let past_proto = "is past protobuf Duration's limit";
    // retry.toml's limit (100 years), and a nanosecond past it.
    let limit = retrykit_schema::duration::MAX.as_secs();
    let at_limit = format!("\"{limit}s\"");
    let just_past = format!("\"{limit}.000000001s\"");
    vec![
        // Point 14.
        (
            "an empty service config",
            "{}".into(),
            Refused {
                path: "$.methodConfig",
                says: nothing,
            },
        ),
        (
            "an empty methodConfig",
            "{\"methodConfig\": []}".into(),
            Refused {
                path: "$.methodConfig",
                says: nothing,
            },
        ),
        (
            "maxAttempts 1000 on three names is clamped with one warning",
            named(
                "[{\"service\": \"a.B\"}, {\"service\": \"c.D\"}, {}]",
                "retryPolicy",
                &[("maxAttempts", Some("1000"))],
                "",
            ),
            Imports {
                toml: "max_attempts = 5",
                warns: Some("maxAttempts: 1000 clamped to 5"),
            },
        ),
        // Point 16: past retry.toml's limit, past protobuf's, past u64.
        (
            "maxBackoff 18446744074s",
            retry(&[("maxBackoff", past_ours)]),
            Refused {
                path: "$.methodConfig[0].retryPolicy.maxBackoff",
                says: too_long,
            },
        ),
        (
            "initialBackoff 18446744074s",
            retry(&[("initialBackoff", past_ours)]),
            Refused {
                path: "$.methodConfig[0].retryPolicy.initialBackoff",
                says: too_long,
            },
        ),
        (
            "timeout 18446744074s",
            one("retryPolicy", &[], "\"timeout\": \"18446744074s\", "),
            Refused {
                path: "$.methodConfig[0].timeout",
                says: too_long,
            },
        ),
        (
            "hedgingDelay 18446744074s",
            hedge(&[("hedgingDelay", past_ours)]),
            Refused {
                path: "$.methodConfig[0].hedgingPolicy.hedgingDelay",
                says: too_long,
            },
        ),
        (
            "maxBackoff at retry.toml's limit",
            retry(&[("maxBackoff", Some(&at_limit))]),
            Imports {
                toml: "cap = \"3153600000000ms\"",
                warns: None,
            },
        ),
        (
            "maxBackoff one nanosecond past retry.toml's limit",
            retry(&[("maxBackoff", Some(&just_past))]),
            Refused {
                path: "$.methodConfig[0].retryPolicy.maxBackoff",
                says: too_long,
            },
        ),
        (
            "maxBackoff past protobuf Duration's 315576000000s",
            retry(&[("maxBackoff", Some("\"315576000001s\""))]),
            Refused {
                path: "$.methodConfig[0].retryPolicy.maxBackoff",
                says: past_proto,
            },
        ),
        (
            "initialBackoff past u64 seconds",
            retry(&[("initialBackoff", Some("\"18446744073709551616s\""))]),
            Refused {
                path: "$.methodConfig[0].retryPolicy.initialBackoff",
                says: past_proto,
            },
        ),
        (
            "timeout of twenty-five digits of seconds",
            one(
                "retryPolicy",
                &[],
                "\"timeout\": \"9999999999999999999999999.5s\", ",
            ),
            Refused {
                path: "$.methodConfig[0].timeout",
                says: past_proto,
            },
        ),
        // Point 17.
        (
            "hedgingDelay 0s",
            hedge(&[("hedgingDelay", Some("\"0s\""))]),
            Refused {
                path: "$.methodConfig[0].hedgingPolicy.hedgingDelay",
                says: "\"0s\" imports as retry.toml's `hedge_after`, which `retry-policy check` \
                       refuses: policy `a-B`: `hedge_after` must be greater than zero",
            },
        ),
        (
            "hedgingDelay absent",
            hedge(&[("hedgingDelay", None)]),
            Refused {
                path: "$.methodConfig[0].hedgingPolicy.hedgingDelay",
                says: "missing (gRFC A6's default, 0s: every hedge at once) imports as \
                       retry.toml's `hedge_after`",
            },
        ),
        (
            "backoffMultiplier 0.5",
            retry(&[("backoffMultiplier", Some("0.5"))]),
            Refused {
                path: "$.methodConfig[0].retryPolicy.backoffMultiplier",
                says: "`factor` must be a finite number from 1 to 1e6",
            },
        ),
        (
            "timeout 0s",
            one("retryPolicy", &[], "\"timeout\": \"0s\", "),
            Refused {
                path: "$.methodConfig[0].timeout",
                says: "`deadline` must be greater than zero",
            },
        ),
        (
            "initialBackoff above maxBackoff",
            retry(&[("initialBackoff", Some("\"2s\""))]),
            Refused {
                path: "$.methodConfig[0].retryPolicy.maxBackoff",
                says: "`cap` must not be less than base; fix: raise cap to at least 2s or lower \
                       base (cap is 1s); `base` is 2s",
            },
        ),
        (
            "a non-ASCII letter inside a word",
            named(
                "[{\"service\": \"pedidos.Añadir\"}]",
                "retryPolicy",
                &[],
                "",
            ),
            Imports {
                toml: "[policies.pedidos-A-adir]",
                warns: None,
            },
        ),
        (
            "non-ASCII letters beside a dot: `--`, which no variable can address",
            named(
                "[{\"service\": \"café.Menü\", \"method\": \"Pedir\"}]",
                "retryPolicy",
                &[],
                "",
            ),
            Refused {
                path: "$.methodConfig[0].name[0]",
                says: "\"café.Menü/Pedir\" imports as policy `caf--Men--Pedir`, which \
                       `retry-policy check` refuses: invalid policy name",
            },
        ),
        (
            "a service named in CJK only",
            named("[{\"service\": \"日本\"}]", "retryPolicy", &[], ""),
            Refused {
                path: "$.methodConfig[0].name[0]",
                says: "\"日本\" imports as policy `--`, which `retry-policy check` refuses",
            },
        ),
        (
            "two non-ASCII services that become one policy name",
            named(
                "[{\"service\": \"café.A\"}, {\"service\": \"cafè.A\"}]",
                "retryPolicy",
                &[],
                "",
            ),
            Refused {
                path: "$.methodConfig[0].name[1]",
                says: "both become policy `caf--A`",
            },
        ),
        (
            "12,000 methods in one entry",
            named(&methods(12_000), "retryPolicy", &[], ""),
            Refused {
                path: "$.methodConfig",
                says: "names 12000 methods, but a retry.toml may define at most 10000 policies",
            },
        ),
        (
            "9,000 methods in one entry",
            named(&methods(9_000), "retryPolicy", &[], ""),
            Imports {
                toml: "[policies.a-B-M8999]",
                warns: None,
            },
        ),
        (
            "12,000 entries, each with a bad maxAttempts",
            {
                let entry = format!(
                    "{{\"name\": [{{}}], \"retryPolicy\": {}}}",
                    object(RETRY, &[("maxAttempts", Some("1"))])
                );
                format!("{{\"methodConfig\": [{}]}}", vec![entry; 12_000].join(", "))
            },
            Refused {
                path: "$.methodConfig[0].retryPolicy.maxAttempts",
                says: "1 must be a whole number of at least 2",
            },
        ),
        (
            "an unknown key maxAttempt",
            retry(&[("maxAttempts", None), ("maxAttempt", Some("3"))]),
            Refused {
                path: "$.methodConfig[0].retryPolicy.maxAttempt",
                says: "did you mean `maxAttempts`?",
            },
        ),
        (
            "an unknown key in a hedgingPolicy",
            hedge(&[("hedgingDelays", Some("\"1s\""))]),
            Refused {
                path: "$.methodConfig[0].hedgingPolicy.hedgingDelays",
                says: "did you mean `hedgingDelay`?",
            },
        ),
        (
            "an unknown key at the top",
            "{\"methodConfigs\": []}".into(),
            Refused {
                path: "$.methodConfigs",
                says: "did you mean `methodConfig`?",
            },
        ),
        (
            "an unknown key in a name",
            named("[{\"services\": \"a.B\"}]", "retryPolicy", &[], ""),
            Refused {
                path: "$.methodConfig[0].name[0].services",
                says: "did you mean `service`?",
            },
        ),
        (
            "an unknown key in retryThrottling",
            format!(
                "{{\"retryThrottling\": {{\"maxToken\": 10, \"tokenRatio\": 0.1}}, {}",
                &retry(&[])[1..]
            ),
            Refused {
                path: "$.retryThrottling.maxToken",
                says: "did you mean `maxTokens`?",
            },
        ),
        (
            "maxAttempts written twice",
            retry(&[]).replacen(
                "\"maxAttempts\": 3",
                "\"maxAttempts\": 3, \"maxAttempts\": 4",
                1,
            ),
            Refused {
                path: "$.methodConfig[0].retryPolicy.maxAttempts",
                says: "is written twice in one object",
            },
        ),
        (
            "methodConfig written twice",
            format!("{{\"methodConfig\": [], {}", &retry(&[])[1..]),
            Refused {
                path: "$.methodConfig",
                says: "is written twice in one object",
            },
        ),
    ]
}

/// The most a case may take: an import of 12,000 names is a few hundred
/// milliseconds even unoptimised on a loaded machine.
const SLOW: Duration = Duration::from_secs(20);

/// What went wrong with case `name`, if anything.
fn failure(name: &str, json: &str, expect: &Expect) -> Option<String> {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "service_config.json", json);
    let started = Instant::now();
    let out = run(&["import", "grpc", file.to_str().unwrap()]);
    let took = started.elapsed();
    let (toml, said) = (stdout(&out), stderr(&out));
    let shown: String = said.chars().take(2000).collect();
    let fail = |why: String| Some(format!("{name}: {why}\nstderr: {shown}"));
    if took > SLOW {
        return fail(format!("took {took:?}"));
    }
    // Bounded: at most MAX_SHOWN_DIAGNOSTICS lines, then one that counts the rest.
    if said.lines().count() > 51 {
        return fail(format!("{} lines on stderr", said.lines().count()));
    }
    match expect {
        Refused { path, says } => {
            let line = said
                .lines()
                .find(|l| l.contains(&format!(": {path}: ")) && l.contains(says));
            if out.status.code() != Some(1) || !toml.is_empty() {
                return fail(format!("exit {:?}, stdout {toml:.200}", out.status.code()));
            }
            if line.is_none() || !said.starts_with("error: ") {
                return fail(format!("no error at {path} saying {says:?}"));
            }
        }
        Imports {
            toml: expected,
            warns,
        } => {
            if out.status.code() != Some(0) {
                return fail(format!("exit {:?}", out.status.code()));
            }
            if !toml.contains(expected) {
                return fail(format!("no {expected:?} in {toml:.2000}"));
            }
            match warns {
                Some(w) if said.matches(w).count() != 1 => {
                    return fail(format!("{w:?} is not said exactly once"));
                }
                None if !said.is_empty() => return fail("a warning".into()),
                _ => {}
            }
            let written = write(dir.path(), "retry.toml", &toml);
            let check = run(&["--config", written.to_str().unwrap(), "check"]);
            if check.status.code() != Some(0) {
                return fail(format!(
                    "check refuses the import:\n{}{}",
                    stdout(&check),
                    stderr(&check)
                ));
            }
        }
    }
    None
}

#[test]
fn each_edge_imports_to_what_check_accepts_or_is_refused_at_its_json_path() {
    let failures: Vec<String> = cases()
        .iter()
        .filter_map(|(name, json, expect)| failure(name, json, expect))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
