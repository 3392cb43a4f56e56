//! One loop: an async `#[retry]` function, `Retry::call` and a blocking call
//! run through the same loop, so they trace the same span, the same events
//! with the same fields, inside that span, and end the same way.

use retrykit_core::{Class, Classify, Jitter, Policy, Retry, retry};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

#[derive(Debug)]
struct Fault;

impl Classify for Fault {
    fn class(&self) -> Class {
        Class::TRANSIENT
    }
}

/// Writes every span and event as a line: `span retry policy=..`, and
/// `event <span> <message> field=value ...`.
#[derive(Default, Clone)]
struct Recorder {
    lines: Arc<Mutex<Vec<String>>>,
    names: Arc<Mutex<Vec<String>>>,
    stack: Arc<Mutex<Vec<u64>>>,
}

struct Fields(String);

impl tracing::field::Visit for Fields {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!(" {}={value:?}", field.name()));
    }
}

impl Subscriber for Recorder {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, attrs: &Attributes<'_>) -> Id {
        let mut fields = Fields(String::new());
        attrs.record(&mut fields);
        let mut names = self.names.lock().unwrap();
        names.push(attrs.metadata().name().to_owned());
        self.lines
            .lock()
            .unwrap()
            .push(format!("span {}{}", attrs.metadata().name(), fields.0));
        Id::from_u64(names.len() as u64)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut fields = Fields(String::new());
        event.record(&mut fields);
        let inside = match self.stack.lock().unwrap().last() {
            Some(id) => self.names.lock().unwrap()[*id as usize - 1].clone(),
            None => "<no span>".to_owned(),
        };
        self.lines
            .lock()
            .unwrap()
            .push(format!("event in {inside}:{}", fields.0));
    }
    fn enter(&self, id: &Id) {
        self.stack.lock().unwrap().push(id.into_u64());
    }
    fn exit(&self, _: &Id) {
        self.stack.lock().unwrap().pop();
    }
}

const POLICY: &str = "one-loop-traced";

fn policy() -> Policy {
    Policy::builder()
        .name(POLICY)
        .base(std::time::Duration::ZERO)
        .jitter(Jitter::None)
        .max_attempts(3)
        .build()
        .unwrap()
}

static CALLS: AtomicU32 = AtomicU32::new(0);

#[retry(policy = "one-loop-traced")]
async fn annotated() -> Result<(), Fault> {
    CALLS.fetch_add(1, Ordering::Relaxed);
    Err(Fault)
}

fn traced(run: impl FnOnce()) -> Vec<String> {
    let recorder = Recorder::default();
    tracing::subscriber::with_default(recorder.clone(), run);
    recorder.lines.lock().unwrap().clone()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap()
}

#[test]
fn async_macro_call_and_blocking_trace_alike() {
    tests::add_policy(POLICY, policy());
    let policy = policy();

    let by_macro = traced(|| {
        runtime().block_on(async { assert!(annotated().await.is_err()) });
    });
    let by_call = traced(|| {
        runtime().block_on(async {
            let r = Retry::new(&policy)
                .call(|| async { Err::<(), _>(Fault) })
                .await;
            assert!(r.is_err());
        });
    });
    let by_blocking = traced(|| {
        let r = Retry::blocking(&policy).call_blocking(|| Err::<(), _>(Fault));
        assert!(r.is_err());
    });

    let expected = [
        "span retry policy=\"one-loop-traced\"",
        "event in retry: message=retrying attempt=1 class=\"transient\" wait_ms=0 hinted=false",
        "event in retry: message=retrying attempt=2 class=\"transient\" wait_ms=0 hinted=false",
        "event in retry: message=giving up ending=\"attempts_exhausted\" attempts=3 waited_ms=0",
    ];
    assert_eq!(by_call, expected);
    assert_eq!(by_macro, by_call, "#[retry] traces like Retry::call");
    assert_eq!(
        by_blocking, by_call,
        "a blocking call traces like Retry::call"
    );
    assert_eq!(CALLS.load(Ordering::Relaxed), 3);
}
