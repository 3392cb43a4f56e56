//! The committed budget: reading and writing `instructions.budget`, and
//! the table that sets each row's count against it.

use crate::rows::{Kind, ROWS};
use crate::{Counted, HEADROOM};
use std::collections::BTreeMap;

/// A row's budget: instructions and atomic read-modify-writes per call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Allowed {
    instructions: u64,
    atomics: u64,
}

/// Row name to its budget.
pub(crate) type Budget = BTreeMap<String, Allowed>;

/// This run's counts plus the headroom (instructions) or as counted, up to
/// the next whole one (atomics), for our rows.
pub(crate) fn budget_from(counted: &[Counted]) -> Budget {
    counted
        .iter()
        .filter(|c| c.row.kind == Kind::Ours)
        .map(|c| {
            let allowed = Allowed {
                instructions: (c.per_call * (1.0 + HEADROOM)).ceil() as u64,
                atomics: c.atomics.ceil() as u64,
            };
            (c.row.name.to_owned(), allowed)
        })
        .collect()
}

/// The header of the budget file, each line a comment.
const BUDGET_HEADER: &str = "\
# Instructions and atomic read-modify-writes per call that
# `cargo bench -p examples --bench instructions` allows each of our rows
# (retrykit-core and #[retry]): the instructions Callgrind counted when this
# file was last written plus 10%, and the atomics (Callgrind's global bus
# events, `Ge`) as counted, rounded up: they are exact, so one more is a
# regression. The bench fails when a row is over either, when one of our
# rows has no line here, or when a line names a row that no longer exists.
# Peers (backon, tokio-retry2, tryhard) and the limits (the plain call, the
# loops by hand) are reported, not budgeted.
#
# Format: `row = instructions atomics`, one a line; `#` starts a comment.
# Regenerate from a run of today's code with
#   INSTRUCTIONS_WRITE_BUDGET=1 cargo bench -p examples --bench instructions
# Raising a budget takes a commit whose message says why.
";

pub(crate) fn render_budget(budget: &Budget) -> String {
    let mut text = BUDGET_HEADER.to_owned();
    text.push('\n');
    for row in ROWS.iter().filter(|r| r.kind == Kind::Ours) {
        if let Some(allowed) = budget.get(row.name) {
            text.push_str(&format!(
                "{} = {} {}\n",
                row.name, allowed.instructions, allowed.atomics
            ));
        }
    }
    text
}

pub(crate) fn parse_budget(text: &str) -> Result<Budget, String> {
    let mut budget = Budget::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let parsed = line.split_once('=').and_then(|(row, counts)| {
            let mut counts = counts.split_whitespace().map(|n| n.parse::<u64>().ok());
            let allowed = Allowed {
                instructions: counts.next()??,
                atomics: counts.next()??,
            };
            counts
                .next()
                .is_none()
                .then(|| (row.trim().to_owned(), allowed))
        });
        let Some((row, allowed)) = parsed else {
            return Err(format!(
                "line {}: expected `row = instructions atomics` (two whole numbers), found {line:?}",
                number + 1
            ));
        };
        if budget.insert(row.clone(), allowed).is_some() {
            return Err(format!("line {}: {row} appears twice", number + 1));
        }
    }
    Ok(budget)
}

/// Prints the Markdown table; returns each problem with the budget.
pub(crate) fn print_table(counted: &[Counted], budget: &Budget) -> Vec<String> {
    let plain = counted
        .iter()
        .find(|c| c.row.name == "success/plain")
        .map_or(f64::NAN, |c| c.per_call);
    let mut problems = Vec::new();
    println!(
        "\n| row | instructions per call | ratio to plain | atomics per call | budget | verdict |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | --- |");
    for c in counted {
        let ratio = if plain > 0.0 {
            format!("{:.1}×", c.per_call / plain)
        } else {
            "—".to_owned()
        };
        let (limit, verdict) = match (c.row.kind, budget.get(c.row.name)) {
            (Kind::Ours, Some(&allowed)) => {
                let mut over = Vec::new();
                if c.per_call > allowed.instructions as f64 {
                    let by = c.per_call - allowed.instructions as f64;
                    let percent = 100.0 * by / allowed.instructions as f64;
                    over.push(format!("over by {by:.1} instructions (+{percent:.1}%)"));
                }
                if c.atomics > allowed.atomics as f64 {
                    over.push(format!(
                        "over by {:.2} atomics",
                        c.atomics - allowed.atomics as f64
                    ));
                }
                for what in &over {
                    problems.push(format!(
                        "{} is {what} per call ({:.1} instructions and {:.2} atomics against {} and {})",
                        c.row.name, c.per_call, c.atomics, allowed.instructions, allowed.atomics
                    ));
                }
                let verdict = match over.is_empty() {
                    true => "ok".to_owned(),
                    false => format!("**{}**", over.join(", ")),
                };
                (
                    format!("{} / {}", allowed.instructions, allowed.atomics),
                    verdict,
                )
            }
            (Kind::Ours, None) => {
                problems.push(format!(
                    "{} has no budget ({:.1} instructions and {:.2} atomics per call this run)",
                    c.row.name, c.per_call, c.atomics
                ));
                ("—".to_owned(), "**no budget**".to_owned())
            }
            (Kind::Limit, _) => ("—".to_owned(), "limit, reported".to_owned()),
            (Kind::Peer, _) => ("—".to_owned(), "peer, reported".to_owned()),
        };
        println!(
            "| {} | {:.1} | {ratio} | {:.2} | {limit} | {verdict} |",
            c.row.name, c.per_call, c.atomics
        );
    }
    for row in budget.keys() {
        let ours = ROWS.iter().any(|r| r.name == row && r.kind == Kind::Ours);
        if !ours {
            problems.push(format!(
                "the budget names {row}, which is not one of our rows (remove its line)"
            ));
        }
    }
    problems
}
