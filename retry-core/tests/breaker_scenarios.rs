//! One set of scenario vectors, replayed on both state machines of a
//! circuit breaker: the local one (`CircuitBreaker`, stepped on explicit
//! times) and the fleet one (`fleet/breaker.lua`, run on a private
//! redis-server with explicit times). After every step both must be in the
//! state the vector expects, with the same trips and the same time left in
//! an open period, so the Lua cannot drift from the Rust rules.
#![cfg(feature = "redis")]

mod support;

use retrykit_core::breaker::{BreakerState, CircuitBreaker, Ticket};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::redis_server::RedisServer;

const SCRIPT: &str = include_str!("../src/fleet/breaker.lua");
/// The Lua clock's start: a whole number of window slots (1 s) in µs.
const BASE_US: u64 = 1_700_000_000_000_000;

#[derive(Debug, Clone, Copy)]
enum Op {
    /// A closed-state attempt that succeeded / failed.
    Ok,
    Fail,
    /// An attempt asking in open or half-open: granted a probe or refused.
    Ask {
        granted: bool,
    },
    /// The oldest outstanding probe succeeded / failed / was cancelled.
    ProbeOk,
    ProbeFail,
    ProbeDrop,
}

use BreakerState::{Closed, HalfOpen, Open};
use Op::*;

/// (ms since the start, operation, state after it, trips after it).
type Step = (u64, Op, BreakerState, u32);

struct Scenario {
    name: &'static str,
    probes: u32,
    steps: &'static [Step],
}

/// min_calls 4, failure_ratio 0.5, window 10 s, open_for 1 s doubling to
/// at most 3 s, no jitter. Times stay clear of window-slot edges.
const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "judges from min_calls, opens at the ratio, a probe's success closes",
        probes: 1,
        steps: &[
            (100, Fail, Closed, 0),
            (110, Fail, Closed, 0),
            (120, Fail, Closed, 0),
            (130, Ok, Closed, 0),
            (140, Fail, Open, 1),
            (900, Ask { granted: false }, Open, 1),
            (1150, Ask { granted: true }, HalfOpen, 1),
            (1160, Ask { granted: false }, HalfOpen, 1),
            (1170, ProbeOk, Closed, 0),
            // Closing judges afresh: three failures are not min_calls.
            (1180, Fail, Closed, 0),
            (1190, Fail, Closed, 0),
            (1200, Fail, Closed, 0),
            (1210, Fail, Open, 1),
        ],
    },
    Scenario {
        name: "successes keep it under the ratio; failures leave with the window",
        probes: 1,
        steps: &[
            (100, Ok, Closed, 0),
            (110, Ok, Closed, 0),
            (120, Ok, Closed, 0),
            (130, Fail, Closed, 0),
            (140, Fail, Closed, 0),
            (12_100, Fail, Closed, 0),
            (12_110, Ok, Closed, 0),
            (12_120, Fail, Closed, 0),
            (12_130, Fail, Open, 1),
        ],
    },
    Scenario {
        name: "failed probes reopen for twice as long up to the maximum",
        probes: 1,
        steps: &[
            (100, Fail, Closed, 0),
            (110, Fail, Closed, 0),
            (120, Fail, Closed, 0),
            (130, Fail, Open, 1),
            (1140, Ask { granted: true }, HalfOpen, 1),
            (1150, ProbeFail, Open, 2),
            (3100, Ask { granted: false }, Open, 2),
            (3160, Ask { granted: true }, HalfOpen, 2),
            (3170, ProbeFail, Open, 3),
            (6180, Ask { granted: true }, HalfOpen, 3),
            (6190, ProbeFail, Open, 4),
            (9200, Ask { granted: true }, HalfOpen, 4),
            (9210, ProbeOk, Closed, 0),
        ],
    },
    Scenario {
        name: "half-open lets exactly the probes through and needs them all",
        probes: 3,
        steps: &[
            (100, Fail, Closed, 0),
            (110, Fail, Closed, 0),
            (120, Fail, Closed, 0),
            (130, Fail, Open, 1),
            (1140, Ask { granted: true }, HalfOpen, 1),
            (1150, Ask { granted: true }, HalfOpen, 1),
            (1160, Ask { granted: true }, HalfOpen, 1),
            (1170, Ask { granted: false }, HalfOpen, 1),
            (1180, ProbeOk, HalfOpen, 1),
            (1190, ProbeDrop, HalfOpen, 1),
            (1200, Ask { granted: true }, HalfOpen, 1),
            (1210, Ask { granted: false }, HalfOpen, 1),
            (1220, ProbeOk, HalfOpen, 1),
            (1230, ProbeOk, Closed, 0),
        ],
    },
    Scenario {
        name: "a late answer from an earlier half-open period changes nothing",
        probes: 2,
        steps: &[
            (100, Fail, Closed, 0),
            (110, Fail, Closed, 0),
            (120, Fail, Closed, 0),
            (130, Fail, Open, 1),
            (1140, Ask { granted: true }, HalfOpen, 1),
            (1150, Ask { granted: true }, HalfOpen, 1),
            // The first probe fails: open again for 2 s.
            (1160, ProbeFail, Open, 2),
            (3170, Ask { granted: true }, HalfOpen, 2),
            // The second probe (from the first half-open) answers now.
            (3180, ProbeOk, HalfOpen, 2),
            (3190, Ask { granted: true }, HalfOpen, 2),
            (3200, Ask { granted: false }, HalfOpen, 2),
        ],
    },
];

/// The local machine, on explicit times.
struct Local {
    breaker: Arc<CircuitBreaker>,
    t0: Instant,
    probes: VecDeque<Ticket>,
}

/// The Lua machine: one script call per step, on explicit times.
struct Fleet {
    conn: redis::Connection,
    key: String,
    probes_setting: u32,
    /// The fleet's period after the last step, and each probe's period.
    period: u64,
    probes: VecDeque<u64>,
}

/// What a machine shows after a step: state, trips, ms left open.
type Seen = (BreakerState, u32, u64);

impl Local {
    fn step(&mut self, at: u64, op: Op) -> (Seen, Option<bool>) {
        let b = &self.breaker;
        let now = self.t0 + Duration::from_millis(at);
        let mut granted = None;
        match op {
            Ok | Fail => {
                let t = b.try_acquire(now).expect("closed lets attempts through");
                assert!(!t.is_probe());
                b.record(t, now, matches!(op, Fail));
            }
            Ask { .. } => {
                let got = b.try_acquire(now);
                granted = Some(got.is_ok());
                if let Result::Ok(t) = got {
                    assert!(t.is_probe());
                    self.probes.push_back(t);
                }
            }
            ProbeOk | ProbeFail => {
                let t = self.probes.pop_front().expect("a probe out");
                b.record(t, now, matches!(op, ProbeFail));
            }
            ProbeDrop => drop(self.probes.pop_front().expect("a probe out")),
        }
        let s = b.status(now);
        let left = s.open_for.map_or(0, |d| d.as_millis() as u64);
        ((s.state, s.trips, left), granted)
    }
}

impl Fleet {
    fn step(&mut self, at: u64, op: Op) -> (Seen, Option<bool>) {
        // (attempts, failures, answer period, ok, failed, given back, wanted)
        let mut args = (0, 0, self.period, 0, 0, 0, 0);
        match op {
            Ok => args.0 = 1,
            Fail => (args.0, args.1) = (1, 1),
            Ask { .. } => args.6 = 1,
            ProbeOk | ProbeFail | ProbeDrop => {
                args.2 = self.probes.pop_front().expect("a probe out");
                match op {
                    ProbeOk => args.3 = 1,
                    ProbeFail => args.4 = 1,
                    _ => args.5 = 1,
                }
            }
        }
        let reply: Vec<u64> = redis::Script::new(SCRIPT)
            .key(&self.key)
            .arg(self.period)
            .arg(args.0)
            .arg(args.1)
            .arg(args.2)
            .arg(args.3)
            .arg(args.4)
            .arg(args.5)
            .arg(args.6)
            .arg(0.5)
            .arg(4)
            .arg(10_000_000)
            .arg(1000.0)
            .arg(3000.0)
            .arg(0.0)
            .arg(self.probes_setting)
            .arg(0.5)
            .arg(BASE_US + at * 1000)
            // No release answers or places asked: the scenarios judge the state.
            .arg(20.0)
            .arg(0)
            .arg(0)
            .arg(0)
            .arg(20.0)
            .invoke(&mut self.conn)
            .expect("the script runs");
        let (phase, trips, period, left, granted) =
            (reply[0], reply[1], reply[2], reply[3], reply[6]);
        self.period = period;
        let asked = matches!(op, Ask { .. }).then_some(granted == 1);
        if asked == Some(true) {
            self.probes.push_back(period);
        }
        let state = [Closed, Open, HalfOpen][phase as usize];
        ((state, trips as u32, left), asked)
    }
}

#[test]
fn the_lua_machine_and_the_rust_machine_agree_on_every_scenario() {
    let server = RedisServer::start();
    let client = redis::Client::open(server.url()).unwrap();
    for (i, scenario) in SCENARIOS.iter().enumerate() {
        let breaker = CircuitBreaker::builder()
            .name("scenario")
            .min_calls(4)
            .failure_ratio(0.5)
            .window(Duration::from_secs(10))
            .open_for(Duration::from_secs(1))
            .max_open_for(Duration::from_secs(3))
            // The script gets open_for and max_open_for bounded by
            // probe_every (round.rs): here they are the script's own args.
            .probe_every(Duration::from_secs(3))
            // The release after a close paces this host's attempts, which
            // the script knows nothing of: at one per ms it lets through
            // the scenarios' attempts, 10 ms apart.
            .release_ramp(Duration::from_millis(1))
            .open_jitter(0.0)
            .probes(scenario.probes)
            .build()
            .unwrap();
        let mut local = Local {
            breaker: Arc::new(breaker),
            t0: Instant::now(),
            probes: VecDeque::new(),
        };
        let mut fleet = Fleet {
            conn: client.get_connection().unwrap(),
            key: format!("{{retry-breaker:scenario-{i}}}"),
            probes_setting: scenario.probes,
            period: 0,
            probes: VecDeque::new(),
        };
        for (n, &(at, op, state, trips)) in scenario.steps.iter().enumerate() {
            let (l, l_granted) = local.step(at, op);
            let (f, f_granted) = fleet.step(at, op);
            let at_step = format!("{}: step {n} ({op:?} at {at} ms)", scenario.name);
            assert_eq!((l.0, l.1), (state, trips), "local, {at_step}");
            assert_eq!((f.0, f.1), (state, trips), "fleet, {at_step}");
            // The local clock starts a few µs after the breaker's origin.
            assert!(
                l.2.abs_diff(f.2) <= 1,
                "time left open: {l:?} vs {f:?}, {at_step}"
            );
            if let Ask { granted } = op {
                assert_eq!(l_granted, Some(granted), "local, {at_step}");
                assert_eq!(f_granted, Some(granted), "fleet, {at_step}");
            }
        }
    }
}
