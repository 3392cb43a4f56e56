//! The layer over any service whose request is `Clone` and whose error
//! classifies itself.

use super::{ByClassify, ResponseFuture, RetryService, SharedHooks, send};
use crate::classify::Classify;
use crate::drive;
use crate::hooks::HookSet;
use crate::retry::Retry;
use std::task::{Context, Poll};
use tower::Service;

impl<S, Req, H> Service<Req> for RetryService<S, ByClassify, H>
where
    S: Service<Req> + Clone + Send + 'static,
    S::Future: Send,
    S::Response: Send + 'static,
    S::Error: Classify + Send + 'static,
    Req: Clone + Send + 'static,
    H: HookSet<S::Error> + Send + Sync + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = ResponseFuture<S::Response, S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Req) -> Self::Future {
        let policy = self.source.current();
        self.source.check_carried::<S::Error>(&policy);
        let service = self.take_ready();
        let hooks = SharedHooks(self.hooks.clone());
        Box::pin(async move {
            let mut run = Retry::new(&policy).hooks(hooks).start(false);
            // Each attempt owns its clones (a shared `&Req` would need `Req: Sync`).
            let mut make = move || send(service.clone(), request.clone());
            drive!(run, make)
        })
    }
}
