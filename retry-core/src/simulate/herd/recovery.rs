//! The herd once the service is back: calls compete for `capacity` per
//! tick, so clients must be run tick by tick, in the order they were
//! scheduled, the first `capacity` of each tick getting through.

use super::tally::Tally;
use super::{Ctx, TickQueue};
use crate::classify::Class;
use crate::decide::{Decider, Failure, Step};

/// Runs the clients in `queue` until each has succeeded or given up, or the
/// horizon or call limit stops the run.
pub(super) fn run(ctx: &Ctx<'_>, tally: &mut Tally, queue: &mut TickQueue<Decider>) {
    // Calls over capacity are turned away as throttled (a 429 or a 503 with
    // no hint); calls during the outage never reach here.
    let throttled = Failure {
        class: Class::THROTTLED,
        hint: None,
        allowed: true,
    };
    while let Some((tick, mut clients)) = queue.pop() {
        let arrivals = clients.len() as u64;
        if tick >= ctx.horizon_ticks || tally.calls.saturating_add(arrivals) > ctx.max_calls {
            tally.unfinished += arrivals + queue.len() as u64;
            return;
        }
        tally.calls += arrivals;
        tally.tick(tick, arrivals);
        let (start, end) = (ctx.start(tick), ctx.end(tick));
        let mut room = ctx.capacity;
        for mut decider in clients.drain(..) {
            decider.begin_attempt(ctx.policy, start);
            if room > 0 {
                room -= 1;
                tally.succeed(tick);
                continue;
            }
            match decider.after_failure(ctx.policy, throttled, end) {
                Step::Retry { wait, .. } => queue.push(ctx.next_tick(tick, wait), decider),
                Step::GiveUp(_) => tally.give_up(tick),
            }
        }
        queue.recycle(clients);
    }
}
