//! `--repeat N`: the same fleet run N times, one after another. Each run
//! is measured and predicted on its own (its send-rate prediction from the
//! rate its own first wave showed); the report lists every run's figures,
//! their median and spread (min–max), and a verdict on the medians, with
//! whether each run's prediction lies inside the measured spread.
//!
//! One run cannot be the test on a shared 2-vCPU machine (five identical
//! runs moved a peak 2.15×), but a bias can: when every run errs the same
//! way, the report says so.

use super::outcome::Outcome;
use super::report::{Comparison, WITHIN, diff_share, ms};
use serde_json::{Value, json};
use std::fmt::Write;

/// The runs, in the order they were made.
pub(crate) struct Repeats<'a> {
    pub(crate) runs: Vec<Comparison<'a>>,
}

/// A figure compared run by run: its name in the table, its key in the
/// JSON (the single run's key), and its value in an outcome, if it has one.
struct Figure {
    name: &'static str,
    key: &'static str,
    of: fn(&Outcome) -> Option<f64>,
}

/// The compared figures; the verdict is on the first two, as a single run's.
const FIGURES: [Figure; 4] = [
    Figure {
        name: "peak retries per tick",
        key: "peak_retries_per_tick",
        of: |o| Some(o.peak_retries_per_tick as f64),
    },
    Figure {
        name: "calls",
        key: "calls",
        of: |o| Some(o.calls as f64),
    },
    Figure {
        name: "gave up",
        key: "give_ups",
        of: |o| Some(o.give_ups as f64),
    },
    Figure {
        name: "p50 time to success (ms)",
        key: "p50_ms",
        of: |o| o.p50.map(ms),
    },
];

/// The middle and the ends of some values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Spread {
    /// The median: the middle value, or the mean of the two middle ones.
    pub(crate) median: f64,
    pub(crate) min: f64,
    pub(crate) max: f64,
}

impl Spread {
    /// The spread of `values`; `None` when there are none.
    pub(crate) fn of(values: &[f64]) -> Option<Spread> {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        v.sort_unstable_by(f64::total_cmp);
        let (&min, &max) = (v.first()?, v.last()?);
        let mid = v.len() / 2;
        let median = if v.len() % 2 == 1 {
            v[mid]
        } else {
            (v[mid - 1] + v[mid]) / 2.0
        };
        Some(Spread { median, min, max })
    }

    /// Whether `x` lies within min..=max.
    pub(crate) fn holds(&self, x: f64) -> bool {
        (self.min..=self.max).contains(&x)
    }
}

/// One figure over the runs: each run's predicted and measured value.
struct Compared {
    predicted: Vec<Option<f64>>,
    measured: Vec<Option<f64>>,
}

impl Compared {
    fn spread(values: &[Option<f64>]) -> Option<Spread> {
        Spread::of(&values.iter().flatten().copied().collect::<Vec<_>>())
    }

    /// The medians' difference, measured against predicted.
    fn median_diff(&self) -> Option<f64> {
        let (p, m) = (
            Self::spread(&self.predicted)?,
            Self::spread(&self.measured)?,
        );
        diff_share(p.median, m.median)
    }

    /// For each run, whether its prediction lies inside the measured spread.
    fn inside(&self) -> Vec<Option<bool>> {
        let spread = Self::spread(&self.measured);
        self.predicted
            .iter()
            .map(|p| Some(spread?.holds((*p)?)))
            .collect()
    }

    /// Runs predicted above what they measured, and below.
    fn over_under(&self) -> (usize, usize) {
        let pairs = self.predicted.iter().zip(&self.measured);
        let pairs: Vec<(f64, f64)> = pairs.filter_map(|(p, m)| Some(((*p)?, (*m)?))).collect();
        (
            pairs.iter().filter(|(p, m)| p > m).count(),
            pairs.iter().filter(|(p, m)| p < m).count(),
        )
    }
}

fn num(x: Option<f64>) -> String {
    x.map_or("-".to_owned(), |x| {
        if x.fract() == 0.0 {
            format!("{x:.0}")
        } else {
            format!("{x:.1}")
        }
    })
}

fn pct(d: Option<f64>) -> String {
    d.map_or("-".to_owned(), |d| format!("{:+.1}%", 100.0 * d))
}

impl Repeats<'_> {
    fn compared(&self, f: &Figure) -> Compared {
        Compared {
            predicted: self
                .runs
                .iter()
                .map(|r| (f.of)(r.verdict_model().0))
                .collect(),
            measured: self.runs.iter().map(|r| (f.of)(&r.measured)).collect(),
        }
    }

    /// The model the verdict uses: the send-rate model's when every run
    /// measured a rate, else "plain" for the runs without one.
    fn models(&self) -> Vec<&'static str> {
        self.runs.iter().map(|r| r.verdict_model().1).collect()
    }

    /// The verdict's sentence: medians of peak and calls, how many runs'
    /// predictions lie inside the measured spread, and which way they err.
    fn verdict(&self) -> String {
        let n = self.runs.len();
        let mut parts = Vec::new();
        let mut missed = Vec::new();
        for f in &FIGURES[..2] {
            let c = self.compared(f);
            let d = c.median_diff();
            if !d.is_some_and(|d| d.abs() <= WITHIN) {
                missed.push(f.name);
            }
            let inside = c.inside().iter().filter(|&&i| i == Some(true)).count();
            let (over, under) = c.over_under();
            let way = if over == n {
                format!("; every run over-predicts ({n} of {n})")
            } else if under == n {
                format!("; every run under-predicts ({n} of {n})")
            } else {
                format!("; {over} over, {under} under")
            };
            parts.push(format!(
                "{} {} (predicted inside the measured spread in {inside} of {n} runs{way})",
                f.name,
                pct(d)
            ));
        }
        let held = if missed.is_empty() {
            "both medians within 20%".to_owned()
        } else {
            format!("{} not within 20%", missed.join(" and "))
        };
        let plain = self.models().iter().filter(|&&m| m == "plain").count();
        let model = if plain == 0 {
            "the send-rate model".to_owned()
        } else {
            format!("the send-rate model ({plain} run(s) measured no rate: the plain model)")
        };
        format!(
            "verdict on the medians of {n} runs, against {model}: {}: {held}\n",
            parts.join("; ")
        )
    }

    /// The table: the first run's header, each figure run by run with its
    /// median and spread, the send rates, the verdict, and each run's warnings.
    pub(crate) fn table(&self) -> String {
        let n = self.runs.len();
        let mut out = self.runs.first().map(Comparison::header).unwrap_or_default();
        let _ = writeln!(
            out,
            "repeats: {n} runs, one after another; each run's send-rate prediction is from the rate its own first wave showed"
        );
        let rates: Vec<Option<f64>> = self
            .runs
            .iter()
            .map(|r| r.send_rate.as_ref().map(|(rate, _)| rate.per_ms()))
            .collect();
        let spread = Compared::spread(&rates);
        let _ = writeln!(
            out,
            "send rate (calls per ms): {}; median {} ({}–{})",
            rates.iter().map(|r| num(*r)).collect::<Vec<_>>().join(" "),
            num(spread.map(|s| s.median)),
            num(spread.map(|s| s.min)),
            num(spread.map(|s| s.max)),
        );
        out.push_str(&self.verdict());
        let runs: Vec<String> = (1..=n).map(|i| format!("run {i}")).collect();
        let _ = writeln!(
            out,
            "\n{:<28}{}{:>10}{:>16}{:>9}",
            "",
            runs.iter().map(|r| format!("{r:>9}")).collect::<String>(),
            "MEDIAN",
            "MIN–MAX",
            "DIFF"
        );
        for f in &FIGURES {
            let c = self.compared(f);
            let _ = writeln!(out, "{}", f.name);
            for (side, values) in [("  predicted", &c.predicted), ("  measured", &c.measured)] {
                let s = Compared::spread(values);
                let diff = if side == "  measured" {
                    pct(c.median_diff())
                } else {
                    String::new()
                };
                let _ = writeln!(
                    out,
                    "{side:<28}{}{:>10}{:>16}{diff:>9}",
                    values
                        .iter()
                        .map(|v| format!("{:>9}", num(*v)))
                        .collect::<String>(),
                    num(s.map(|s| s.median)),
                    s.map_or("-".to_owned(), |s| format!("{}–{}", num(Some(s.min)), num(Some(s.max)))),
                );
            }
            let inside: String = c
                .inside()
                .iter()
                .map(|i| {
                    let word = match i {
                        Some(true) => "yes",
                        Some(false) => "no",
                        None => "-",
                    };
                    format!("{word:>9}")
                })
                .collect();
            let _ = writeln!(out, "{:<28}{inside}", "  inside measured spread");
        }
        out.push_str(&self.differences());
        for (i, r) in self.runs.iter().enumerate() {
            for w in &r.warnings {
                let _ = writeln!(out, "run {}: warning: {w}", i + 1);
            }
        }
        out
    }

    /// Each modelled quantity, run by run: measured from the run against
    /// what the send-rate model took, and the median of those shares.
    fn differences(&self) -> String {
        let Some(first) = self.runs.iter().find(|r| !r.differences.quantities.is_empty()) else {
            return String::new();
        };
        let mut out = String::from(
            "\nwhere the send-rate model and the machine differ, run by run (measured against modelled):\n",
        );
        for (i, q) in first.differences.quantities.iter().enumerate() {
            let off: Vec<Option<f64>> = self
                .runs
                .iter()
                .map(|r| r.differences.quantities.get(i).and_then(|q| q.off_by()))
                .collect();
            let median = Compared::spread(&off).map(|s| s.median);
            let _ = writeln!(
                out,
                "{:<64}{}  median {}",
                q.name,
                off.iter().map(|d| format!("{:>9}", pct(*d))).collect::<String>(),
                pct(median)
            );
        }
        out
    }

    /// The JSON object: `fleet` (as a single run's, with `repeat`), every
    /// run's own object under `runs`, and `repeats` with each figure's
    /// values, medians, spreads and the verdict on the medians.
    pub(crate) fn json(&self) -> String {
        let runs: Vec<Value> = self.runs.iter().map(Comparison::json_value).collect();
        let mut fleet = runs.first().map(|r| r["fleet"].clone()).unwrap_or_default();
        if let Some(f) = fleet.as_object_mut() {
            f.insert("repeat".into(), json!(self.runs.len()));
        }
        let side = |values: &[Option<f64>]| {
            let s = Compared::spread(values);
            json!({
                "runs": values,
                "median": s.map(|s| s.median),
                "min": s.map(|s| s.min),
                "max": s.map(|s| s.max),
            })
        };
        let mut figures = serde_json::Map::new();
        for f in &FIGURES {
            let c = self.compared(f);
            let (over, under) = c.over_under();
            figures.insert(
                f.key.into(),
                json!({
                    "predicted": side(&c.predicted),
                    "measured": side(&c.measured),
                    "median_diff": c.median_diff(),
                    "inside_measured_spread": c.inside(),
                    "runs_over_predicted": over,
                    "runs_under_predicted": under,
                }),
            );
        }
        let within = |key: &str| {
            figures[key]["median_diff"]
                .as_f64()
                .is_some_and(|d| d.abs() <= WITHIN)
        };
        let value = json!({
            "fleet": fleet,
            "repeats": {
                "runs": self.runs.len(),
                "models": self.models(),
                "verdict": {
                    "peak_median_diff": figures["peak_retries_per_tick"]["median_diff"],
                    "calls_median_diff": figures["calls"]["median_diff"],
                    "within": WITHIN,
                    "peak_within": within("peak_retries_per_tick"),
                    "calls_within": within("calls"),
                },
                "figures": figures,
            },
            "runs": runs,
        });
        serde_json::to_string_pretty(&value).unwrap_or_default() + "\n"
    }
}
