//! A policy's chaos in a call: what the attempt about to be made draws
//! (docs/chaos.md). Asked only under a policy with chaos.

use super::{Refusal, Run};
use crate::classify::Classify;
use crate::clock::{Clock, Sleeper};
use crate::observe::{self, Event};
use crate::policy::Policy;
use std::borrow::Borrow;
use std::time::Duration;

impl<P: Borrow<Policy>, C: Clock, S: Sleeper, H> Run<P, C, S, H> {
    /// What the policy's chaos does to the attempt `begin_attempt` let
    /// through: nothing (`None`), or a delay before its closure is called
    /// and/or a fault in its place (the closure never called). A fault `E`
    /// cannot stand for is not injected, and a warning says so once per
    /// policy and type.
    pub(crate) fn inject<E: Classify>(
        &mut self,
    ) -> Option<(Option<Duration>, Option<Box<Refusal>>)> {
        let policy: &Policy = self.policy.borrow();
        let chaos = policy.chaos.as_deref()?;
        let attempt = self.tally.attempts;
        let drawn = chaos.draw(attempt);
        let fault = drawn.fault.filter(|fault| {
            let carried = E::from_chaos(*fault).is_some();
            let ty = std::any::type_name::<E>();
            if !carried && crate::say::first_time("chaos", policy.name.as_ref(), ty) {
                say_warning!(
                    format!(
                        "retry: policy `{}` injects chaos faults, but error type `{ty}` cannot \
                         stand for one (Classify::from_chaos gives None): its attempts are sent \
                         unfaulted; add a `#[classify(chaos)]` variant (or implement from_chaos) to inject them (docs/chaos.md)",
                        policy.name().unwrap_or("<unnamed>")
                    ),
                    policy = policy.name().unwrap_or("<unnamed>"),
                    error_type = ty
                );
            }
            carried
        });
        if fault.is_none() && drawn.delay.is_none() {
            return None;
        }
        self.tally.injected = self.tally.injected.saturating_add(1);
        self.faulted = fault.is_some();
        observe::emit(Event::ChaosInjected {
            policy: policy.name.as_ref(),
            fault: fault.map(|f| f.class.name()),
            delay: drawn.delay,
        });
        #[cfg(feature = "tracing")]
        tracing::debug!(
            parent: self.span(),
            attempt,
            fault = fault.map(|f| f.class.name()),
            delay_ms = drawn.delay.map(|d| d.as_millis() as u64),
            "chaos injected"
        );
        Some((drawn.delay, fault.map(|f| Box::new(Refusal::Chaos(f)))))
    }
}
