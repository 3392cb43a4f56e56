use super::*;

#[test]
fn a_release_hands_the_permit_to_the_first_waiter() {
    let limit = std::sync::Arc::new(ConcurrencyLimit::fixed(1, None, 2).unwrap());
    let held = limit.try_acquire().unwrap();
    let cx = Context::from_waker(Waker::noop());
    let first = Queued::join(&limit, &cx).unwrap();
    let second = Queued::join(&limit, &cx).unwrap();
    assert!(Queued::join(&limit, &cx).is_none(), "the queue holds 2");
    assert!(limit.try_acquire().is_none(), "no one overtakes the queue");
    drop(held);
    let mut cx = Context::from_waker(Waker::noop());
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
    let cx = Context::from_waker(Waker::noop());
    let first = Queued::join(&limit, &cx).unwrap();
    let second = Queued::join(&limit, &cx).unwrap();
    drop(held);
    drop(first);
    let mut cx = Context::from_waker(Waker::noop());
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
