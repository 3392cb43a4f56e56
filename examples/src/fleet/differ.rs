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

use super::outcome::Outcome;
use super::server::ServerCounts;
use serde_json::{Value, json};

/// One modelled quantity: what the model took, what the run showed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Quantity {
    /// Its name, as the report prints it.
    pub(crate) name: &'static str,
    /// Its key in the JSON.
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
}

/// The modelled quantities of one run; empty when no send rate was measured.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Differences {
    pub(crate) quantities: Vec<Quantity>,
}

/// A tick counts as one with calls waiting when at least this share of
/// its calls arrived later than their timer allowed.
const WAITING_SHARE: f64 = 0.5;

impl Differences {
    /// Sets `predicted` (the send-rate model at `per_tick` calls a tick)
    /// against what `server` counted.
    pub(crate) fn of(server: &ServerCounts, predicted: &Outcome, per_tick: f64) -> Self {
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
        let busiest = waiting.last().copied().unwrap_or(0);
        let median = waiting.get(waiting.len() / 2).copied().unwrap_or(0);
        let first_wave_retries: u64 = (0..wave).map(|t| at(&server.retries, t)).sum();
        // The first wave's ticks but its last (cut short when the wave
        // ended): what the machine sent in a typical whole tick of it,
        // beside the busiest one the rate is.
        let mut whole: Vec<u64> = (0..wave.saturating_sub(1)).map(calls).collect();
        whole.sort_unstable();
        let typical = whole.get(whole.len() / 2).copied();
        let predicted_retries = predicted
            .arrivals
            .bins()
            .take(predicted.first_wave_ticks as usize)
            .map(|b| b.calls)
            .sum::<u64>();
        Differences {
            quantities: vec![
                Quantity {
                    name: "send rate in the first wave, median whole tick",
                    key: "first_wave_median_tick",
                    modelled: per_tick,
                    measured: typical.unwrap_or(0) as f64,
                },
                Quantity {
                    name: "send rate for calls waiting after the first wave, busiest tick",
                    key: "waiting_busiest_tick",
                    modelled: per_tick,
                    measured: busiest as f64,
                },
                Quantity {
                    name: "  median tick",
                    key: "waiting_median_tick",
                    modelled: per_tick,
                    measured: median as f64,
                },
                Quantity {
                    name: "ticks with calls waiting after the first wave",
                    key: "waiting_ticks",
                    modelled: predicted.full_ticks_after_wave(per_tick) as f64,
                    measured: waiting.len() as f64,
                },
                Quantity {
                    name: "first wave (ticks)",
                    key: "first_wave_ticks",
                    modelled: predicted.first_wave_ticks as f64,
                    measured: wave as f64,
                },
                Quantity {
                    name: "retries arriving during the first wave",
                    key: "first_wave_retries",
                    modelled: predicted_retries as f64,
                    measured: first_wave_retries as f64,
                },
            ],
        }
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
        Value::Object(map)
    }
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
        let d = Differences::of(&server, &predicted, 300.0);
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
        let busiest = &d.quantities[1];
        assert!((busiest.off_by().unwrap() + 0.1333).abs() < 1e-3);
        let v = d.json();
        assert_eq!(v["first_wave_retries"]["off_by"], Value::Null);
        assert_eq!(v["waiting_ticks"]["measured"], 3.0);
    }
}
