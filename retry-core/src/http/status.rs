//! Which HTTP statuses are worth another attempt.

use crate::class::Class;
use crate::policy::Policy;
use http::StatusCode;

/// The class of a response with `status` under `policy`: 429 `throttled`;
/// 408, 500, 502, 503, 504 and the policy's `retry_on_status` `transient`;
/// any other 4xx or 5xx permanent; `None` below 400 (not a failure).
pub fn status_class(status: StatusCode, policy: &Policy) -> Option<Class> {
    let code = status.as_u16();
    if code < 400 {
        return None;
    }
    Some(match code {
        429 => Class::THROTTLED,
        408 | 500 | 502 | 503 | 504 => Class::TRANSIENT,
        _ if policy.retry_on_status().contains(&code) => Class::TRANSIENT,
        _ => Class::Permanent,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_has_the_class_the_issue_gives_it() {
        let policy = Policy::default();
        for code in 100..=599u16 {
            let status = StatusCode::from_u16(code).unwrap();
            let expected = match code {
                100..=399 => None,
                429 => Some(Class::THROTTLED),
                408 | 500 | 502 | 503 | 504 => Some(Class::TRANSIENT),
                _ => Some(Class::Permanent),
            };
            assert_eq!(status_class(status, &policy), expected, "{code}");
        }
        let lenient = Policy::builder().retry_on_status([409]).build().unwrap();
        assert_eq!(
            status_class(StatusCode::CONFLICT, &lenient),
            Some(Class::TRANSIENT)
        );
    }
}
