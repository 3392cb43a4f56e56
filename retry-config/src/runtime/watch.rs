//! The opt-in file watcher: re-reads the file every interval and installs
//! it once its bytes changed and held still.

use super::{CallSites, Setup};
use crate::config::Config;
use crate::diagnostic::Diagnostics;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::Duration;

impl Setup {
    /// Watches the file: every `interval` it is re-read and, when its bytes
    /// changed and then held still for one more interval, validated and
    /// installed atomically. A bad file keeps the last
    /// good policies; `on_change` receives every outcome.
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// let watcher = retrykit_config::Setup::from_env().watch(Duration::from_secs(2), |outcome| {
    ///     if let Err(diags) = outcome { eprintln!("retry.toml rejected:\n{}", diags.render()); }
    /// });
    /// drop(watcher); // stops watching
    /// ```
    pub fn watch<F>(self, interval: Duration, on_change: F) -> Watcher
    where
        F: Fn(Result<&Config, &Diagnostics>) + Send + 'static,
    {
        let (stop, stopped) = mpsc::channel::<()>();
        // Read before the thread starts, so a change made right after `watch`
        // returns is seen as a change.
        let mut applied = std::fs::read(&self.path).ok();
        let handle = thread::Builder::new()
            .name("retry-config-watch".into())
            .spawn(move || {
                let mut pending = None;
                loop {
                    match stopped.recv_timeout(interval) {
                        Err(RecvTimeoutError::Timeout) => {}
                        _ => return,
                    }
                    let now = std::fs::read(&self.path).ok();
                    if now == applied {
                        pending = None;
                        continue;
                    }
                    // An editor writing in place passes through partial
                    // contents: act only on bytes that held still for one interval.
                    if pending.as_ref() != Some(&now) {
                        pending = Some(now);
                        continue;
                    }
                    applied = pending.take().flatten();
                    match self.install_inner(CallSites::Required) {
                        Ok((config, _)) => on_change(Ok(&config)),
                        Err(diags) => on_change(Err(&diags)),
                    }
                }
            })
            .ok();
        Watcher {
            stop: Some(stop),
            handle,
        }
    }
}

/// A running file watcher; dropping it stops the watch.
///
/// ```no_run
/// let w = retrykit_config::Setup::new("retry.toml").watch(std::time::Duration::from_secs(1), |_| {});
/// w.stop();
/// ```
#[derive(Debug)]
pub struct Watcher {
    stop: Option<mpsc::Sender<()>>,
    handle: Option<thread::JoinHandle<()>>,
}

impl Watcher {
    /// Stops watching and waits for the watch thread to end.
    ///
    /// ```no_run
    /// retrykit_config::Setup::new("retry.toml").watch(std::time::Duration::from_secs(1), |_| {}).stop();
    /// ```
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        drop(self.stop.take());
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.shutdown();
    }
}
