//! `--repeat N`: the same fleet run N times, one after another. Each run
//! is measured and predicted on its own (its send-rate prediction from the
//! rate its own first wave showed); the report lists every run's figures,
//! their median and spread (min–max), and a verdict on the medians, with
//! whether each run's prediction lies inside the measured spread.
//!
//! One run cannot be the test on a shared 2-vCPU machine (five identical
//! runs moved a peak 2.15×), but a bias can: when every run errs the same
//! way, the report says so.

use super::differ::{Differences, run_by_run};
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
        let mut out = self
            .runs
            .first()
            .map(Comparison::header)
            .unwrap_or_default();
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
                    s.map_or("-".to_owned(), |s| format!(
                        "{}–{}",
                        num(Some(s.min)),
                        num(Some(s.max))
                    )),
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
        let differences: Vec<&Differences> = self.runs.iter().map(|r| &r.differences).collect();
        out.push_str(&run_by_run(&differences));
        // Each run that missed on its own, and the quantity furthest off in it.
        for (i, r) in self.runs.iter().enumerate() {
            if r.missed()
                && let Some(line) = r.differences.furthest_off_text()
            {
                let _ = writeln!(out, "run {} missed: {line}", i + 1);
            }
        }
        for (i, r) in self.runs.iter().enumerate() {
            for w in &r.warnings {
                let _ = writeln!(out, "run {}: warning: {w}", i + 1);
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::report::tests::{comparison_of, fleet_args, outcome};
    use retrykit_core::Policy;

    #[test]
    fn a_spread_has_the_median_and_the_ends() {
        let s = Spread::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.median, s.min, s.max), (2.0, 1.0, 3.0));
        // An even count: the mean of the two middle values.
        assert_eq!(Spread::of(&[4.0, 1.0, 2.0, 10.0]).unwrap().median, 3.0);
        assert_eq!(Spread::of(&[]), None);
        assert_eq!(Spread::of(&[f64::NAN]), None);
        assert!(s.holds(1.0) && s.holds(3.0) && !s.holds(3.5));
    }

    /// Three runs: predicted peaks 30, 32, 40 against measured 25, 28, 35
    /// (every run over-predicts), calls 100 predicted and 95 to 105 measured.
    fn three_runs<'a>(args: &'a FleetArgs, policy: &'a Policy) -> Repeats<'a> {
        let runs = [(30, 25, 95), (32, 28, 100), (40, 35, 105)]
            .into_iter()
            .map(|(predicted, measured, calls)| {
                let mut c = comparison_of(args, policy, true);
                let sent = &mut c.send_rate.as_mut().unwrap().1;
                *sent = outcome(&[0, predicted], 100);
                c.measured = outcome(&[0, measured], calls);
                c
            })
            .collect();
        Repeats { runs }
    }

    use crate::fleet::FleetArgs;

    #[test]
    fn the_verdict_compares_medians_and_says_which_runs_lie_inside_the_measured_spread() {
        let (args, policy) = (fleet_args(), Policy::default());
        let r = three_runs(&args, &policy);
        let table = r.table();
        // Medians 32 predicted, 28 measured: -12.5%.
        assert!(
            table.contains("verdict on the medians of 3 runs, against the send-rate model: peak retries per tick -12.5% (predicted inside the measured spread in 2 of 3 runs; every run over-predicts (3 of 3)); calls +0.0% (predicted inside the measured spread in 3 of 3 runs; 1 over, 1 under): both medians within 20%"),
            "{table}"
        );
        let line = |start: &str, after: &str| {
            let at = table
                .find(after)
                .unwrap_or_else(|| panic!("{after}: {table}"));
            table[at..]
                .lines()
                .find(|l| l.starts_with(start))
                .unwrap()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert_eq!(
            line("  predicted", "peak retries"),
            "predicted 30 32 40 32 30–40"
        );
        assert_eq!(
            line("  measured", "peak retries"),
            "measured 25 28 35 28 25–35 -12.5%"
        );
        assert_eq!(
            line("  inside measured spread", "peak retries"),
            "inside measured spread yes yes no"
        );
        assert!(table.contains("run 3: warning: something did not behave as configured"));
    }

    #[test]
    fn the_json_gives_every_run_and_each_figure_s_medians_and_spreads() {
        let (args, policy) = (fleet_args(), Policy::default());
        let v: Value = serde_json::from_str(&three_runs(&args, &policy).json()).unwrap();
        assert_eq!(v["fleet"]["repeat"], 3);
        assert_eq!(v["fleet"]["clients"], 10);
        assert_eq!(v["runs"].as_array().unwrap().len(), 3);
        assert_eq!(v["runs"][2]["measured"]["peak_retries_per_tick"], 35);
        let peak = &v["repeats"]["figures"]["peak_retries_per_tick"];
        assert_eq!(peak["predicted"]["runs"], json!([30.0, 32.0, 40.0]));
        assert_eq!(
            (
                &peak["measured"]["median"],
                &peak["measured"]["min"],
                &peak["measured"]["max"]
            ),
            (&json!(28.0), &json!(25.0), &json!(35.0))
        );
        assert_eq!(peak["median_diff"], -0.125);
        assert_eq!(peak["inside_measured_spread"], json!([true, true, false]));
        assert_eq!(
            (&peak["runs_over_predicted"], &peak["runs_under_predicted"]),
            (&json!(3), &json!(0))
        );
        let verdict = &v["repeats"]["verdict"];
        assert_eq!(verdict["peak_within"], true);
        assert_eq!(verdict["calls_median_diff"], 0.0);
        assert_eq!(
            v["repeats"]["models"],
            json!(["send_rate", "send_rate", "send_rate"])
        );
        // p50 is unknown in these outcomes: no median, and no run inside.
        let p50 = &v["repeats"]["figures"]["p50_ms"];
        assert_eq!(p50["measured"]["median"], Value::Null);
        assert_eq!(p50["inside_measured_spread"], json!([null, null, null]));
    }

    #[test]
    fn a_median_off_by_more_than_20_percent_misses() {
        let (args, policy) = (fleet_args(), Policy::default());
        let mut r = three_runs(&args, &policy);
        for c in &mut r.runs {
            c.measured.calls = 50;
        }
        // The first run measured its first wave at twice the ticks modelled.
        r.runs[0].differences = crate::fleet::differ::Differences {
            quantities: vec![crate::fleet::differ::Quantity {
                key: "first_wave_ticks",
                modelled: 3.0,
                measured: 6.0,
            }],
            rate_binds: true,
        };
        let table = r.table();
        assert!(table.contains("calls -50.0%"), "{table}");
        assert!(table.contains(": calls not within 20%\n"), "{table}");
        assert!(
            table.contains("run 1 missed: the modelled quantity furthest off is first wave (ticks) (modelled 3, measured 6, +100.0%)\n"),
            "{table}"
        );
        assert!(
            !table.contains("run 2 missed"),
            "no differences measured: {table}"
        );
    }
}
