//! The `http` demo: a scripted server answers 503 and 429 with
//! `Retry-After` in both forms (and some garbage), the annotated client
//! obeys, and the report shows each header exactly as the server sent it,
//! with the wait that followed explained from that header.
//!
//! An HTTP-date has whole seconds and is read against the clock when it
//! arrives, so "two seconds from now" written at 07:10:01.880 is the date
//! 07:10:03 and a wait of 1.12 s. The report says so, from the time the
//! reply was sent, instead of leaving an unexplained 1.12 s.

use super::client::fetch;
use super::server::{Exchange, Reply, RetryAfter, ScriptedServer};
use retrykit_config::show_duration;
use retrykit_core::http::RetryAfterValue;
use std::io::Write;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// What the demo's server answers, in order, before a 200: each form of
/// `Retry-After` and two the client must ignore.
///
/// ```
/// assert_eq!(examples::http::demo_script().len(), 4);
/// ```
pub fn demo_script() -> Vec<Reply> {
    vec![
        Reply::with_retry_after(503, RetryAfter::Seconds(1)),
        Reply::with_retry_after(429, RetryAfter::In(Duration::from_secs(2))),
        Reply::with_retry_after(503, RetryAfter::Raw("not-a-date".into())),
        Reply::with_retry_after(429, RetryAfter::Date(UNIX_EPOCH)),
    ]
}

/// Serves `script` on 127.0.0.1, GETs `/orders/42` with the `http` policy
/// (installed beforehand) and writes the script, then every request with
/// what the server sent and the wait that followed, to `out`. Returns what
/// the server sent, and the fetch's error if it failed.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use examples::http::{run_demo, Reply};
/// examples::install_policies("test").unwrap();
/// let mut out = Vec::new();
/// let sent = run_demo(vec![Reply::status(503)], &mut out).await.unwrap();
/// assert_eq!(sent.len(), 2);
/// assert!(String::from_utf8(out).unwrap().contains("request 1  HTTP 503"));
/// # }
/// ```
pub async fn run_demo(
    script: Vec<Reply>,
    out: &mut dyn Write,
) -> Result<Vec<Exchange>, Box<dyn std::error::Error>> {
    for (i, reply) in script.iter().enumerate() {
        let header = reply.retry_after.as_ref().map(ToString::to_string);
        let header = header.map_or_else(String::new, |h| format!("  Retry-After: {h}"));
        writeln!(out, "reply {}: HTTP {}{header}", i + 1, reply.status)?;
    }
    writeln!(out, "then: HTTP 200\n")?;
    let server = ScriptedServer::start(script).await?;
    let started = tokio::time::Instant::now();
    let result = fetch(server.addr(), "/orders/42").await;
    let elapsed = started.elapsed();
    let sent = server.exchanges();
    let max_retry_after = retrykit_core::registry::policy("http").and_then(|p| p.max_retry_after());
    writeln!(
        out,
        "GET /orders/42: {} requests; a Retry-After longer than the policy's own wait \
         replaces it, up to max_retry_after ({})",
        sent.len(),
        max_retry_after.map_or_else(|| "none".to_owned(), show_duration)
    )?;
    for (i, exchange) in sent.iter().enumerate() {
        let waited = sent.get(i + 1).map(|next| next.arrived - exchange.arrived);
        writeln!(out, "  request {}  HTTP {}", i + 1, exchange.status)?;
        if exchange.status != 200 {
            writeln!(out, "{}", explain(exchange, waited, max_retry_after))?;
        }
    }
    match result {
        Ok(body) => writeln!(out, "→ {body:?} in {}", seconds(elapsed))?,
        Err(e) => writeln!(out, "→ gave up after {}: {e}", seconds(elapsed))?,
    }
    Ok(sent)
}

/// The header as sent, what it asks for, and the wait that followed.
fn explain(sent: &Exchange, waited: Option<Duration>, max: Option<Duration>) -> String {
    let indent = "             ";
    let Some(header) = &sent.retry_after else {
        return format!(
            "{indent}no Retry-After: the policy's own wait{}",
            then(waited)
        );
    };
    let asks = match RetryAfterValue::parse(header) {
        None => "not a valid Retry-After, so ignored: the policy's own wait".to_owned(),
        Some(RetryAfterValue::Seconds(n)) => format!("asks for {n}s"),
        Some(RetryAfterValue::Date(when)) => match when.duration_since(sent.sent_at) {
            Ok(ahead) if !ahead.is_zero() => format!(
                "a date {} after the reply was sent at {} (an HTTP-date has whole \
                 seconds: the fraction of a second of the time meant is dropped)",
                seconds(ahead),
                time_of_day(sent.sent_at)
            ),
            _ => format!(
                "a date already past when the reply was sent at {}: no wait asked, \
                 so the policy's own wait",
                time_of_day(sent.sent_at)
            ),
        },
    };
    let hint = RetryAfterValue::parse(header).map(|v| v.wait_from(sent.sent_at));
    let clamped = match (hint, max) {
        (Some(hint), Some(max)) if hint > max => {
            format!("; more than max_retry_after, so {}", show_duration(max))
        }
        _ => String::new(),
    };
    format!(
        "{indent}Retry-After: {header}\n{indent}{asks}{clamped}{}",
        then(waited)
    )
}

/// `; waited 1.12s`, or that no request followed.
fn then(waited: Option<Duration>) -> String {
    waited.map_or_else(
        || "; no request followed".to_owned(),
        |w| format!("; waited {}", seconds(w)),
    )
}

/// `1.12s`: the precision a wait on a real clock has.
fn seconds(d: Duration) -> String {
    format!("{:.2}s", d.as_secs_f64())
}

/// `07:10:01.880 GMT`: when in the day, to the millisecond, since an
/// HTTP-date's own second is what is being explained.
fn time_of_day(t: SystemTime) -> String {
    let since = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let s = since.as_secs() % 86_400;
    format!(
        "{:02}:{:02}:{:02}.{:03} GMT",
        s / 3600,
        s / 60 % 60,
        s % 60,
        since.subsec_millis()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(retry_after: Option<&str>) -> Exchange {
        Exchange {
            status: 429,
            retry_after: retry_after.map(str::to_owned),
            // 1994-11-06 08:49:37.880 GMT
            sent_at: UNIX_EPOCH + Duration::from_millis(784_111_777_880),
            arrived: tokio::time::Instant::now(),
        }
    }

    fn explained(header: Option<&str>, waited: Option<u64>) -> String {
        let waited = waited.map(Duration::from_millis);
        explain(&sent(header), waited, Some(Duration::from_secs(10)))
    }

    #[test]
    fn a_date_is_explained_from_the_moment_it_was_sent() {
        let text = explained(Some("Sun, 06 Nov 1994 08:49:39 GMT"), Some(1_118));
        assert!(
            text.contains("Retry-After: Sun, 06 Nov 1994 08:49:39 GMT"),
            "{text}"
        );
        assert!(
            text.contains("a date 1.12s after the reply was sent at 08:49:37.880 GMT"),
            "{text}"
        );
        assert!(text.ends_with("; waited 1.12s"), "{text}");
    }

    #[test]
    fn past_dates_garbage_and_missing_headers_leave_the_policy_s_wait() {
        let past = explained(Some("Sun, 06 Nov 1994 08:00:00 GMT"), Some(3));
        assert!(
            past.contains("already past when the reply was sent at 08:49:37.880"),
            "{past}"
        );
        let garbage = explained(Some("soon"), Some(3));
        assert!(
            garbage.contains("not a valid Retry-After, so ignored"),
            "{garbage}"
        );
        let none = explained(None, None);
        assert!(none.contains("no Retry-After"), "{none}");
        assert!(none.ends_with("no request followed"), "{none}");
    }

    #[test]
    fn a_hint_beyond_max_retry_after_says_it_was_clamped() {
        let text = explained(Some("3600"), Some(10_000));
        assert!(
            text.contains("asks for 3600s; more than max_retry_after, so 10s"),
            "{text}"
        );
    }
}
