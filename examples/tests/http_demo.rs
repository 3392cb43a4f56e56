//! The `http` demo's report, run under a paused clock against the demo's own
//! script: every date it prints is one the server sent, and the wait after
//! an HTTP-date is explained from the moment that date was sent.

use examples::http::{demo_script, run_demo};
use std::time::Duration;

/// Every HTTP-date (`Sun, 06 Nov 1994 08:49:37 GMT`, 29 characters) in `text`.
fn http_dates(text: &str) -> Vec<String> {
    const LEN: usize = 29;
    let mut dates = Vec::new();
    for line in text.lines() {
        for (start, _) in line.char_indices() {
            if let Some(candidate) = line.get(start..start + LEN)
                && httpdate::parse_http_date(candidate).is_ok()
            {
                dates.push(candidate.to_owned());
            }
        }
    }
    dates
}

#[tokio::test(start_paused = true)]
async fn the_report_prints_the_dates_sent_and_explains_the_wait_from_them() {
    examples::install_policies("test").expect("examples/retry.toml loads");
    let mut out = Vec::new();
    let sent = run_demo(demo_script(), &mut out).await.unwrap();
    let report = String::from_utf8(out).unwrap();
    eprintln!("{report}");

    // Reply 2 is "an HTTP-date 2 s after the reply is written": no date
    // exists before it is sent, so the script preview must not invent one.
    let preview = report.lines().nth(1).unwrap();
    assert!(preview.starts_with("reply 2: HTTP 429"), "{preview}");
    assert!(http_dates(preview).is_empty(), "{preview}");

    let headers: Vec<&str> = sent
        .iter()
        .filter_map(|e| e.retry_after.as_deref())
        .collect();
    for date in http_dates(&report) {
        assert!(
            headers.contains(&date.as_str()),
            "{date} was never sent: {headers:?}"
        );
    }
    let date = sent[1].retry_after.as_deref().unwrap();
    assert!(report.contains(&format!("Retry-After: {date}")), "{report}");

    // The date is up to a second short of "2 s" (whole seconds); the report
    // gives that distance from the send time, and the wait matches it, give
    // or take the real milliseconds between the server writing and the
    // client reading the header, and the timer's 1 ms rounding.
    let when = httpdate::parse_http_date(date).unwrap();
    let ahead = when.duration_since(sent[1].sent_at).unwrap();
    assert!(ahead > Duration::from_secs(1) && ahead <= Duration::from_secs(2));
    let stated = format!(
        "a date {:.2}s after the reply was sent",
        ahead.as_secs_f64()
    );
    assert!(report.contains(&stated), "no {stated:?} in:\n{report}");
    let waited = sent[2].arrived - sent[1].arrived;
    assert!(
        waited.abs_diff(ahead) < Duration::from_millis(100),
        "waited {waited:?} for a date {ahead:?} ahead"
    );
}

/// Issue 22: `http | head -2` panicked on the closed pipe. The binary stops
/// quietly: exit 0, nothing on stderr. Its stdout is closed before it starts,
/// so its first write already fails and it stops before any request.
#[cfg(unix)]
#[test]
fn a_closed_stdout_stops_the_binary_quietly() {
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_http"))
        .env("RETRY_PROFILE", "test")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(err, "");
}
