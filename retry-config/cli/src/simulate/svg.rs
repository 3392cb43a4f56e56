//! The results as an SVG plot for a design review: hand-written SVG (a small
//! format), one panel per question, one coloured line per policy.

use super::{ContentionRun, HerdRun};
use crate::short;
use std::fmt::Write as _;
use std::time::Duration;

const WIDTH: f64 = 1000.0;
const PANEL_HEIGHT: f64 = 380.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 250.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 56.0;
/// Colour-blind-safe (Okabe–Ito), in the order policies are given.
const PALETTE: [&str; 7] = [
    "#D55E00", "#0072B2", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
];
/// Points per line: finer than any screen needs, small enough to stay a few hundred kB.
const POINTS: usize = 800;

/// One line of a panel.
struct Series {
    name: String,
    points: Vec<(f64, f64)>,
}

/// A dashed reference line, horizontal (`y`) or vertical (`x`), with a label.
enum Marker {
    Y(f64, String),
    X(f64, String),
}

/// One chart: axes, lines, legend.
struct Panel {
    title: String,
    x_label: String,
    y_label: String,
    x_fmt: fn(f64) -> String,
    y_fmt: fn(f64) -> String,
    series: Vec<Series>,
    markers: Vec<Marker>,
    /// A logarithmic y axis, so a spike of the whole fleet and a spread of
    /// a few calls per tick are both readable on one plot.
    log_y: bool,
}

/// Milliseconds as a short duration label.
fn ms_label(ms: f64) -> String {
    short(Duration::from_secs_f64((ms / 1e3).max(0.0)))
}

fn count_label(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    }
}

/// Arrivals per tick over time, one line per policy.
pub(super) fn herd(run: &HerdRun<'_>) -> String {
    let h = &run.herd;
    let tick_ms = h.tick.as_secs_f64() * 1e3;
    let series = run
        .results
        .iter()
        .map(|(named, r)| {
            let bins = r.arrivals.coarsened(POINTS);
            let mut points = Vec::with_capacity(2 * POINTS);
            for bin in bins.bins() {
                let x0 = bin.first_tick as f64 * tick_ms;
                let x1 = (bin.first_tick + bin.ticks) as f64 * tick_ms;
                points.push((x0, bin.peak as f64));
                points.push((x1, bin.peak as f64));
            }
            let jitter = named.policy.jitter().name();
            let name = if named.name == jitter || named.name.ends_with(&format!("/{jitter}")) {
                crate::shown(named.name)
            } else {
                format!("{} ({jitter} jitter)", crate::shown(named.name))
            };
            Series { name, points }
        })
        .collect();
    let panel = Panel {
        title: format!(
            "Retry arrivals per tick: {} clients, server down {}, then {} calls per {} tick",
            h.clients,
            short(h.outage),
            h.capacity,
            short(h.tick)
        ),
        x_label: "time since every client failed at once".into(),
        y_label: "retries arriving in one tick".into(),
        x_fmt: ms_label,
        y_fmt: count_label,
        series,
        markers: vec![
            Marker::Y(h.capacity as f64, "capacity".into()),
            Marker::X(h.outage.as_secs_f64() * 1e3, "server back".into()),
        ],
        log_y: true,
    };
    document(&[panel])
}

/// Calls and time until done against fleet size, one line per policy.
pub(super) fn contention(run: &ContentionRun<'_>) -> String {
    let series = |value: fn(&retrykit_sim::ContentionReport) -> f64| -> Vec<Series> {
        run.results
            .iter()
            .map(|(named, reports)| Series {
                name: crate::shown(named.name),
                points: reports
                    .iter()
                    .map(|r| (f64::from(r.clients), value(r)))
                    .collect(),
            })
            .collect()
    };
    let s = &run.scenario;
    let about = format!(
        "optimistic writes to one row, hops |Normal({}, {})|",
        short(s.latency),
        short(s.latency_sd)
    );
    document(&[
        Panel {
            title: format!("Work: calls until every client has written ({about})"),
            x_label: "clients".into(),
            y_label: "calls (reads + writes)".into(),
            x_fmt: count_label,
            y_fmt: count_label,
            series: series(|r| r.calls() as f64),
            markers: Vec::new(),
            log_y: false,
        },
        Panel {
            title: "Time until every client has written".into(),
            x_label: "clients".into(),
            y_label: "time".into(),
            x_fmt: count_label,
            y_fmt: ms_label,
            series: series(|r| r.finished_after.as_secs_f64() * 1e3),
            markers: Vec::new(),
            log_y: false,
        },
    ])
}

/// A round step giving about `target` intervals over `span`: 1, 2 or 5 × 10^k.
fn nice_step(span: f64, target: f64) -> f64 {
    let raw = (span / target).max(f64::MIN_POSITIVE);
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * magnitude);
    if step.is_finite() && step > 0.0 {
        step
    } else {
        1.0
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn document(panels: &[Panel]) -> String {
    let height = PANEL_HEIGHT * panels.len() as f64;
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" \
         viewBox=\"0 0 {WIDTH} {height}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    );
    for (i, panel) in panels.iter().enumerate() {
        draw(&mut out, panel, i as f64 * PANEL_HEIGHT);
    }
    out.push_str("</svg>\n");
    out
}

fn draw(out: &mut String, p: &Panel, top: f64) {
    let (x0, x1) = (LEFT, WIDTH - RIGHT);
    let (y0, y1) = (top + PANEL_HEIGHT - BOTTOM, top + TOP);
    let all = p.series.iter().flat_map(|s| &s.points);
    let x_max = all.clone().map(|pt| pt.0).fold(0.0, f64::max);
    let y_max = all.map(|pt| pt.1).fold(0.0, f64::max);
    let marker_y = p.markers.iter().filter_map(|m| match m {
        Marker::Y(y, _) => Some(*y),
        Marker::X(..) => None,
    });
    // Show a horizontal marker only when it is near the data, not when it
    // would flatten every line against the axis.
    let y_max = marker_y.filter(|y| *y <= 2.0 * y_max).fold(y_max, f64::max);
    let x_step = nice_step(x_max.max(1e-9), 8.0);
    let x_top = (x_max / x_step).ceil().max(1.0) * x_step;
    let sx = |x: f64| x0 + (x1 - x0) * (x / x_top);
    let (y_top, y_ticks) = if p.log_y {
        // 0, 1, 10, 100, ... up to the first power of ten at or above the data.
        let decades = y_max.max(1.0).log10().ceil().clamp(1.0, 18.0) as i32;
        let ticks = std::iter::once(0.0)
            .chain((0..=decades).map(|d| 10f64.powi(d)))
            .collect::<Vec<_>>();
        (10f64.powi(decades), ticks)
    } else {
        let step = nice_step(y_max.max(1e-9), 5.0);
        let top = (y_max / step).ceil().max(1.0) * step;
        let count = (top / step).round() as usize;
        (top, (0..=count).map(|i| i as f64 * step).collect())
    };
    let log_y = p.log_y;
    let sy = |y: f64| {
        let fraction = if log_y {
            (1.0 + y.max(0.0)).log10() / (1.0 + y_top).log10()
        } else {
            y / y_top
        };
        y0 - (y0 - y1) * fraction
    };

    let _ = writeln!(
        out,
        "<text x=\"{x0}\" y=\"{}\" font-size=\"14\" font-weight=\"bold\">{}</text>",
        top + 22.0,
        escape(&p.title)
    );
    // Grid and tick labels.
    for &y in &y_ticks {
        let _ = writeln!(
            out,
            "<line x1=\"{x0}\" x2=\"{x1}\" y1=\"{0:.1}\" y2=\"{0:.1}\" stroke=\"#e4e4e4\"/>\
             <text x=\"{1}\" y=\"{2:.1}\" text-anchor=\"end\">{3}</text>",
            sy(y),
            x0 - 6.0,
            sy(y) + 4.0,
            escape(&(p.y_fmt)(y))
        );
    }
    let mut x = 0.0;
    while x <= x_top + x_step / 2.0 {
        let _ = writeln!(
            out,
            "<line x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"{y0}\" y2=\"{1}\" stroke=\"#999\"/>\
             <text x=\"{0:.1}\" y=\"{2}\" text-anchor=\"middle\">{3}</text>",
            sx(x),
            y0 + 5.0,
            y0 + 18.0,
            escape(&(p.x_fmt)(x))
        );
        x += x_step;
    }
    let _ = writeln!(
        out,
        "<line x1=\"{x0}\" x2=\"{x1}\" y1=\"{y0}\" y2=\"{y0}\" stroke=\"#333\"/>\
         <line x1=\"{x0}\" x2=\"{x0}\" y1=\"{y0}\" y2=\"{y1}\" stroke=\"#333\"/>\
         <text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>\
         <text transform=\"translate({},{:.1}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
        (x0 + x1) / 2.0,
        y0 + 40.0,
        escape(&p.x_label),
        x0 - 58.0,
        (y0 + y1) / 2.0,
        escape(&if p.log_y {
            format!("{} (log scale)", p.y_label)
        } else {
            p.y_label.clone()
        })
    );
    for marker in &p.markers {
        match marker {
            Marker::Y(y, label) if *y <= y_top => {
                let _ = writeln!(
                    out,
                    "<line x1=\"{x0}\" x2=\"{x1}\" y1=\"{0:.1}\" y2=\"{0:.1}\" stroke=\"#555\" stroke-dasharray=\"6 4\"/>\
                     <text x=\"{1}\" y=\"{2:.1}\" fill=\"#555\">{3}</text>",
                    sy(*y),
                    x1 + 4.0,
                    sy(*y) + 4.0,
                    escape(label)
                );
            }
            Marker::X(x, label) if *x <= x_top => {
                let _ = writeln!(
                    out,
                    "<line x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"{y0}\" y2=\"{y1}\" stroke=\"#555\" stroke-dasharray=\"6 4\"/>\
                     <text x=\"{1:.1}\" y=\"{2}\" fill=\"#555\">{3}</text>",
                    sx(*x),
                    sx(*x) + 4.0,
                    y1 + 12.0,
                    escape(label)
                );
            }
            _ => {}
        }
    }
    for (i, s) in p.series.iter().enumerate() {
        let colour = PALETTE[i % PALETTE.len()];
        let points: Vec<String> = s
            .points
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", sx(x), sy(y)))
            .collect();
        let _ = writeln!(
            out,
            "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"1.5\" stroke-linejoin=\"round\" points=\"{}\"/>",
            points.join(" ")
        );
        let ly = y1 + 24.0 + 20.0 * i as f64;
        let _ = writeln!(
            out,
            "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\" stroke=\"{colour}\" stroke-width=\"3\"/>\
             <text x=\"{3}\" y=\"{4}\">{5}</text>",
            x1 + 10.0,
            x1 + 30.0,
            ly,
            x1 + 36.0,
            ly + 4.0,
            escape(&s.name)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures;
    use super::*;

    #[test]
    fn the_herd_plot_has_a_line_and_a_legend_entry_per_policy() {
        let policies = fixtures::policies();
        let svg = herd(&fixtures::herd(&policies));
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.contains(">lockstep (none jitter)</text>"));
        assert!(svg.contains(">full</text>"));
        assert!(
            svg.contains(">10000</text>"),
            "a log axis up to the whole fleet"
        );
        assert!(svg.contains(">server back</text>"));
        // Every coordinate is a finite number inside the canvas.
        for point in svg
            .split("points=\"")
            .skip(1)
            .flat_map(|s| s.split('"').next().unwrap().split(' '))
        {
            let (x, y) = point.split_once(',').unwrap();
            let (x, y): (f64, f64) = (x.parse().unwrap(), y.parse().unwrap());
            assert!(
                (0.0..=WIDTH).contains(&x) && (0.0..=PANEL_HEIGHT).contains(&y),
                "{point}"
            );
        }
    }

    #[test]
    fn the_contention_plot_has_two_panels() {
        let policies = fixtures::policies();
        let svg = contention(&fixtures::contention(&policies));
        assert_eq!(svg.matches("<polyline").count(), 4);
        assert!(svg.contains("Work: calls until every client has written"));
    }

    #[test]
    fn names_are_escaped() {
        assert_eq!(escape("a<b>&\"c\""), "a&lt;b&gt;&amp;&quot;c&quot;");
    }

    #[test]
    fn steps_are_round() {
        assert_eq!(nice_step(1000.0, 5.0), 200.0);
        assert_eq!(nice_step(7.0, 8.0), 1.0);
        assert_eq!(nice_step(0.0, 5.0), nice_step(0.0, 5.0));
    }
}
