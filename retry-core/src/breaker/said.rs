//! How a breaker says its state changes: once, on stderr and as a `warn`
//! event of target `retry`, naming the breaker, the states and (on opening)
//! the ratio that tripped it. A local breaker says the changes it makes; a
//! fleet breaker's host says each change of the fleet's state it sees.

use super::BreakerState;
use super::build::Settings;
use retrykit_schema::duration::round_duration;
use std::time::Duration;

/// The breaker whose changes are said.
pub(super) struct Herald<'a> {
    pub(super) name: Option<&'a str>,
    pub(super) settings: &'a Settings,
    /// A change of the fleet's state (seen in Redis), not this process's.
    pub(super) fleet: bool,
    /// Says nothing (a simulator's breaker: [`BreakerBuilder::simulated`](super::BreakerBuilder::simulated)).
    pub(super) quiet: bool,
}

impl Herald<'_> {
    /// The breaker as messages name it.
    pub(super) fn shown(&self) -> String {
        let scope = if self.fleet { "fleet " } else { "" };
        match self.name {
            Some(name) => format!("{scope}circuit breaker `{name}`"),
            None => format!("a {scope}circuit breaker"),
        }
    }

    pub(super) fn opened(&self, failures: u64, attempts: u64, open_for: Duration) {
        let ratio = failures as f64 / attempts.max(1) as f64;
        let said = format!(
            "opened (closed -> open): {failures} of {attempts} attempts failed ({:.0}% >= \
             failure_ratio {:.0}%) in the last {}; no attempt is sent for {}",
            ratio * 100.0,
            self.settings.failure_ratio * 100.0,
            round_duration(self.settings.window),
            round_duration(open_for),
        );
        self.say(BreakerState::Closed, BreakerState::Open, &said, Some(ratio));
    }

    pub(super) fn half_open(&self) {
        let said = format!(
            "half-open (open -> half-open): letting {} probe attempt(s) through",
            self.settings.probes
        );
        self.say(BreakerState::Open, BreakerState::HalfOpen, &said, None);
    }

    pub(super) fn reopened(&self, open_for: Duration) {
        let said = format!(
            "opened again (half-open -> open): a probe failed; no attempt is sent for {}",
            round_duration(open_for),
        );
        self.say(BreakerState::HalfOpen, BreakerState::Open, &said, None);
    }

    pub(super) fn closed(&self) {
        let said = format!(
            "closed (half-open -> closed): {} probe attempt(s) succeeded",
            self.settings.probes
        );
        self.say(BreakerState::HalfOpen, BreakerState::Closed, &said, None);
    }

    /// A change between two states that skipped the one between them (a
    /// fleet host that saw neither end of a short half-open period, say).
    #[cfg(feature = "redis")]
    pub(super) fn jumped(&self, from: BreakerState, to: BreakerState) {
        let said =
            format!("{to} ({from} -> {to}; the states between passed between two round trips)");
        self.say(from, to, &said, None);
    }

    /// Says the change from `from` to `to` (`said` follows the breaker's
    /// name), with the ratio that opened it, and counts it.
    #[cfg_attr(not(feature = "tracing"), allow(unused_variables))]
    fn say(&self, from: BreakerState, to: BreakerState, said: &str, ratio: Option<f64>) {
        if self.quiet {
            return;
        }
        say_warning!(
            format!("retry: {} {said}", self.shown()),
            breaker = self.name,
            scope = (if self.fleet { "fleet" } else { "local" }),
            from = from.as_str(),
            to = to.as_str(),
            ratio
        );
        crate::observe::emit(crate::observe::Event::BreakerState {
            breaker: self.name,
            state: to.as_str(),
        });
    }
}
