//! The comparison tables for the terminal.

use super::{ContentionRun, HerdRun, Named};
use crate::list::MAX_WIDTH;
use crate::{short, shown};
use retrykit_sim::{Herd, HerdReport, SendRate, StoppedBy};

/// Columns padded to their widest cell, at most [`MAX_WIDTH`]; the first
/// `left` columns are left-aligned (names), the rest right-aligned (numbers).
pub(super) fn grid(header: &[String], rows: &[Vec<String>], left: usize) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            if let Some(w) = widths.get_mut(i) {
                *w = (*w).max(cell.chars().count()).min(MAX_WIDTH);
            }
        }
    }
    let line = |cells: &[String]| {
        let mut s = String::new();
        for (i, (cell, &w)) in cells.iter().zip(&widths).enumerate() {
            if i > 0 {
                s.push_str("  ");
            }
            if i < left {
                s.push_str(&format!("{cell:<w$}"));
            } else {
                s.push_str(&format!("{cell:>w$}"));
            }
        }
        s.trim_end().to_owned() + "\n"
    };
    let mut out = line(header);
    for row in rows {
        out.push_str(&line(row));
    }
    out
}

fn headers(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| (*s).to_owned()).collect()
}

/// The herd comparison: one row per policy.
pub(super) fn herd(run: &HerdRun<'_>) -> String {
    let h = &run.herd;
    let mut out = format!(
        "herd: {} clients fail together at 0s; the server is down for {}, then accepts {} calls per {} tick (seed {})\n",
        h.clients,
        short(h.outage),
        h.capacity,
        short(h.tick),
        h.seed,
    );
    if let Some(timer) = h.timer {
        out.push_str(&format!(
            "client timers: wake-ups rounded up to {}, {:.0}% of timer steps merged into the next\n",
            short(timer.resolution),
            timer.skipped * 100.0,
        ));
    }
    let first = run.results.first().map_or(0, |(_, r)| r.first_wave);
    match h.send {
        None => out.push_str(&format!(
            "first wave: {first} calls at 0s, the scenario's doing and the same for every policy; PEAK counts retries only\n\n"
        )),
        Some(send) => {
            out.push_str(&send_model(&send, h.tick));
            let ticks = run.results.first().map_or(0, |(_, r)| r.first_wave_ticks);
            out.push_str(&format!(
                "first wave: {first} calls sent over {} ({ticks} tick{}), the scenario's doing and the same for every policy; PEAK counts retries only\n\n",
                short(super::ticks_to_time(ticks, h.tick)),
                if ticks == 1 { "" } else { "s" },
            ));
        }
    }
    let unfinished = run.results.iter().any(|(_, r)| r.unfinished > 0);
    let mut header = headers(&[
        "POLICY",
        "JITTER",
        "PEAK/TICK",
        "PEAK AT",
        "CALLS",
        "BUSY TICKS",
        "ALL DONE",
        "SUCCEEDED",
        "GAVE UP",
        "P50",
        "P99",
    ]);
    if unfinished {
        header.push("UNFINISHED".into());
    }
    let rows: Vec<Vec<String>> = run
        .results
        .iter()
        .map(|(named, r)| herd_row(named, r, unfinished))
        .collect();
    out.push_str(&grid(&header, &rows, 2));
    out.push_str(
        "ALL DONE: until every client succeeded or gave up; P50/P99: time to success, over those that succeeded\n",
    );
    for (named, r) in &run.results {
        out.push_str(&notes(named, r, h));
    }
    out
}

/// The send-rate model's line: which model ran, and its rate.
fn send_model(send: &SendRate, tick: std::time::Duration) -> String {
    let per_tick = send.per_ms * tick.as_secs_f64() * 1e3;
    let who = if send.processes == 1 {
        "the clients' machine sends".to_owned()
    } else {
        format!("each of {} client processes sends", send.processes)
    };
    format!(
        "send-rate model: {who} at most {} calls per ms ({} per {} tick); calls due beyond that wait, first come, first served\n",
        rate(send.per_ms),
        rate(per_tick),
        short(tick),
    )
}

/// A rate as a person writes it: 90, 2.5, 0.001.
pub(super) fn rate(r: f64) -> String {
    let text = format!("{r:.6}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

fn herd_row(named: &Named<'_>, r: &HerdReport, unfinished: bool) -> Vec<String> {
    let opt = |d: Option<std::time::Duration>| d.map_or_else(|| "-".to_owned(), short);
    let peak_at = if r.peak_retries == 0 {
        "-".to_owned()
    } else {
        short(super::ticks_to_time(r.peak_tick, r.tick))
    };
    let mut row = vec![
        shown(named.name),
        named.policy.jitter().name().to_owned(),
        r.peak_retries.to_string(),
        peak_at,
        r.calls.to_string(),
        r.busy_ticks.to_string(),
        short(r.finished_after()),
        r.successes.to_string(),
        r.give_ups.to_string(),
        opt(r.p50),
        opt(r.p99),
    ];
    if unfinished {
        row.push(r.unfinished.to_string());
    }
    row
}

/// What the reader should know to read a policy's row right.
fn notes(named: &Named<'_>, r: &HerdReport, herd: &Herd) -> String {
    let mut out = String::new();
    let p = named.policy;
    let name = shown(named.name);
    if r.ignored_budget {
        out.push_str(&format!(
            "note: `{}` has a retry budget; a budget belongs to one process and every simulated client is its own, so it was ignored\n",
            name
        ));
    }
    for (class, when) in [
        ("transient", "during the outage"),
        ("throttled", "once the server is back"),
    ] {
        if !p.retries_class(class) {
            out.push_str(&format!(
                "note: `{}` does not retry `{class}` errors, which is what calls get {when}: those clients give up at once\n",
                name
            ));
        }
    }
    if r.unfinished > 0 {
        let limit = match r.stopped_by {
            Some(StoppedBy::CallLimit) => format!(
                "it had made {} calls (--max-calls {})",
                r.calls, herd.max_calls
            ),
            _ => format!(
                "their next call fell past --horizon {}",
                short(herd.horizon)
            ),
        };
        out.push_str(&format!(
            "note: `{}` left {} clients still retrying when the simulation stopped at {}: {limit}\n",
            name,
            r.unfinished,
            short(r.finished_after())
        ));
    }
    out
}

/// The contention sweep: calls and time until done, one row per fleet size,
/// one column per policy.
pub(super) fn contention(run: &ContentionRun<'_>) -> String {
    let s = &run.scenario;
    let mut out = format!(
        "contention: each client reads one row, then writes it back unless another write landed since its read;\n\
         each network hop takes |Normal({}, {})|; a client whose write lost backs off and starts again (seed {})\n",
        short(s.latency),
        short(s.latency_sd),
        s.seed
    );
    let mut header = vec!["CLIENTS".to_owned()];
    header.extend(run.results.iter().map(|(n, _)| shown(n.name)));
    let sizes: Vec<u32> = run
        .results
        .first()
        .map(|(_, reports)| reports.iter().map(|r| r.clients).collect())
        .unwrap_or_default();
    let section = |title: &str, cell: &dyn Fn(&retrykit_sim::ContentionReport) -> String| {
        let rows: Vec<Vec<String>> = sizes
            .iter()
            .enumerate()
            .map(|(i, clients)| {
                let mut row = vec![clients.to_string()];
                row.extend(
                    run.results
                        .iter()
                        .map(|(_, reports)| reports.get(i).map_or_else(|| "-".to_owned(), cell)),
                );
                row
            })
            .collect();
        format!("\n{title}\n{}", grid(&header, &rows, 1))
    };
    out.push_str(&section(
        "calls (reads + writes) until every client is done:",
        &|r| r.calls().to_string(),
    ));
    out.push_str(&section("time until every client is done:", &|r| {
        short(r.finished_after)
    }));
    let gave_up = run
        .results
        .iter()
        .flat_map(|(_, reports)| reports)
        .any(|r| r.give_ups > 0 || r.unfinished > 0);
    if gave_up {
        out.push_str(&section(
            "clients that gave up (or were still retrying at the horizon):",
            &|r| (r.give_ups + r.unfinished).to_string(),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::fixtures;
    use super::*;

    #[test]
    fn the_herd_table_has_a_row_per_policy_with_its_numbers() {
        let policies = fixtures::policies();
        let run = fixtures::herd(&policies);
        let text = herd(&run);
        let lockstep = text.lines().find(|l| l.starts_with("lockstep")).unwrap();
        let cells: Vec<&str> = lockstep.split_whitespace().collect();
        let r = &run.results[0].1;
        assert_eq!(cells[1], "none");
        assert_eq!(cells[2], r.peak_retries.to_string());
        assert_eq!(cells[4], r.calls.to_string());
        assert!(text.lines().any(|l| l.starts_with("full ")));
        assert!(text.contains("first wave: 2000 calls"));
        // Numbers are right-aligned under their headers.
        let header = text.lines().find(|l| l.starts_with("POLICY")).unwrap();
        let end = header.find("CALLS").unwrap() + "CALLS".len();
        assert!(
            lockstep[..end].ends_with(&format!(" {}", r.calls)),
            "{text}"
        );
    }

    #[test]
    fn a_policy_that_does_not_retry_throttling_gets_a_note() {
        let p = retrykit_core::Policy::builder()
            .retry_on(["transient"])
            .build()
            .unwrap();
        let policies = vec![("picky".to_owned(), p)];
        let text = herd(&fixtures::herd(&policies));
        assert!(
            text.contains("`picky` does not retry `throttled`"),
            "{text}"
        );
        assert!(!text.contains("does not retry `transient`"));
    }

    #[test]
    fn the_contention_tables_have_a_row_per_fleet_size_and_a_column_per_policy() {
        let policies = fixtures::policies();
        let run = fixtures::contention(&policies);
        let text = contention(&run);
        let row = text.lines().find(|l| l.starts_with("40 ")).unwrap();
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cells.len(), 3);
        assert_eq!(cells[1], run.results[0].1[1].calls().to_string());
        assert_eq!(cells[2], run.results[1].1[1].calls().to_string());
        assert!(
            text.lines()
                .any(|l| l.starts_with("CLIENTS") && l.contains("lockstep"))
        );
    }
}
