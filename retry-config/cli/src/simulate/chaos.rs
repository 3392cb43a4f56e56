//! What a policy's chaos did in a herd run (docs/chaos.md): one line per
//! policy with chaos, under the herd's table.

use super::HerdRun;

/// The chaos lines of `run` (empty when no policy has chaos).
pub(crate) fn herd(run: &HerdRun<'_>) -> String {
    let mut out = String::new();
    for (named, report) in &run.results {
        let Some(chaos) = named.policy.chaos() else {
            continue;
        };
        let mut parts = Vec::new();
        if chaos.fault_rate() > 0.0 {
            parts.push(format!(
                "{} attempts failed by injected faults, never sent (in no count of calls)",
                report.injected
            ));
        }
        if chaos.latency_rate() > 0.0 {
            let mut part = format!(
                "{} attempts delayed by injected latency, {} in all",
                report.delayed,
                crate::short(report.delayed_for)
            );
            let policy = &named.policy;
            if policy.attempt_timeout().is_some() || policy.deadline().is_some() {
                part.push_str(&format!(
                    " ({} of them timed out, never sent)",
                    report.delay_timeouts
                ));
            }
            parts.push(part);
        }
        if parts.is_empty() {
            parts.push("nothing injected".to_owned());
        }
        out.push_str(&format!(
            "chaos of `{}` ({chaos}): {}\n",
            super::super::shown(named.name),
            parts.join("; "),
        ));
    }
    out
}
