//! `#[derive(Classify)]`: classes, hints, delegation, defaults, timeouts, and
//! composition with thiserror.

use retrykit_core::{AttemptTimeout, Class, Classify};
use std::time::Duration;

#[derive(Debug, thiserror::Error, Classify)]
#[classify(default = "transient")]
enum HttpError {
    #[error("connection reset")]
    Reset,
    #[error("429, retry after {after:?}")]
    #[classify(class = "throttled", retry_after = after)]
    TooMany { after: Option<Duration> },
    #[error("503")]
    #[classify(retry_after = 0)]
    Unavailable(Duration),
    #[error("400")]
    #[classify(permanent)]
    BadRequest,
    #[error("io")]
    #[classify(source)]
    Io(#[from] std::io::Error),
    #[error("wrapped")]
    Wrapped {
        context: &'static str,
        #[classify(source)]
        inner: Inner,
    },
    #[error("attempt timed out")]
    #[classify(timeout)]
    TimedOut,
}

#[derive(Debug, thiserror::Error, Classify)]
#[error("inner")]
#[classify(class = "overloaded", retry_after = wait)]
struct Inner {
    wait: Duration,
}

#[test]
fn variants_take_their_declared_class() {
    assert_eq!(
        HttpError::Reset.class(),
        Class::TRANSIENT,
        "from the default"
    );
    assert_eq!(HttpError::TooMany { after: None }.class(), Class::THROTTLED);
    assert_eq!(HttpError::BadRequest.class(), Class::Permanent);
    assert_eq!(HttpError::TimedOut.class(), Class::TIMEOUT);
    assert_eq!(
        HttpError::Unavailable(Duration::ZERO).class(),
        Class::TRANSIENT
    );
}

#[test]
fn retry_after_reads_duration_and_option_fields() {
    let hint = Duration::from_secs(7);
    assert_eq!(
        HttpError::TooMany { after: Some(hint) }.retry_after(),
        Some(hint)
    );
    assert_eq!(HttpError::TooMany { after: None }.retry_after(), None);
    assert_eq!(HttpError::Unavailable(hint).retry_after(), Some(hint));
    assert_eq!(HttpError::Reset.retry_after(), None);
}

#[test]
fn source_delegates_class_and_hint() {
    let io = HttpError::from(std::io::Error::from(std::io::ErrorKind::ConnectionReset));
    assert_eq!(io.class(), Class::TRANSIENT);
    let io = HttpError::from(std::io::Error::from(std::io::ErrorKind::PermissionDenied));
    assert_eq!(io.class(), Class::Permanent);
    let wrapped = HttpError::Wrapped {
        context: "db",
        inner: Inner {
            wait: Duration::from_secs(2),
        },
    };
    assert_eq!(wrapped.class(), Class::Retryable("overloaded"));
    assert_eq!(wrapped.retry_after(), Some(Duration::from_secs(2)));
}

#[test]
fn timeout_variant_is_built_by_from_timeout() {
    let t = AttemptTimeout::new(2, Duration::from_secs(1));
    assert!(matches!(
        HttpError::from_timeout(t),
        Some(HttpError::TimedOut)
    ));
    assert!(Inner::from_timeout(t).is_none(), "no timeout variant: None");
}

#[test]
fn thiserror_display_still_works() {
    assert_eq!(HttpError::BadRequest.to_string(), "400");
    assert_eq!(
        HttpError::TooMany { after: None }.to_string(),
        "429, retry after None"
    );
}

#[derive(Debug, Classify)]
enum Generic<E> {
    #[classify(source)]
    Inner(E),
    #[classify(permanent)]
    Other,
}

#[test]
fn generic_source_fields_get_a_classify_bound() {
    let inner = Generic::Inner(HttpError::BadRequest);
    assert_eq!(inner.class(), Class::Permanent);
    assert_eq!(Generic::<HttpError>::Other.class(), Class::Permanent);
}

#[derive(Debug, Classify)]
#[classify(transient)]
struct Unit;

#[derive(Debug, Classify)]
enum Never {}

#[test]
fn unit_structs_and_empty_enums() {
    assert_eq!(Unit.class(), Class::TRANSIENT);
    fn assert_classify<T: Classify>() {}
    assert_classify::<Never>();
}

#[test]
fn derived_classes_are_declared_for_config_checks() {
    let by_http: Vec<&str> = retrykit_core::__private::loader::declared_classes()
        .filter(|c| c.by == "classify_derive::HttpError")
        .map(|c| c.name)
        .collect();
    for class in ["transient", "throttled", "timeout"] {
        assert!(by_http.contains(&class), "{class} missing from {by_http:?}");
    }
    assert!(
        !by_http.contains(&"permanent"),
        "permanent is not a retry class"
    );
    assert!(
        retrykit_core::__private::loader::declared_classes()
            .any(|c| c.name == "overloaded" && c.by.ends_with("::Inner"))
    );
}

#[derive(Debug, Classify)]
#[classify(source)]
struct Wrapper(std::io::Error);

#[derive(Debug, Classify)]
enum Marked {
    #[classify(class = "throttled")]
    Limited {
        #[classify(retry_after)]
        wait: Duration,
        code: u16,
    },
    #[classify(transient)]
    Both(#[classify(retry_after)] Option<Duration>, u8),
}

#[test]
fn struct_level_source_and_field_level_retry_after() {
    let reset = Wrapper(std::io::Error::from(std::io::ErrorKind::ConnectionReset));
    assert_eq!(reset.class(), Class::TRANSIENT);
    let denied = Wrapper(std::io::Error::from(std::io::ErrorKind::PermissionDenied));
    assert_eq!(denied.class(), Class::Permanent);
    let limited = Marked::Limited {
        wait: Duration::from_millis(300),
        code: 429,
    };
    assert_eq!(limited.class(), Class::THROTTLED);
    assert_eq!(limited.retry_after(), Some(Duration::from_millis(300)));
    assert!(matches!(limited, Marked::Limited { code: 429, .. }));
    let both = Marked::Both(None, 1);
    assert!(matches!(both, Marked::Both(None, 1)));
    assert_eq!(both.retry_after(), None);
    assert_eq!(
        Marked::Both(Some(Duration::from_secs(1)), 1).retry_after(),
        Some(Duration::from_secs(1))
    );
}

/// The three shapes a `#[classify(breaker_open)]` variant takes.
mod breaker_open {
    use retrykit_core::breaker::{BreakerOpen, BreakerState};
    use retrykit_core::{CarriesBreakerOpen, Class, Classify};
    use std::time::Duration;

    #[derive(Debug, Classify)]
    enum Unit {
        #[classify(transient)]
        Down,
        #[classify(breaker_open)]
        CircuitOpen,
    }

    #[derive(Debug, Classify)]
    #[classify(default = "transient")]
    enum Tuple {
        Down,
        #[classify(breaker_open)]
        Refused(BreakerOpen),
    }

    #[derive(Debug, Classify)]
    enum Named {
        #[classify(breaker_open)]
        Refused { open: BreakerOpen },
        #[classify(source)]
        Io(std::io::Error),
    }

    #[derive(Debug, Classify)]
    #[classify(breaker_open)]
    struct Refusal(BreakerOpen);

    fn open() -> BreakerOpen {
        BreakerOpen::new(Some("broker"), BreakerState::Open, Duration::from_secs(3))
    }

    fn carries<E: CarriesBreakerOpen>(e: E) -> E {
        e
    }

    #[test]
    fn from_breaker_open_builds_the_marked_variant_which_is_permanent() {
        let unit = carries(Unit::from_breaker_open(open()).unwrap());
        assert!(matches!(unit, Unit::CircuitOpen));
        assert_eq!(unit.class(), Class::Permanent);
        let tuple = carries(Tuple::from_breaker_open(open()).unwrap());
        assert!(matches!(&tuple, Tuple::Refused(o) if *o == open()));
        assert_eq!(tuple.class(), Class::Permanent);
        assert_eq!(
            Tuple::Down.class(),
            Class::TRANSIENT,
            "the default still applies elsewhere"
        );
        let named = carries(Named::from_breaker_open(open()).unwrap());
        assert!(
            matches!(&named, Named::Refused { open: o } if o.retry_in() == Duration::from_secs(3))
        );
        assert_eq!(named.class(), Class::Permanent);
        let refusal = carries(Refusal::from_breaker_open(open()).unwrap());
        assert_eq!(
            (refusal.0.breaker(), refusal.class()),
            (Some("broker"), Class::Permanent)
        );
        assert_eq!(Unit::Down.class(), Class::TRANSIENT);
        let reset = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
        assert_eq!(Named::Io(reset).class(), Class::TRANSIENT);
    }

    #[test]
    fn a_type_without_the_variant_cannot_stand_for_a_refusal() {
        assert!(super::HttpError::from_breaker_open(open()).is_none());
    }
}

mod chaos {
    use retrykit_core::chaos::InjectedFault;
    use retrykit_core::{Class, Classify};
    use std::time::Duration;

    #[derive(Debug, thiserror::Error, Classify)]
    #[classify(default = "transient")]
    enum Tuple {
        #[error("down")]
        Down,
        #[error("{0}")]
        #[classify(chaos)]
        Injected(InjectedFault),
    }

    #[derive(Debug, Classify)]
    enum Named {
        #[classify(permanent)]
        Rejected,
        #[classify(chaos)]
        Injected { fault: InjectedFault },
    }

    #[derive(Debug, Classify)]
    #[classify(chaos)]
    struct Fault(InjectedFault);

    const HINT: Duration = Duration::from_secs(2);

    #[test]
    fn from_chaos_builds_the_marked_variant_of_the_faults_own_class() {
        for class in [
            Class::TRANSIENT,
            Class::TIMEOUT,
            Class::THROTTLED,
            Class::Permanent,
        ] {
            let fault = InjectedFault::new(class, None, 3);
            let tuple = Tuple::from_chaos(fault).unwrap();
            assert!(matches!(&tuple, Tuple::Injected(f) if *f == fault));
            assert_eq!((tuple.class(), tuple.retry_after()), (class, None));
            assert_eq!(
                tuple.to_string(),
                format!("chaos: injected {} fault on attempt 3", class.name())
            );
            let named = Named::from_chaos(fault).unwrap();
            assert!(matches!(&named, Named::Injected { fault: f } if *f == fault));
            assert_eq!(named.class(), class);
            let whole = Fault::from_chaos(fault).unwrap();
            assert_eq!((whole.0, whole.class()), (fault, class));
        }
        assert_eq!(
            Tuple::Down.class(),
            Class::TRANSIENT,
            "the default still applies"
        );
        assert_eq!(Named::Rejected.class(), Class::Permanent);
    }

    #[test]
    fn an_injected_faults_retry_after_is_the_variants_hint() {
        let fault = InjectedFault::new(Class::THROTTLED, Some(HINT), 1);
        let tuple = Tuple::from_chaos(fault).unwrap();
        assert_eq!(
            (tuple.class(), tuple.retry_after()),
            (Class::THROTTLED, Some(HINT))
        );
        let named = Named::from_chaos(fault).unwrap();
        assert_eq!(named.retry_after(), Some(HINT));
        assert_eq!(Fault::from_chaos(fault).unwrap().retry_after(), Some(HINT));
        assert_eq!(Tuple::Down.retry_after(), None, "other variants give none");
        assert_eq!(Named::Rejected.retry_after(), None);
    }

    #[test]
    fn a_type_without_the_variant_cannot_stand_for_a_fault() {
        let fault = InjectedFault::new(Class::TRANSIENT, None, 1);
        assert!(super::HttpError::from_chaos(fault).is_none());
    }
}
