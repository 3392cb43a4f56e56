//! The hedging settings' validation and sharing.

use super::*;
use crate::policy::Policy;

const MS: Duration = Duration::from_millis(1);

fn fixed(ms: u64) -> HedgeSettings {
    HedgeSettings::new(HedgeAfter::Fixed(MS * ms as u32))
}

#[test]
fn settings_are_validated_with_field_rule_and_fix() {
    let bad = HedgeSettings {
        after: HedgeAfter::Fixed(Duration::ZERO),
        floor: Duration::ZERO,
        share: 1.5,
    };
    let err = Policy::builder()
        .hedge(Some(bad))
        .max_attempts(0)
        .deadline(Some(MS))
        .build()
        .unwrap_err();
    let fields: Vec<_> = err.problems().iter().map(|p| p.field).collect();
    assert_eq!(
        fields,
        ["hedge_after", "hedge_floor", "hedge_share", "max_attempts"]
    );
    assert!(err.problems().iter().all(|p| !p.fix.is_empty()));
    let nan = HedgeSettings {
        share: f64::NAN,
        ..fixed(1)
    };
    assert!(Policy::builder().hedge(Some(nan)).build().is_err());
    let long = HedgeSettings {
        floor: Duration::MAX,
        ..fixed(1)
    };
    assert_eq!(
        Policy::builder()
            .hedge(Some(long))
            .build()
            .unwrap_err()
            .problems()[0]
            .field,
        "hedge_floor"
    );
}

#[test]
fn a_hedging_policys_clones_share_the_estimate() {
    let p = Policy::builder().hedge(Some(fixed(5))).build().unwrap();
    let q = p.clone();
    p.hedging().unwrap().estimate().record(MS);
    assert_eq!(q.hedging().unwrap().estimate().seen(), 1);
    assert!(
        p.to_builder()
            .hedge(None)
            .build()
            .unwrap()
            .hedging()
            .is_none()
    );
}

#[test]
fn the_defaults_are_the_schemas() {
    use retrykit_schema::keys::{BuiltIn, Key};
    assert_eq!(
        Key::HedgeFloor.built_in(),
        BuiltIn::Duration(HedgeSettings::DEFAULT_FLOOR)
    );
    assert_eq!(
        Key::HedgeShare.built_in(),
        BuiltIn::Number(HedgeSettings::DEFAULT_SHARE)
    );
    assert_eq!(Key::HedgeAfter.built_in(), BuiltIn::None);
}
