//! A fleet breaker's round trip (`fleet/breaker.lua`): what a host sends,
//! and how it takes the fleet's answer (its state, the probes leased).

use super::super::said;
use super::super::state::{Phase, Word};
use super::{FAILED, GIVEN_BACK, SUCCEEDED, Shared, held_in};
use crate::breaker::{BreakerState, ms_since};
use crate::fleet::{FleetState, Health, Round};
use std::sync::atomic::Ordering;
use std::time::Duration;

/// What a round trip took: closed attempts and failures (counted in the
/// view's period) and the probe answers.
pub(super) struct Taken {
    attempts: u64,
}

impl Round for Shared {
    type Taken = Taken;
    type Reply = Vec<u64>;
    const SCRIPT: &'static str = include_str!("../../fleet/breaker.lua");
    const WHAT: &'static str = "breaker";

    fn health(&self) -> &Health {
        &self.health
    }

    fn key(&self) -> String {
        self.health.options.breaker_key()
    }

    fn take(&self, invocation: &mut redis::ScriptInvocation<'_>) -> Taken {
        let view = Word(self.view.load(Ordering::Acquire));
        let period = u64::from(view.period());
        let attempts = self.attempts.swap(0, Ordering::AcqRel);
        let failures = self.failures.swap(0, Ordering::AcqRel).min(attempts);
        let answers = self.answers.swap(0, Ordering::AcqRel);
        let answers = if answers >> 48 == period { answers } else { 0 };
        let field = |shift: u32| (answers >> shift) & 0xFFFF;
        let demand = self.demand.swap(0, Ordering::AcqRel);
        let wanting = demand.max(self.demand_last.swap(demand, Ordering::AcqRel));
        let held = self.held.load(Ordering::Acquire);
        let holding = held_in(held, period);
        // Leases no call asked for in two rounds go back to the fleet.
        let unused = if wanting == 0
            && holding > 0
            && self
                .held
                .compare_exchange(held, period << 32, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        {
            holding
        } else {
            0
        };
        let probes = u64::from(self.settings.probes);
        let wanted = wanting.min(probes).saturating_sub(holding);
        let s = &self.settings;
        let sample = crate::rng::sample(self.seed, u32::from(view.period()));
        let released = self
            .released
            .each_ref()
            .map(|n| n.swap(0, Ordering::AcqRel));
        let places = self.places.load(Ordering::Acquire);
        let places_wanted = self
            .places_demand
            .swap(0, Ordering::AcqRel)
            .saturating_sub(places);
        invocation
            .arg(period)
            .arg(attempts)
            .arg(failures)
            .arg(period)
            .arg(field(SUCCEEDED))
            .arg(field(FAILED))
            .arg(field(GIVEN_BACK) + unused)
            .arg(wanted)
            .arg(s.failure_ratio)
            .arg(s.min_calls)
            .arg(u64::try_from(s.window.as_micros()).unwrap_or(u64::MAX))
            // probe_every bounds every open period, the fleet's too.
            .arg(s.open_for.min(s.probe_every).as_secs_f64() * 1000.0)
            .arg(s.max_open_for.min(s.probe_every).as_secs_f64() * 1000.0)
            .arg(s.open_jitter)
            .arg(s.probes)
            .arg(sample.as_f64())
            .arg("")
            .arg(s.release_ramp.as_secs_f64() * 1000.0)
            .arg(released[0])
            .arg(released[1])
            .arg(places_wanted)
            .arg(self.health.options.refresh().as_secs_f64() * 1000.0);
        Taken { attempts }
    }

    fn answered(&self, taken: Taken, reply: Vec<u64>) {
        let [
            phase,
            trips,
            period,
            remaining,
            out,
            ok,
            granted,
            attempts,
            failures,
            releasing,
            places,
            release_rate,
        ] = reply[..]
        else {
            return self.unanswered(taken);
        };
        let now = crate::window::now();
        let period = (period & 0xFF) as u8;
        let phase = match phase {
            0 => Phase::Closed { from: 0 },
            1 => Phase::Open {
                until_ms: ms_since(self.origin, now).saturating_add(remaining),
            },
            _ => Phase::HalfOpen {
                out: u32::try_from(out).unwrap_or(u32::MAX),
                ok: u32::try_from(ok).unwrap_or(u32::MAX),
            },
        };
        let next = Word::at(period, u32::try_from(trips).unwrap_or(u32::MAX), phase);
        let before = Word(self.view.swap(next.0, Ordering::AcqRel));
        let _ = self
            .held
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
                let kept = held_in(held, u64::from(period));
                Some(u64::from(period) << 32 | kept.saturating_add(granted).min(0xFFFF_FFFF))
            });
        // The fleet's release: places leased to this host, kept while it
        // lasts; none once it is over.
        let releasing = matches!(phase, Phase::Closed { .. }) && releasing == 1;
        self.releasing.store(releasing, Ordering::Release);
        self.release_rate
            .store(if releasing { release_rate } else { 0 }, Ordering::Relaxed);
        if releasing {
            self.places.fetch_add(places, Ordering::AcqRel);
            self.release_leased.fetch_add(places, Ordering::Relaxed);
        } else {
            self.places.store(0, Ordering::Release);
        }
        self.totals[0].store(attempts, Ordering::Relaxed);
        self.totals[1].store(failures, Ordering::Relaxed);
        self.probes_leased.fetch_add(granted, Ordering::Relaxed);
        self.attempts_sent
            .fetch_add(taken.attempts, Ordering::Relaxed);
        if before.period() != next.period() || before.phase().state() != next.phase().state() {
            self.said_change(
                before,
                next,
                attempts,
                failures,
                Duration::from_millis(remaining),
            );
        }
    }

    fn unanswered(&self, _taken: Taken) {
        if self.health.state() == FleetState::Fleet {
            self.fallen.store(true, Ordering::Release);
        }
    }

    fn said(&self, failing: bool, message: &str) {
        let fleet_state = self.view().phase().state().as_str();
        let message = if failing && self.releasing.load(Ordering::Acquire) {
            format!(
                "{message}; the release after the fleet's close goes on at this host's own rate, from its first step"
            )
        } else if failing {
            message.to_owned()
        } else {
            format!("{message} (the fleet's state: {fleet_state})")
        };
        say_warning!(
            message,
            breaker = self.name.as_deref(),
            state = (if failing { "failing_open" } else { "fleet" }),
            fleet_state = fleet_state
        );
    }
}

impl Shared {
    fn view(&self) -> Word {
        Word(self.view.load(Ordering::Acquire))
    }

    /// Says the fleet's change from `before` to `next`, once on this host.
    fn said_change(&self, before: Word, next: Word, attempts: u64, failures: u64, open: Duration) {
        use BreakerState::{Closed, HalfOpen, Open};
        let herald = said::Herald {
            name: self.name.as_deref(),
            settings: &self.settings,
            fleet: true,
            quiet: false,
        };
        match (before.phase().state(), next.phase().state()) {
            (Closed, Open) => herald.opened(failures, attempts, open),
            (Open, HalfOpen) => herald.half_open(),
            (HalfOpen | Open, Open) => herald.reopened(open),
            (HalfOpen, Closed) => herald.closed(),
            // A fresh half-open period (places taken back) or a closed
            // period after one this host never saw: nothing to say.
            (HalfOpen, HalfOpen) | (Closed, Closed) => {}
            (from, to) => herald.jumped(from, to),
        }
    }
}
