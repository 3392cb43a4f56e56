//! The window budget's arithmetic.

use super::*;
use retrykit_schema::keys::Key;

#[test]
fn every_problem_names_a_key_of_the_file() {
    let err = RetryBudget::builder()
        .ratio(-1.0)
        .min_per_sec(f64::NAN)
        .window(Duration::ZERO)
        .build()
        .unwrap_err();
    assert_eq!(err.problems().len(), 3, "{err}");
    for problem in err.problems() {
        assert!(Key::named(problem.field).is_some(), "{}", problem.field);
    }
}

#[test]
fn old_slots_fall_out_of_the_window() {
    let b = RetryBudget::builder()
        .ratio(0.5)
        .min_per_sec(0.0)
        .window(Duration::from_secs(1))
        .build()
        .unwrap();
    let t0 = b.counts.origin();
    for _ in 0..10 {
        b.deposit(t0);
    }
    assert_eq!(b.totals(t0), (10, 0));
    assert_eq!(b.totals(t0 + Duration::from_millis(950)), (10, 0));
    assert_eq!(b.totals(t0 + Duration::from_secs(2)), (0, 0));
    assert!(!b.try_withdraw(t0 + Duration::from_secs(2)));
}

#[test]
fn a_time_before_the_origin_does_not_panic() {
    let b = RetryBudget::builder().build().unwrap();
    let origin = b.counts.origin();
    let early = origin.checked_sub(Duration::from_secs(5)).unwrap_or(origin);
    b.deposit(early);
    assert!(b.try_withdraw(early));
}

#[test]
fn a_grpc_throttling_budgets_problems_name_keys_of_the_file() {
    let err = RetryBudget::grpc_throttling(0.0, 0.0001).unwrap_err();
    let fields: Vec<&str> = err.problems().iter().map(|p| p.field).collect();
    assert_eq!(fields, ["max_tokens", "token_ratio"], "{err}");
    for field in fields {
        assert!(Key::named(field).is_some(), "{field}");
    }
}

/// A6's bucket is kept in each process, so sharing it is refused (before
/// any connection is tried).
#[cfg(feature = "redis")]
#[test]
fn a_grpc_throttling_budget_is_not_shared_with_the_fleet() {
    let options = crate::fleet::FleetOptions::new("b", "redis://127.0.0.1:1/");
    let err = RetryBudget::grpc_throttling(10.0, 0.1)
        .unwrap()
        .with_fleet(options)
        .unwrap_err();
    assert_eq!(err.problems()[0].field, "scope", "{err}");
    assert!(err.to_string().contains("kept in each process"), "{err}");
}
