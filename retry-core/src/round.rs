//! The one retry loop, [`drive!`](crate::drive), which every entry point
//! uses. Before the first round comes an adaptive budget's wait
//! (`Run::pace`); before each round, the wait for a concurrency limit's
//! permit (`Run::admit`); a round is an [`Attempt`] (or a hedged race of them),
//! then `Run::settle`, then the wait the decision chose, awaited in the
//! loop's own state: a call that retries allocates nothing for its waits.
//!
//! A failed attempt's error is consumed by the decision before any await,
//! so a `!Send` error cannot make the future `!Send`.

use crate::attempt::{Attempt, Delay};
use crate::classify::Classify;
use crate::clock::{Clock, Sleeper};
use crate::hooks::HookSet;
use crate::policy::Policy;
use crate::run::Run;
use std::borrow::Borrow;
use std::future::{Future, poll_fn};
use std::ops::ControlFlow;
use std::task::Poll;

/// Runs rounds of `$run` (a `Run`) until the call ends; evaluates to the
/// call's result. Used inside an `async` context.
///
/// `drive!(run, make)`: `make` (a variable holding an `FnMut` that returns
/// an attempt's future owning what it uses) makes every attempt; a call
/// that hedges ([`Run::hedges`]) runs each round as a race ([`Run::race`])
/// in a boxed loop, so a call that does not carries no room for races.
///
/// `drive!(run, unhedged make)`: one attempt a round, each made by an
/// `FnOnce` written in place, so an attempt may borrow mutably what the
/// caller owns (a `#[retry]` method's `&mut self`). Statements given as
/// `unhedged each { ... } make` run at the start of each round, in the
/// loop's scope, so an attempt may borrow what they make.
///
/// A macro, not a function, so that the caller's future is `Send` exactly
/// when its parts are (a generic driver cannot prove that for borrowed
/// attempts).
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// use retrykit_core::{Hooks, Policy};
/// use retrykit_core::__private::run::{drive, Run};
/// let mut run = Run::for_policy(Policy::default().into(), Hooks::new());
/// let name = String::from("a");
/// let out: Result<usize, std::io::Error> = drive!(run, unhedged each { let copy = name.clone(); } || async { Ok(copy.len()) });
/// assert_eq!(out.unwrap(), 1);
/// let mut run = Run::for_policy(Policy::default().into(), Hooks::new());
/// let mut make = || { let copy = name.clone(); async move { Ok::<_, std::io::Error>(copy.len() + 1) } };
/// assert_eq!(drive!(run, make).unwrap(), 2);
/// # }
/// ```
#[doc(hidden)]
#[macro_export]
macro_rules! drive {
    (@rounds $run:expr, each { $($each:tt)* } $attempt:expr) => {{
        if $run.paces() {
            $run.pace().await;
        }
        loop {
            $($each)*
            if $run.limits() {
                $run.admit().await;
            }
            let result = $attempt.await;
            // Its own statement: nothing but the sleep is held across the await.
            let wait = match $run.settle(result) {
                ::core::ops::ControlFlow::Break(result) => break result,
                ::core::ops::ControlFlow::Continue(wait) => wait,
            };
            wait.await;
        }
    }};
    ($run:expr, unhedged each { $($each:tt)* } $make:expr) => {
        $crate::drive!(@rounds $run, each { $($each)* } $run.attempt($make))
    };
    ($run:expr, unhedged $make:expr) => {
        $crate::drive!($run, unhedged each {} $make)
    };
    ($run:expr, $make:ident) => {{
        if $run.hedges() {
            ::std::boxed::Box::pin(async {
                $crate::drive!(@rounds $run, each {} $run.race(&mut $make))
            })
            .await
        } else {
            $crate::drive!(@rounds $run, each {} $run.attempt(&mut $make))
        }
    }};
}

impl<P: Borrow<Policy>, C: Clock, S: Sleeper, H> Run<P, C, S, H> {
    /// Whether an adaptive budget may pace the first attempt ([`pace`](Self::pace)).
    pub fn paces(&self) -> bool {
        let budgets = &self.policy.borrow().budgets;
        !budgets.is_empty() && budgets.paces()
    }

    /// The wait an adaptive budget imposes before the first attempt.
    pub fn pace(&mut self) -> impl Future<Output = ()> {
        let paced = self.pace_first_attempt();
        poll_fn(move |cx| match paced {
            true => self.timer.poll(cx).unwrap_or(Poll::Ready(())),
            false => Poll::Ready(()),
        })
    }

    /// This round's attempt, begun as `make` makes it; one the breaker
    /// refused is never made, and ends at once with the refusal's error.
    pub fn attempt<M, Fut, T, E>(&mut self, make: M) -> Attempt<'_, P, C, S, H, M, Fut>
    where
        M: FnOnce() -> Fut,
        Fut: Future<Output = Result<T, E>>,
        E: Classify,
        H: HookSet<E>,
    {
        self.faulted = false;
        match self.begin_attempt::<E>() {
            None if self.policy().chaos.is_none() => Attempt::Sent {
                fut: make(),
                run: self,
            },
            None => self.chaotic_attempt(make),
            Some(open) => Attempt::Refused {
                open: Some(open),
                run: self,
            },
        }
    }

    /// The attempt `begin_attempt` let through under a policy with chaos:
    /// sent, delayed, or failed in place by what the chaos draws.
    #[inline(never)]
    fn chaotic_attempt<M, Fut, T, E>(&mut self, make: M) -> Attempt<'_, P, C, S, H, M, Fut>
    where
        M: FnOnce() -> Fut,
        Fut: Future<Output = Result<T, E>>,
        E: Classify,
    {
        match self.inject::<E>() {
            None => Attempt::Sent {
                fut: make(),
                run: self,
            },
            Some((Some(delay), then)) => Attempt::Delayed {
                delay: Box::pin(Delay {
                    sleep: self.sleep(delay),
                    make: Some(make),
                    then,
                }),
                run: Some(self),
            },
            Some((None, open)) => Attempt::Refused { open, run: self },
        }
    }

    /// What an attempt's result makes of the call: its end (`Break`), or a
    /// retry (`Continue`: the sleep to await before the next round).
    #[inline]
    pub fn settle<T, E>(&mut self, result: Result<T, E>) -> ControlFlow<Result<T, E>, S::Sleep>
    where
        E: Classify,
        H: HookSet<E>,
    {
        // The attempt is over: its permit goes back before any wait.
        if let Some(permit) = &self.permit {
            let class = match &result {
                Err(error) if permit.adapts() => Some(error.class()),
                _ => None,
            };
            let permit = self.permit.take();
            self.give_back(permit, class);
        }
        match result {
            Ok(value) => {
                self.succeeded();
                ControlFlow::Break(Ok(value))
            }
            Err(error) => match self.decide(error) {
                Ok(wait) => ControlFlow::Continue(self.sleep(wait)),
                Err(error) => ControlFlow::Break(Err(error)),
            },
        }
    }
}
