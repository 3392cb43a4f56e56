use super::*;

#[test]
fn a_release_hands_the_permit_to_the_first_waiter() {
    let limit = std::sync::Arc::new(ConcurrencyLimit::fixed(1, None, 2).unwrap());
    let held = limit.try_acquire().unwrap();
    let mut cx = Context::from_waker(Waker::noop());
    let first = Queued::join(&limit, &cx, Instant::now()).unwrap();
    let second = Queued::join(&limit, &cx, Instant::now()).unwrap();
    assert!(
        Queued::join(&limit, &cx, Instant::now()).is_none(),
        "the queue holds 2"
    );
    assert!(limit.try_acquire().is_none(), "no one overtakes the queue");
    drop(held);
    assert!(second.poll(&mut cx).is_pending());
    let Poll::Ready(permit) = first.poll(&mut cx) else {
        panic!("the first waiter is granted");
    };
    assert_eq!(limit.in_flight(), 1);
    drop(second);
    drop(first);
    drop(permit);
    assert_eq!((limit.in_flight(), limit.waiting()), (0, 0));
}

#[test]
fn a_waiter_dropped_after_its_grant_passes_the_permit_on() {
    let limit = std::sync::Arc::new(ConcurrencyLimit::fixed(1, None, 2).unwrap());
    let held = limit.try_acquire().unwrap();
    let mut cx = Context::from_waker(Waker::noop());
    let first = Queued::join(&limit, &cx, Instant::now()).unwrap();
    let second = Queued::join(&limit, &cx, Instant::now()).unwrap();
    drop(held);
    drop(first);
    let Poll::Ready(permit) = second.poll(&mut cx) else {
        panic!("the grant passed to the second waiter");
    };
    drop((permit, second));
    assert_eq!(limit.in_flight(), 0);
}

#[test]
fn a_blocking_wait_runs_out_or_is_granted() {
    let limit = std::sync::Arc::new(ConcurrencyLimit::fixed(1, None, 1).unwrap());
    let held = limit.try_acquire().unwrap();
    assert!(
        limit
            .acquire_blocking(Some(Duration::from_millis(2)))
            .is_none()
    );
    assert_eq!(limit.waiting(), 0);
    let other = Arc::clone(&limit);
    let waiter = std::thread::spawn(move || other.acquire_blocking(None).is_some());
    while limit.waiting() == 0 {
        std::thread::yield_now();
    }
    drop(held);
    assert!(waiter.join().unwrap());
    assert_eq!(limit.in_flight(), 0);
}

fn aimd(initial: u32) -> Arc<ConcurrencyLimit> {
    let kind = LimitKind::Aimd(AimdSettings {
        initial,
        decrease: 0.5,
        ..AimdSettings::default()
    });
    Arc::new(ConcurrencyLimit::new(Some("a"), kind, None, 4).unwrap())
}

#[test]
fn a_grown_limit_lets_in_as_many_waiters_as_it_has_room_for() {
    let limit = aimd(1);
    let held = limit.try_acquire().unwrap();
    let mut cx = Context::from_waker(Waker::noop());
    let first = Queued::join(&limit, &cx, Instant::now()).unwrap();
    let second = Queued::join(&limit, &cx, Instant::now()).unwrap();
    held.finish(Duration::from_millis(1), Outcome::Answered);
    assert_eq!(limit.max_in_flight(), 2, "1 + 1/1");
    let (Poll::Ready(a), Poll::Ready(b)) = (first.poll(&mut cx), second.poll(&mut cx)) else {
        panic!("both waiters are let in");
    };
    assert_eq!((limit.in_flight(), limit.waiting()), (2, 0));
    drop((a, b, first, second));
    assert_eq!(limit.in_flight(), 0);
}

#[test]
fn a_cut_limit_takes_no_permit_back_and_lets_no_waiter_in_until_under_it() {
    let limit = aimd(4);
    let mut held: Vec<Permit> = (0..4).map(|_| limit.try_acquire().unwrap()).collect();
    let mut cx = Context::from_waker(Waker::noop());
    let waiter = Queued::join(&limit, &cx, Instant::now()).unwrap();
    held.pop()
        .unwrap()
        .finish(Duration::from_millis(1), Outcome::Throttled);
    assert_eq!((limit.max_in_flight(), limit.in_flight()), (2, 3));
    held.pop();
    assert!(waiter.poll(&mut cx).is_pending(), "2 out of 2");
    held.pop();
    let Poll::Ready(taken) = waiter.poll(&mut cx) else {
        panic!("1 out: room for one");
    };
    assert!(limit.try_acquire().is_none(), "2 out of 2 again");
    drop((held, taken, waiter));
    assert_eq!(limit.in_flight(), 0);
}

#[test]
fn a_fixed_limit_reads_no_sample_and_an_ignored_one_moves_nothing() {
    let fixed = Arc::new(ConcurrencyLimit::fixed(2, None, 0).unwrap());
    let other = |size| ConcurrencyLimit::fixed(size, None, 0).unwrap();
    assert!(fixed.same_settings(&other(2)) && !fixed.same_settings(&other(3)));
    fixed
        .try_acquire()
        .unwrap()
        .finish(Duration::from_millis(1), Outcome::Throttled);
    assert_eq!((fixed.max_in_flight(), fixed.in_flight()), (2, 0));
    let limit = aimd(4);
    limit
        .try_acquire()
        .unwrap()
        .finish(Duration::from_millis(1), Outcome::Ignored);
    assert_eq!((limit.max_in_flight(), limit.in_flight()), (4, 0));
}
