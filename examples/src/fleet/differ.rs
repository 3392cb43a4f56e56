//! Where the send-rate model and this run's machine differ, each modelled
//! quantity set against what the run itself measured.
//!
//! The send-rate model takes one number from the run, the rate (the first
//! wave's busiest tick over the tick), and assumes three things of it:
//! that the machine sends retries waiting in its queue at that same rate;
//! that it sends its queue in order, so no retry goes out before the last
//! first call; and so that the first wave lasts as long as the rate says.
//! Each is checked here from the server's own counts: what a typical
//! whole tick of the first wave held (the rate is its busiest), how many calls
//! reached it in the ticks after the first wave in which most calls came
//! later than their timer allowed (calls were waiting, so the tick shows
//! the rate), how many retries arrived while the first wave was still
//! arriving, and how many ticks it took. None of this feeds the prediction:
//! it says, after the fact, which assumption a missed peak breaks and by
//! how much.
//!
//! The model also has no stalls: a machine that stops for a tick sends
//! that tick's retries in the next, so the measured peak can be a burst
//! after a stall while the retries around it are as many as modelled. Two
//! quantities, read around the measured peak, tell a stall from a model
//! that sends too few: the retries in the tick before the peak, and those
//! in the seven ticks around it.

use super::outcome::Outcome;
use super::server::ServerCounts;
use serde_json::{Value, json};
use std::fmt::Write;

/// The modelled quantities, in the order reports list them: key, name,
/// and whether it is the send rate (which matters to the peak only where
/// the rate binds it).
pub(crate) const QUANTITIES: [(&str, &str, bool); 10] = [
    (
        "first_wave_median_tick",
        "send rate in the first wave, median whole tick",
        true,
    ),
    (
        "waiting_busiest_tick",
        "send rate for calls waiting after the first wave, busiest tick",
        true,
    ),
    ("waiting_median_tick", "  median tick", true),
    (
        "waiting_ticks",
        "ticks with calls waiting after the first wave",
        true,
    ),
    ("first_wave_ticks", "first wave (ticks)", false),
    (
        "first_wave_retries",
        "retries arriving during the first wave",
        false,
    ),
    (
        "quiet_ticks",
        "ticks without a retry (the timer model's skipped steps)",
        false,
    ),
    ("retries", "retries", false),
    (
        "before_peak",
        "retries in the tick before the measured peak",
        false,
    ),
    (
        "around_peak",
        "retries in the 7 ticks around the measured peak",
        false,
    ),
];

/// Ticks each side of the measured peak that `around_peak` sums.
const AROUND_PEAK: usize = 3;

/// One modelled quantity: what the model took, what the run showed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Quantity {
    /// Its key in the JSON and in [`QUANTITIES`].
    pub(crate) key: &'static str,
    pub(crate) modelled: f64,
    pub(crate) measured: f64,
}

impl Quantity {
    /// Measured against modelled, as a share of modelled (`None` when
    /// nothing was modelled).
    pub(crate) fn off_by(&self) -> Option<f64> {
        super::report::diff_share(self.modelled, self.measured)
    }

    /// Its name, as the report prints it.
    pub(crate) fn name(&self) -> &'static str {
        QUANTITIES
            .iter()
            .find(|(k, _, _)| *k == self.key)
            .map_or(self.key, |(_, name, _)| name)
    }

    /// Whether it is the send rate's.
    fn of_the_rate(&self) -> bool {
        QUANTITIES
            .iter()
            .any(|(k, _, rate)| *k == self.key && *rate)
    }
}

/// The modelled quantities of one run (those the run could measure);
/// empty when no send rate was measured.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Differences {
    pub(crate) quantities: Vec<Quantity>,
    /// Whether the rate bound the prediction: the model's queue kept the
    /// machine busy for a whole tick after the first wave.
    pub(crate) rate_binds: bool,
}

/// A tick counts as one with calls waiting when at least this share of
/// its calls arrived later than their timer allowed.
const WAITING_SHARE: f64 = 0.5;

/// The upper median of sorted values.
fn median(sorted: &[u64]) -> Option<u64> {
    sorted.get(sorted.len() / 2).copied()
}

impl Differences {
    /// Sets `predicted` (the send-rate model at `per_tick` calls a tick)
    /// against what `server` counted and `measured` shows.
    pub(crate) fn of(
        server: &ServerCounts,
        predicted: &Outcome,
        measured: &Outcome,
        per_tick: f64,
    ) -> Self {
        let wave = server.first_wave_ticks();
        let at = |v: &[u32], t: usize| u64::from(v.get(t).copied().unwrap_or(0));
        let calls = |t: usize| at(&server.first_calls, t) + at(&server.retries, t);
        let ticks = server.first_calls.len().max(server.retries.len());
        let mut waiting: Vec<u64> = (wave..ticks)
            .filter(|&t| {
                let n = calls(t);
                n > 0 && at(&server.late, t) as f64 >= WAITING_SHARE * n as f64
            })
            .map(calls)
            .collect();
        waiting.sort_unstable();
        // The first wave's ticks but its last (cut short when the wave
        // ended): what the machine sent in a typical whole tick of it,
        // beside the busiest one the rate is.
        let mut whole: Vec<u64> = (0..wave.saturating_sub(1)).map(calls).collect();
        whole.sort_unstable();
        let predicted_retries = predicted
            .arrivals
            .bins()
            .take(usize::try_from(predicted.first_wave_ticks).unwrap_or(usize::MAX))
            .map(|b| b.calls)
            .sum::<u64>();
        let full_ticks = predicted.full_ticks_after_wave(per_tick);
        let q = |key, modelled: f64, measured: Option<u64>| {
            measured.map(|m| Quantity {
                key,
                modelled,
                measured: m as f64,
            })
        };
        let quantities = [
            q("first_wave_median_tick", per_tick, median(&whole)),
            q("waiting_busiest_tick", per_tick, waiting.last().copied()),
            q("waiting_median_tick", per_tick, median(&waiting)),
            q(
                "waiting_ticks",
                full_ticks as f64,
                Some(waiting.len() as u64),
            ),
            q(
                "first_wave_ticks",
                predicted.first_wave_ticks as f64,
                Some(wave as u64),
            ),
            q(
                "first_wave_retries",
                predicted_retries as f64,
                Some((0..wave).map(|t| at(&server.retries, t)).sum()),
            ),
            q(
                "quiet_ticks",
                predicted.shape.quiet_ticks as f64,
                Some(measured.shape.quiet_ticks),
            ),
            q("retries", predicted.retries as f64, Some(measured.retries)),
        ];
        let around = around_peak(predicted, measured, |t| at(&server.retries, t));
        let quantities = quantities.into_iter().chain(around);
        Differences {
            quantities: quantities.flatten().collect(),
            rate_binds: full_ticks > 0,
        }
    }

    /// The quantity furthest off among those that bear on the peak: the
    /// send rate's only where it bound the prediction.
    pub(crate) fn furthest_off(&self) -> Option<(&Quantity, f64)> {
        self.quantities
            .iter()
            .filter(|q| self.rate_binds || !q.of_the_rate())
            .filter_map(|q| Some((q, q.off_by()?)))
            .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()))
    }

    /// Each quantity beside what this run measured of it, and, when the
    /// run `missed` (peak or calls not within 20%), the one furthest off.
    pub(crate) fn text(&self, missed: bool) -> String {
        if self.quantities.is_empty() {
            return String::new();
        }
        let mut out = String::from(
            "where the send-rate model and this run differ (modelled, measured from this run, off by):\n",
        );
        for q in &self.quantities {
            let _ = writeln!(
                out,
                "  {:<64}{:>9.0}{:>9.0}{:>9}",
                q.name(),
                q.modelled,
                q.measured,
                share(q.off_by())
            );
        }
        if missed && let Some(line) = self.furthest_off_text() {
            let _ = writeln!(out, "missed: {line}");
        }
        out
    }

    /// The quantity furthest off, in words with both values, if any.
    pub(crate) fn furthest_off_text(&self) -> Option<String> {
        let (q, d) = self.furthest_off()?;
        Some(format!(
            "the modelled quantity furthest off is {} (modelled {:.0}, measured {:.0}, {})",
            q.name().trim(),
            q.modelled,
            q.measured,
            share(Some(d))
        ))
    }

    /// The JSON object, one entry per quantity.
    pub(crate) fn json(&self) -> Value {
        let map: serde_json::Map<String, Value> = self
            .quantities
            .iter()
            .map(|q| {
                (
                    q.key.to_owned(),
                    json!({ "modelled": q.modelled, "measured": q.measured, "off_by": q.off_by() }),
                )
            })
            .collect();
        let mut map = map;
        map.insert("rate_binds".into(), Value::Bool(self.rate_binds));
        Value::Object(map)
    }
}

/// `before_peak` and `around_peak`: the prediction's retries in the
/// ticks before and around the measured peak's tick, against the run's
/// (`retries` of a tick). None when the peak is in the first tick after
/// tick 0, or the prediction's histogram merged ticks into bins.
fn around_peak(
    predicted: &Outcome,
    measured: &Outcome,
    retries: impl Fn(usize) -> u64,
) -> [Option<Quantity>; 2] {
    let peak = usize::try_from(measured.peak_tick).unwrap_or(usize::MAX);
    if peak < 2 || predicted.arrivals.bin_ticks() != 1 {
        return [None, None];
    }
    let modelled: Vec<u64> = predicted.arrivals.bins().map(|b| b.calls).collect();
    let model = |t: usize| modelled.get(t).copied().unwrap_or(0);
    let ticks = peak.saturating_sub(AROUND_PEAK).max(1)..=peak.saturating_add(AROUND_PEAK);
    let sum = |f: &dyn Fn(usize) -> u64| ticks.clone().map(f).sum::<u64>() as f64;
    [
        Some(Quantity {
            key: "before_peak",
            modelled: model(peak - 1) as f64,
            measured: retries(peak - 1) as f64,
        }),
        Some(Quantity {
            key: "around_peak",
            modelled: sum(&model),
            measured: sum(&retries),
        }),
    ]
}

fn share(d: Option<f64>) -> String {
    d.map_or("-".to_owned(), |d| format!("{:+.1}%", 100.0 * d))
}

/// Each modelled quantity, run by run: measured from the run against
/// what the send-rate model took, and the median of those shares.
pub(crate) fn run_by_run(runs: &[&Differences]) -> String {
    if runs.iter().all(|d| d.quantities.is_empty()) {
        return String::new();
    }
    let mut out = String::from(
        "\nwhere the send-rate model and the machine differ, run by run (measured against modelled):\n",
    );
    for (key, name, _) in QUANTITIES {
        let off: Vec<f64> = runs
            .iter()
            .map(|d| {
                let q = d.quantities.iter().find(|q| q.key == key);
                q.and_then(Quantity::off_by).unwrap_or(f64::NAN)
            })
            .collect();
        let median = super::repeats::Spread::of(&off).map(|s| s.median);
        let each: String = off
            .iter()
            .map(|&d| format!("{:>9}", share(Some(d).filter(|d| d.is_finite()))))
            .collect();
        let _ = writeln!(out, "{name:<64}{each}  median {}", share(median));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_quantity_is_read_from_the_run_s_own_counts() {
        // A first wave over ticks 0..3 with 40 retries beside it, then
        // ticks in which most calls came late (calls were waiting): 250,
        // 240 and 260, against a model that sends 300 a tick.
        let server = ServerCounts {
            first_calls: vec![300, 280, 20, 0, 0, 0, 0],
            retries: vec![0, 10, 30, 250, 240, 260, 100],
            late: vec![0, 0, 0, 200, 230, 250, 10],
            ..Default::default()
        };
        let mut predicted = Outcome::from_series(&[0, 0, 0, 300, 300, 300, 300, 100], 8);
        predicted.first_wave_ticks = 2;
        let measured = Outcome::from_series(&[0, 10, 30, 250, 240, 260, 100], 8);
        let d = Differences::of(&server, &predicted, &measured, 300.0);
        let q = |key: &str| {
            let q = d.quantities.iter().find(|q| q.key == key).unwrap();
            (q.modelled, q.measured)
        };
        // The first wave's whole ticks held 300 and 290: the median of two
        // is the upper one.
        assert_eq!(q("first_wave_median_tick"), (300.0, 300.0));
        assert_eq!(q("waiting_busiest_tick"), (300.0, 260.0));
        assert_eq!(q("waiting_median_tick"), (300.0, 250.0));
        // The model kept its queue full for 4 ticks after its first wave;
        // the run had calls waiting in 3 (the last tick's calls were on time).
        assert_eq!(q("waiting_ticks"), (4.0, 3.0));
        assert_eq!(q("first_wave_ticks"), (2.0, 3.0));
        assert_eq!(q("first_wave_retries"), (0.0, 40.0));
        assert_eq!(q("retries"), (1300.0, 890.0));
        // Around the measured peak (tick 5, 260): the tick before it and
        // ticks 2 to 8.
        assert_eq!(q("before_peak"), (300.0, 240.0));
        assert_eq!(q("around_peak"), (1300.0, 880.0));
        let busiest = &d.quantities[1];
        assert!((busiest.off_by().unwrap() + 0.1333).abs() < 1e-3);
        assert_eq!(
            busiest.name(),
            "send rate for calls waiting after the first wave, busiest tick"
        );
        // The rate bound the prediction; furthest off: the first wave,
        // 3 ticks measured against 2 modelled.
        assert!(d.rate_binds);
        assert_eq!(
            d.furthest_off().map(|(q, _)| q.key),
            Some("first_wave_ticks")
        );
        let v = d.json();
        assert_eq!(v["first_wave_retries"]["off_by"], Value::Null);
        assert_eq!(v["waiting_ticks"]["measured"], 3.0);
    }
}

#[cfg(test)]
mod unbound {
    use super::*;

    #[test]
    fn where_the_rate_did_not_bind_its_quantities_are_not_blamed_and_unmeasured_ones_are_left_out()
    {
        // A first wave in one tick, and no tick after it with calls waiting.
        let server = ServerCounts {
            first_calls: vec![500, 0, 0],
            retries: vec![0, 8, 70],
            late: vec![0, 0, 0],
            ..Default::default()
        };
        let mut predicted = Outcome::from_series(&[0, 10, 76], 8);
        predicted.first_wave_ticks = 1;
        let measured = Outcome::from_series(&[0, 8, 70], 8);
        let d = Differences::of(&server, &predicted, &measured, 500.0);
        assert!(!d.rate_binds);
        let keys: Vec<&str> = d.quantities.iter().map(|q| q.key).collect();
        assert_eq!(
            keys,
            [
                "waiting_ticks",
                "first_wave_ticks",
                "first_wave_retries",
                "quiet_ticks",
                "retries",
                "before_peak",
                "around_peak"
            ]
        );
        assert_eq!(d.furthest_off().map(|(q, _)| q.key), Some("before_peak"));
        // A run that missed names it, with both values; one that held does not.
        let text = d.text(true);
        assert!(
            text.contains("missed: the modelled quantity furthest off is retries in the tick before the measured peak (modelled 10, measured 8, -20.0%)"),
            "{text}"
        );
        assert!(!d.text(false).contains("missed"));
        // Run by run, a quantity a run could not measure shows as "-".
        let bound = Differences {
            quantities: vec![Quantity {
                key: "waiting_busiest_tick",
                modelled: 100.0,
                measured: 90.0,
            }],
            rate_binds: true,
        };
        let table = run_by_run(&[&bound, &d]);
        let line = table
            .lines()
            .find(|l| l.starts_with("send rate for calls waiting"))
            .unwrap();
        assert!(line.ends_with("-10.0%        -  median -10.0%"), "{table}");
    }
}

#[cfg(test)]
mod stall {
    use super::*;

    #[test]
    fn a_peak_after_a_stall_names_the_stalled_tick_while_the_ticks_around_it_agree() {
        // The model sends 600 retries a tick, well under the rate (2000 a
        // tick, which so binds nothing); the machine stalls in tick
        // 5 (40) and sends the rest in tick 6 (1160), the measured peak,
        // twice the model's: the seven ticks around it hold as many as
        // modelled, and the tick before it is the quantity furthest off.
        let modelled = [0, 600, 600, 600, 600, 600, 600, 600, 600, 600, 600];
        let run = [0, 600, 600, 600, 600, 40, 1160, 600, 600, 600, 600];
        let server = ServerCounts {
            first_calls: vec![600],
            retries: run.iter().map(|&n| n as u32).collect(),
            late: vec![0; run.len()],
            ..Default::default()
        };
        let mut predicted = Outcome::from_series(&modelled, 16);
        predicted.first_wave_ticks = 1;
        let measured = Outcome::from_series(&run, 16);
        assert_eq!(measured.peak_tick, 6);
        let d = Differences::of(&server, &predicted, &measured, 2000.0);
        assert!(!d.rate_binds);
        let q = |key: &str| d.quantities.iter().find(|q| q.key == key).cloned().unwrap();
        assert_eq!(q("around_peak").off_by(), Some(0.0));
        assert_eq!(
            (q("before_peak").modelled, q("before_peak").measured),
            (600.0, 40.0)
        );
        assert_eq!(d.furthest_off().map(|(q, _)| q.key), Some("before_peak"));
    }
}
