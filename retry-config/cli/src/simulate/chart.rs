//! Arrivals per tick as a column chart in plain ASCII, one per policy, on a
//! shared time axis so the charts of a comparison line up.

use super::HerdRun;
use crate::short;
use retrykit_sim::ArrivalHistogram;
use std::time::Duration;

const COLUMNS: u64 = 64;
const ROWS: u64 = 10;

/// A chart per policy, each scaled to its own busiest tick.
pub(super) fn herd(run: &HerdRun<'_>) -> String {
    let span = run
        .results
        .iter()
        .map(|(_, r)| r.arrivals.ticks())
        .max()
        .unwrap_or(0)
        .max(1);
    let columns = COLUMNS.min(span);
    let ticks_per_column = span.div_ceil(columns);
    let mut out = String::new();
    for (named, r) in &run.results {
        out.push_str(&format!(
            "\n{}: retry arrivals per tick (each column is {}; its height is the busiest tick in it)\n",
            crate::shown(named.name),
            short(ticks(ticks_per_column, r.tick)),
        ));
        out.push_str(&chart(
            &peaks(&r.arrivals, columns, ticks_per_column),
            short(ticks(span, r.tick)),
        ));
    }
    out
}

fn ticks(n: u64, tick: Duration) -> Duration {
    super::ticks_to_time(n, tick)
}

/// The busiest tick in each column of `per_column` ticks.
fn peaks(h: &ArrivalHistogram, columns: u64, per_column: u64) -> Vec<u64> {
    let mut out = vec![0; columns as usize];
    for bin in h.bins() {
        let column = (bin.first_tick / per_column.max(1)).min(columns - 1) as usize;
        out[column] = out[column].max(bin.peak);
    }
    out
}

/// Rows of `#` from the top down (any arrival shows in the bottom row), a
/// y axis labelled with the top value and 0, and the time axis.
fn chart(values: &[u64], end_label: String) -> String {
    let top = values.iter().copied().max().unwrap_or(0);
    let label_width = top.to_string().len();
    let mut out = String::new();
    for row in (1..=ROWS).rev() {
        let label = if row == ROWS {
            top.to_string()
        } else {
            String::new()
        };
        let cells: String = values
            .iter()
            .map(|&v| {
                // Height in rows, rounded up so that any arrival shows.
                let height = if top == 0 {
                    0
                } else {
                    (u128::from(v) * u128::from(ROWS)).div_ceil(u128::from(top)) as u64
                };
                if height >= row { '#' } else { ' ' }
            })
            .collect();
        out.push_str(&format!("{label:>label_width$} |{}\n", cells.trim_end()));
    }
    out.push_str(&format!(
        "{:>label_width$} +{}\n",
        0,
        "-".repeat(values.len())
    ));
    let pad = values.len().saturating_sub(end_label.len() + 2);
    out.push_str(&format!("{:>label_width$}  0s{:pad$}{end_label}\n", "", ""));
    out
}

#[cfg(test)]
mod tests {
    use super::super::fixtures;
    use super::*;

    #[test]
    fn lockstep_is_a_few_full_height_spikes_and_jitter_a_spread() {
        let policies = fixtures::policies();
        let run = fixtures::herd(&policies);
        let text = herd(&run);
        let charts: Vec<&str> = text.split("\nfull:").collect();
        assert_eq!(charts.len(), 2, "{text}");
        let top_row = |chart: &str| -> String {
            chart
                .lines()
                .find(|l| l.contains(" |") || l.ends_with('|'))
                .unwrap()
                .to_owned()
        };
        let lockstep_top = top_row(charts[0]);
        assert!(lockstep_top.trim_start().starts_with("2000 |"), "{text}");
        // Every lockstep retry wave is the whole fleet: each spike reaches the top.
        // The bottom row sits just above the axis line, which is labelled 0.
        let bottom_row = |chart: &str| -> String {
            let lines: Vec<&str> = chart.lines().collect();
            let axis = lines
                .iter()
                .position(|l| l.trim_start().starts_with("0 +"))
                .unwrap();
            lines[axis - 1].to_owned()
        };
        let bottom = bottom_row(charts[0]);
        assert_eq!(
            bottom.matches('#').count(),
            lockstep_top.matches('#').count()
        );
        // Full jitter spreads the retries over many columns.
        let full_bottom = bottom_row(charts[1]);
        assert!(
            full_bottom.matches('#').count() > 2 * bottom.matches('#').count(),
            "{text}"
        );
    }

    #[test]
    fn columns_keep_the_busiest_tick() {
        let mut h = ArrivalHistogram::new(64);
        h.record(3, 5);
        h.record(4, 9);
        h.record(40, 2);
        assert_eq!(peaks(&h, 8, 8), [9, 0, 0, 0, 0, 2, 0, 0]);
    }

    #[test]
    fn a_chart_of_nothing_is_flat_not_a_panic() {
        let text = chart(&[0, 0, 0], "3ms".into());
        assert!(!text.contains('#'));
        assert_eq!(text.lines().count(), ROWS as usize + 2);
    }
}
