//! What a policy says about HTTP and gRPC requests. The settings live in
//! every [`Policy`], whichever features are built; `http` applies them.

use crate::policy::{Policy, PolicyBuilder};
use crate::problem::Problems;
use retrykit_schema::keys::Key;
use std::sync::Arc;

/// The request settings of one policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RequestRules {
    /// Statuses retried (as transient) besides 408, 429, 500, 502, 503, 504.
    pub(crate) retry_on_status: Option<Arc<[u16]>>,
    /// Methods that may be sent again besides the idempotent ones.
    pub(crate) retry_methods: Option<Arc<[Box<str>]>>,
    /// The most body bytes kept to replay a request.
    pub(crate) max_replay_body: u64,
    /// The gRPC status codes that do not end a call (retried, and non-fatal
    /// to hedges); `None`: the default classes of `retrykit_schema::grpc`.
    pub(crate) grpc_retry_on: Option<Arc<[u8]>>,
}

impl RequestRules {
    /// No extra statuses or methods; bodies up to 64 KiB are replayed.
    pub(crate) const DEFAULT: RequestRules = RequestRules {
        retry_on_status: None,
        retry_methods: None,
        max_replay_body: 64 * 1024,
        grpc_retry_on: None,
    };

    /// Adds every broken rule to `problems`.
    pub(crate) fn check(&self, problems: &mut Problems) {
        let statuses = self.retry_on_status.as_deref().unwrap_or_default();
        let bad: Vec<String> = statuses
            .iter()
            .filter(|s| !(400..=599).contains(*s))
            .map(u16::to_string)
            .collect();
        problems.require(
            bad.is_empty(),
            Key::RetryOnStatus.name(),
            "must list HTTP error statuses, from 400 to 599",
            format!(
                "remove {} (the list adds error statuses to retry, such as 409; \
                 a success or redirect is never retried)",
                bad.join(", ")
            ),
        );
        let methods = self.retry_methods.as_deref().unwrap_or_default();
        for method in methods {
            problems.require(
                is_method_token(method),
                Key::RetryMethods.name(),
                "must list HTTP method names, in upper case (methods are case-sensitive)",
                format!(
                    "write `{}` instead of `{}`",
                    method.trim().to_ascii_uppercase(),
                    method.escape_debug()
                ),
            );
        }
        if let Some(codes) = &self.grpc_retry_on {
            let bad: Vec<String> = codes
                .iter()
                .filter(|c| !(1..=16).contains(*c))
                .map(u8::to_string)
                .collect();
            problems.require(
                !codes.is_empty() && bad.is_empty(),
                Key::GrpcRetryOn.name(),
                "must name at least one gRPC status code other than OK (1 to 16; gRFC A6: \
                 the retryable codes may not be empty)",
                if codes.is_empty() {
                    "name the codes to retry, such as [\"UNAVAILABLE\"], or leave the key out \
                     for the defaults"
                        .to_owned()
                } else {
                    format!("remove {} (OK is never retried)", bad.join(", "))
                },
            );
        }
        problems.require(
            self.max_replay_body <= Policy::MAX_REPLAY_BODY,
            Key::MaxReplayBody.name(),
            "must be at most 64 MiB (67108864 bytes): the body is held in memory for each request in flight",
            format!(
                "lower max_replay_body to at most 67108864 (got {}), or send such bodies \
                 without retry",
                self.max_replay_body
            ),
        );
    }
}

/// An HTTP method token (RFC 9110 §9.1) in upper case: matching is
/// case-sensitive, so `"post"` would never match a POST.
fn is_method_token(method: &str) -> bool {
    !method.is_empty()
        && method.bytes().all(|b| {
            b.is_ascii_uppercase() || b.is_ascii_digit() || b"!#$%&'*+-.^_`|~".contains(&b)
        })
}

impl Policy {
    /// The largest [`max_replay_body`](Self::max_replay_body) accepted: 64 MiB.
    pub const MAX_REPLAY_BODY: u64 = 64 * 1024 * 1024;

    /// HTTP statuses retried (as transient errors) besides the standard
    /// ones (408, 429, 500, 502, 503, 504); empty by default.
    pub fn retry_on_status(&self) -> &[u16] {
        self.requests.retry_on_status.as_deref().unwrap_or_default()
    }

    /// HTTP methods that may be sent again besides the idempotent ones
    /// (GET, HEAD, OPTIONS, PUT, DELETE, TRACE); empty by default.
    pub fn retry_methods(&self) -> &[Box<str>] {
        self.requests.retry_methods.as_deref().unwrap_or_default()
    }

    /// The most request-body bytes kept to send a request again (64 KiB by
    /// default); a call with a larger body ends "body not replayable".
    pub const fn max_replay_body(&self) -> u64 {
        self.requests.max_replay_body
    }

    /// The gRPC status codes that do not end a call (see
    /// [`PolicyBuilder::grpc_retry_on`]); `None` for the defaults.
    pub fn grpc_retry_on(&self) -> Option<&[u8]> {
        self.requests.grpc_retry_on.as_deref()
    }
}

impl PolicyBuilder {
    /// Names the gRPC status codes (1 to 16, at least one) that do not end a
    /// call under the `grpc` layer: retried, and non-fatal to hedges. Each
    /// keeps its default class (`UNAVAILABLE` transient, `RESOURCE_EXHAUSTED`
    /// throttled, `DEADLINE_EXCEEDED` timeout), else is transient; a code
    /// left out is permanent.
    pub fn grpc_retry_on(mut self, codes: impl IntoIterator<Item = u8>) -> Self {
        self.draft.requests.grpc_retry_on = Some(codes.into_iter().collect());
        self
    }

    /// Retries these HTTP statuses too (from 400 to 599), as transient errors.
    pub fn retry_on_status(mut self, statuses: impl IntoIterator<Item = u16>) -> Self {
        let statuses: Arc<[u16]> = statuses.into_iter().collect();
        self.draft.requests.retry_on_status = Some(statuses).filter(|s| !s.is_empty());
        self
    }

    /// Lets requests with these methods (upper case) be sent again too.
    pub fn retry_methods<I, S>(mut self, methods: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<Box<str>>,
    {
        let methods: Arc<[Box<str>]> = methods.into_iter().map(Into::into).collect();
        self.draft.requests.retry_methods = Some(methods).filter(|m| !m.is_empty());
        self
    }

    /// Sets how many request-body bytes are kept to replay a request (at
    /// most [`Policy::MAX_REPLAY_BODY`]; 0 replays only empty bodies).
    pub fn max_replay_body(mut self, bytes: u64) -> Self {
        self.draft.requests.max_replay_body = bytes;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_bad_setting_names_its_field_rule_and_fix() {
        let err = Policy::builder()
            .retry_on_status([99, 409, 700, 200])
            .retry_methods(["POST", "post", ""])
            .max_replay_body(Policy::MAX_REPLAY_BODY + 1)
            .grpc_retry_on([0, 14])
            .build()
            .unwrap_err();
        let fields: Vec<&str> = err.problems().iter().map(|p| p.field).collect();
        assert_eq!(
            fields,
            [
                "retry_on_status",
                "retry_methods",
                "retry_methods",
                "grpc_retry_on",
                "max_replay_body"
            ]
        );
        let text = err.to_string();
        assert!(text.contains("remove 99, 700, 200"), "{text}");
        assert!(text.contains("write `POST` instead of `post`"), "{text}");
        assert!(text.contains("got 67108865"), "{text}");
    }

    #[test]
    fn valid_settings_build_and_empty_lists_mean_none() {
        let p = Policy::builder()
            .retry_on_status([409, 599, 400])
            .retry_methods(["POST", "PATCH", "M-SEARCH"])
            .max_replay_body(Policy::MAX_REPLAY_BODY)
            .grpc_retry_on([14, 10])
            .build()
            .unwrap();
        assert_eq!(p.retry_on_status(), &[409, 599, 400]);
        assert_eq!(p.max_replay_body(), Policy::MAX_REPLAY_BODY);
        assert_eq!(p.grpc_retry_on(), Some(&[14, 10][..]));
        assert_eq!(p.retry_methods().len(), 3);
        let cleared = p.to_builder().retry_on_status([]).build().unwrap();
        assert!(cleared.retry_on_status().is_empty());
    }
}
