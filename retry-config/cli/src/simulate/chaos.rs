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
        out.push_str(&format!(
            "chaos of `{}` ({chaos}): {} attempts failed by injected faults, never sent (in no count of calls); injected latency is not simulated\n",
            super::super::shown(named.name),
            report.injected,
        ));
    }
    out
}
