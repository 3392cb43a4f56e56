//! The table of counts: each row's instructions and atomics per call, and
//! its ratio to the plain call. A report: no row has a budget.

use crate::Counted;
use crate::rows::Kind;

/// Prints the Markdown table.
pub(crate) fn print_table(counted: &[Counted]) {
    let plain = counted
        .iter()
        .find(|c| c.row.name == "success/plain")
        .map_or(f64::NAN, |c| c.per_call);
    println!("\n| row | instructions per call | ratio to plain | atomics per call | kind |");
    println!("| --- | ---: | ---: | ---: | --- |");
    for c in counted {
        let ratio = if plain > 0.0 {
            format!("{:.1}×", c.per_call / plain)
        } else {
            "—".to_owned()
        };
        let kind = match c.row.kind {
            Kind::Ours => "ours",
            Kind::Limit => "limit",
            Kind::Peer => "peer",
        };
        println!(
            "| {} | {:.1} | {ratio} | {:.2} | {kind} |",
            c.row.name, c.per_call, c.atomics
        );
    }
}
