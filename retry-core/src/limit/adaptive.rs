//! The adaptive controllers of a concurrency limit: pure state machines
//! that read one [`Sample`] per finished attempt and give the limit's new
//! size. No clock, no randomness and no allocation: the same samples give
//! the same limits, so the retry loop and the simulator share them.
//!
//! - [`Aimd`]: additive increase, multiplicative decrease.
//! - [`Gradient`]: scales the limit by the ratio of the dependency's
//!   no-load latency to each window's, plus a queue's headroom.

use crate::class::Class;
use crate::problem::{PolicyError, PolicyErrorKind, Problem, Problems};
use retrykit_schema::keys::Key;
use std::time::Duration;

/// The largest size an adaptive limit may take.
pub const MAX_LIMIT: u32 = super::MAX_PERMITS;

/// The fewest samples in a [`Gradient`] window, however small the limit.
pub const MIN_WINDOW: u32 = 8;

/// How one attempt ended, as a limit's controller sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A success: its latency is the dependency's.
    Answered,
    /// The attempt's timeout ran out (the `timeout` class): the dependency
    /// did not answer in time.
    Timeout,
    /// The dependency said it was overloaded (the `throttled` class).
    Throttled,
    /// Nothing to read: a failure of another class (its latency may be a
    /// refused connection's, not the dependency's work), or an attempt
    /// that was cancelled.
    Ignored,
}

impl Outcome {
    /// The outcome of an attempt that failed with `class` (`None`: succeeded).
    ///
    /// ```
    /// use retrykit_core::{Class, limit::adaptive::Outcome};
    /// assert_eq!(Outcome::of(None), Outcome::Answered);
    /// assert_eq!(Outcome::of(Some(Class::THROTTLED)), Outcome::Throttled);
    /// assert_eq!(Outcome::of(Some(Class::TRANSIENT)), Outcome::Ignored);
    /// ```
    pub fn of(class: Option<Class>) -> Self {
        match class {
            None => Outcome::Answered,
            Some(Class::TIMEOUT) => Outcome::Timeout,
            Some(Class::THROTTLED) => Outcome::Throttled,
            Some(_) => Outcome::Ignored,
        }
    }
}

/// One finished attempt: its latency, how it ended, and the attempts in
/// flight under the limit when it finished (itself included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    /// From the permit's grant to the attempt's end.
    pub latency: Duration,
    /// How it ended.
    pub outcome: Outcome,
    /// Attempts holding a permit when it finished, itself included.
    pub in_flight: u32,
}

impl Sample {
    /// A successful attempt.
    pub const fn success(latency: Duration, in_flight: u32) -> Self {
        Sample {
            latency,
            outcome: Outcome::Answered,
            in_flight,
        }
    }

    /// An attempt whose timeout ran out after `latency`.
    pub const fn timeout(latency: Duration, in_flight: u32) -> Self {
        Sample {
            latency,
            outcome: Outcome::Timeout,
            in_flight,
        }
    }

    /// An attempt the dependency throttled.
    pub const fn throttled(latency: Duration, in_flight: u32) -> Self {
        Sample {
            latency,
            outcome: Outcome::Throttled,
            in_flight,
        }
    }
}

/// The sizes every adaptive kind shares: `min <= initial <= max`, all
/// from 1 to [`MAX_LIMIT`].
fn check_sizes(problems: &mut Problems, initial: u32, min: u32, max: u32) {
    for (field, value) in [
        (Key::InitialLimit.name(), initial),
        (Key::MinLimit.name(), min),
        (Key::MaxLimit.name(), max),
    ] {
        problems.require(
            (1..=MAX_LIMIT).contains(&value),
            field,
            "must be from 1 to 1000000",
            format!("set a number of attempts in flight from 1 to 1000000 (got {value})"),
        );
    }
    problems.require(
        min <= initial && initial <= max,
        Key::InitialLimit.name(),
        "must be from min_limit to max_limit",
        format!("set min_limit <= initial_limit <= max_limit (got {min} <= {initial} <= {max})"),
    );
}

/// An [`Aimd`] controller's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AimdSettings {
    /// The size before any sample (default 20).
    pub initial: u32,
    /// The smallest size (default 1).
    pub min: u32,
    /// The largest size (default 1000).
    pub max: u32,
    /// The factor a drop cuts the size by, above 0 and below 1 (default 0.9).
    pub decrease: f64,
    /// Whether a timeout is a drop (default yes).
    pub drop_on_timeout: bool,
    /// Whether a throttled answer is a drop (default yes).
    pub drop_on_throttled: bool,
    /// An answer slower than this is a drop (default: none).
    pub drop_above: Option<Duration>,
}

impl Default for AimdSettings {
    fn default() -> Self {
        AimdSettings {
            initial: 20,
            min: 1,
            max: 1000,
            decrease: 0.9,
            drop_on_timeout: true,
            drop_on_throttled: true,
            drop_above: None,
        }
    }
}

impl AimdSettings {
    /// Every rule these settings break.
    pub fn problems(&self) -> Vec<Problem> {
        let mut problems = Problems::default();
        check_sizes(&mut problems, self.initial, self.min, self.max);
        problems.require(
            self.decrease > 0.0 && self.decrease < 1.0,
            Key::Decrease.name(),
            "must be above 0 and below 1",
            format!(
                "set the share of the limit a drop keeps, like 0.9 (got {})",
                self.decrease
            ),
        );
        problems.require(
            self.drop_above.is_none_or(|d| !d.is_zero()),
            Key::DropAbove.name(),
            "must be greater than zero",
            "set the slowest answer that is not a drop, like \"200ms\", or \"none\"".into(),
        );
        problems.durations([(Key::DropAbove.name(), self.drop_above)]);
        problems.into_vec()
    }
}

/// Additive increase, multiplicative decrease.
///
/// A good sample adds `1 / limit` when at least half the limit is in use.
/// A drop multiplies the limit by `decrease`, at most once per limit's
/// worth of samples (the attempts sent before a cut come back with its
/// load). `Outcome::Ignored` changes nothing. The limit stays within
/// `[min, max]` (docs/limits.md, Kinds).
#[derive(Debug, Clone)]
pub struct Aimd {
    settings: AimdSettings,
    limit: f64,
    /// Samples since the last cut.
    since_cut: u64,
}

impl Aimd {
    /// A controller with `settings`, or every rule they break.
    pub fn new(settings: AimdSettings) -> Result<Self, PolicyError> {
        PolicyError::check(PolicyErrorKind::Limit, None, settings.problems())?;
        Ok(Aimd {
            settings,
            limit: f64::from(settings.initial),
            since_cut: u64::MAX,
        })
    }

    /// The settings it was built with.
    pub fn settings(&self) -> &AimdSettings {
        &self.settings
    }

    /// The limit now.
    pub fn limit(&self) -> u32 {
        whole(self.limit)
    }

    /// Whether `sample` is a drop under these settings.
    pub fn is_drop(&self, sample: &Sample) -> bool {
        match sample.outcome {
            Outcome::Timeout => self.settings.drop_on_timeout,
            Outcome::Throttled => self.settings.drop_on_throttled,
            Outcome::Answered => self.settings.drop_above.is_some_and(|d| sample.latency > d),
            Outcome::Ignored => false,
        }
    }

    /// Reads one sample; the limit after it.
    pub fn on_sample(&mut self, sample: Sample) -> u32 {
        if sample.outcome == Outcome::Ignored {
            return self.limit();
        }
        self.since_cut = self.since_cut.saturating_add(1);
        let (min, max) = (f64::from(self.settings.min), f64::from(self.settings.max));
        if self.is_drop(&sample) {
            if self.since_cut as f64 >= self.limit {
                self.limit = (self.limit * self.settings.decrease).max(min);
                self.since_cut = 0;
            }
        } else if f64::from(sample.in_flight) * 2.0 >= self.limit {
            self.limit = (self.limit + 1.0 / self.limit).min(max);
        }
        self.limit()
    }
}

/// A [`Gradient`] controller's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GradientSettings {
    /// The size before any sample (default 20).
    pub initial: u32,
    /// The smallest size (default 1).
    pub min: u32,
    /// The largest size (default 1000).
    pub max: u32,
    /// How many times the no-load latency a window's average may reach
    /// before the limit shrinks: 1 to 10 (default 1).
    pub tolerance: f64,
    /// The weight of each window's new size against the old: above 0, at
    /// most 1 (default 0.2).
    pub smoothing: f64,
    /// Windows between two measurements of the no-load latency: 10 to
    /// 100000 (default 200).
    pub probe_every: u32,
}

impl Default for GradientSettings {
    fn default() -> Self {
        GradientSettings {
            initial: 20,
            min: 1,
            max: 1000,
            tolerance: 1.0,
            smoothing: 0.2,
            probe_every: 200,
        }
    }
}

impl GradientSettings {
    /// Every rule these settings break.
    pub fn problems(&self) -> Vec<Problem> {
        let mut problems = Problems::default();
        check_sizes(&mut problems, self.initial, self.min, self.max);
        problems.require(
            (1.0..=10.0).contains(&self.tolerance),
            Key::Tolerance.name(),
            "must be from 1 to 10",
            format!(
                "set how many times the no-load latency a window may take before the limit shrinks, like 1 (got {})",
                self.tolerance
            ),
        );
        problems.require(
            self.smoothing > 0.0 && self.smoothing <= 1.0,
            Key::Smoothing.name(),
            "must be above 0 and at most 1",
            format!(
                "set the weight of each window's new limit, like 0.2 (got {})",
                self.smoothing
            ),
        );
        problems.require(
            (10..=100_000).contains(&self.probe_every),
            Key::LimitProbeEvery.name(),
            "must be from 10 to 100000",
            format!(
                "set how many windows pass between two measurements of the no-load latency, like 200 (got {})",
                self.probe_every
            ),
        );
        problems.into_vec()
    }
}

/// Windows a probe of the no-load latency holds the limit low: the
/// attempts sent before the cut come back in the first two, and the third
/// sees the dependency with less load.
pub const PROBE_WINDOWS: u32 = 3;

/// Windows after which a probe that found the no-load latency a tenth or
/// more below the estimate before it (the estimate was taken under load)
/// is followed by another.
pub const REPROBE_AFTER: u32 = 10;

/// A gradient controller, after Netflix's Gradient2 and Envoy's adaptive
/// concurrency filter.
///
/// Samples are read in windows of `max(limit, MIN_WINDOW)` samples (about
/// one round trip each); timeouts and throttled answers are counted but
/// have no latency. At a window's end:
///
/// 1. `short` is the window's average latency, and `noload`, the
///    estimate of the dependency's latency without load, the lowest
///    window average since the last probe began;
/// 2. a window where under half the limit was in use changes nothing (a
///    limit that is not used is not measured);
/// 3. `gradient = clamp(tolerance * noload / short, 0.5, 1)`, and 0.5 when
///    the window held a timeout or a throttled answer;
/// 4. `new = limit * gradient + sqrt(limit)`: the headroom lets a queue of
///    about `sqrt(limit)` form, so that a dependency with room shows it;
/// 5. `limit = limit * (1 - smoothing) + new * smoothing`, within `[min, max]`.
///
/// Every `probe_every` windows a probe holds the limit at `limit /
/// tolerance - 2 * sqrt(limit)` for [`PROBE_WINDOWS`] windows, `noload`
/// restarts from what they see, and the limit goes back; the first windows
/// measure `noload` so at `initial_limit`. A probe that finds `noload` a
/// tenth or more lower is followed by another after [`REPROBE_AFTER`]
/// windows. Why, and where the limit settles: docs/limits.md (How the
/// gradient finds the no-load latency).
#[derive(Debug, Clone)]
pub struct Gradient {
    settings: GradientSettings,
    limit: f64,
    /// The no-load latency estimate, in seconds; 0 before the first window.
    noload: f64,
    /// Windows since the last probe began.
    windows: u32,
    /// Windows the probe under way still holds; 0 when none is.
    probing: u32,
    /// The limit to go back to when the probe ends.
    resume: f64,
    /// The estimate before the probe under way (infinite before the first).
    before: f64,
    window: Window,
}

/// One window's sums.
#[derive(Debug, Clone, Copy, Default)]
struct Window {
    count: u32,
    answered: u32,
    sum: f64,
    max_in_flight: u32,
    dropped: bool,
}

impl Gradient {
    /// A controller with `settings`, or every rule they break.
    pub fn new(settings: GradientSettings) -> Result<Self, PolicyError> {
        PolicyError::check(PolicyErrorKind::Limit, None, settings.problems())?;
        let limit = f64::from(settings.initial);
        Ok(Gradient {
            settings,
            limit,
            noload: 0.0,
            windows: 0,
            probing: PROBE_WINDOWS,
            resume: limit,
            before: f64::INFINITY,
            window: Window::default(),
        })
    }

    /// The settings it was built with.
    pub fn settings(&self) -> &GradientSettings {
        &self.settings
    }

    /// The limit now.
    pub fn limit(&self) -> u32 {
        whole(self.limit)
    }

    /// The no-load latency estimate; `None` before the first window ends.
    pub fn noload(&self) -> Option<Duration> {
        (self.noload > 0.0).then(|| Duration::from_secs_f64(self.noload))
    }

    /// Reads one sample; the limit after it.
    pub fn on_sample(&mut self, sample: Sample) -> u32 {
        let w = &mut self.window;
        match sample.outcome {
            Outcome::Ignored => return self.limit(),
            Outcome::Timeout | Outcome::Throttled => w.dropped = true,
            Outcome::Answered => {
                w.answered += 1;
                w.sum += sample.latency.as_secs_f64();
            }
        }
        w.count += 1;
        w.max_in_flight = w.max_in_flight.max(sample.in_flight);
        if w.count >= self.limit().max(MIN_WINDOW) {
            let window = std::mem::take(&mut self.window);
            self.close(window);
        }
        self.limit()
    }

    /// A window ended: the estimate and the limit move.
    fn close(&mut self, w: Window) {
        let short = (w.answered > 0).then(|| w.sum / f64::from(w.answered));
        if let Some(short) = short.filter(|&s| s > 0.0) {
            let fresh = self.probing == PROBE_WINDOWS;
            self.noload = if fresh || self.noload == 0.0 {
                short
            } else {
                self.noload.min(short)
            };
        }
        self.windows = self.windows.saturating_add(1);
        if self.probing > 0 {
            self.probing -= 1;
            if self.probing == 0 {
                self.limit = self.resume;
                if self.noload < 0.9 * self.before {
                    self.windows = self.settings.probe_every.saturating_sub(REPROBE_AFTER);
                }
            }
            return;
        }
        if self.windows >= self.settings.probe_every {
            let (limit, min) = (self.limit, f64::from(self.settings.min));
            self.windows = 0;
            self.probing = PROBE_WINDOWS;
            self.resume = limit;
            self.before = self.noload;
            self.limit = (limit / self.settings.tolerance - 2.0 * limit.sqrt()).max(min);
            return;
        }
        if f64::from(w.max_in_flight) * 2.0 < self.limit && !w.dropped {
            return;
        }
        let gradient = match short {
            _ if w.dropped => 0.5,
            Some(short) if short > 0.0 => {
                (self.settings.tolerance * self.noload / short).clamp(0.5, 1.0)
            }
            _ => return,
        };
        let new = self.limit * gradient + self.limit.sqrt();
        let s = self.settings.smoothing;
        self.limit = (self.limit * (1.0 - s) + new * s)
            .clamp(f64::from(self.settings.min), f64::from(self.settings.max));
    }
}

/// Either adaptive controller.
#[derive(Debug, Clone)]
pub enum Controller {
    /// Additive increase, multiplicative decrease.
    Aimd(Aimd),
    /// The latency gradient.
    Gradient(Gradient),
}

impl Controller {
    /// Reads one sample; the limit after it.
    pub fn on_sample(&mut self, sample: Sample) -> u32 {
        match self {
            Controller::Aimd(c) => c.on_sample(sample),
            Controller::Gradient(c) => c.on_sample(sample),
        }
    }

    /// The limit now.
    pub fn limit(&self) -> u32 {
        match self {
            Controller::Aimd(c) => c.limit(),
            Controller::Gradient(c) => c.limit(),
        }
    }

    /// The kind's name, as files spell it: `aimd` or `gradient`.
    pub fn kind(&self) -> &'static str {
        match self {
            Controller::Aimd(_) => "aimd",
            Controller::Gradient(_) => "gradient",
        }
    }
}

/// A size as a whole number of permits: rounded down, at least 1.
fn whole(limit: f64) -> u32 {
    (limit as u32).max(1)
}

#[cfg(test)]
mod tests;
