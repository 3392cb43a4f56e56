//! `retry-policy list`: every policy, budget and circuit breaker on one line each.

use super::{CliError, Context, shown};
use retrykit_config::{Config, show_duration, show_number};
use retrykit_core::hedge::HedgeAfter;
use retrykit_core::limit::{ConcurrencyLimit, LimitKind};
use retrykit_core::{Backoff, Jitter, Policy};
use retrykit_schema::grpc::code_name;
use std::process::ExitCode;

/// Options of `list` (none).
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Prints the policies, then the budgets, then the breakers.
pub fn run(_args: Args, cx: &Context) -> Result<ExitCode, CliError> {
    let config = cx.load()?;
    out!("{}", render(&config));
    Ok(ExitCode::SUCCESS)
}

fn render(config: &Config) -> String {
    let mut out = String::new();
    let policies: Vec<[String; 2]> = config
        .policy_names()
        .filter_map(|name| Some([shown(name), summary(config, name, config.policy(name)?)]))
        .collect();
    out.push_str(&format!("policies ({}):\n", policies.len()));
    out.push_str(&indent(&columns(&[], &policies)));
    let budgets: Vec<[String; 2]> = config
        .budget_names()
        .filter_map(|name| {
            let b = config.budget(name)?;
            let users: Vec<&str> = config
                .policy_names()
                .filter(|p| {
                    config
                        .policy(p)
                        .is_some_and(|p| p.budgets().iter().any(|pb| std::sync::Arc::ptr_eq(pb, b)))
                })
                .collect();
            let used = if users.is_empty() {
                "unused".to_owned()
            } else {
                let users: Vec<String> = users.into_iter().map(shown).collect();
                format!("used by {}", users.join(", "))
            };
            let limits = match (b.limiter(), b.throttling()) {
                (Some(_), _) => "adaptive (paces attempts after throttling)".to_owned(),
                (None, Some(t)) => throttling(t),
                (None, None) => format!(
                    "ratio {}, at least {}/s, window {}",
                    show_number(b.ratio()),
                    show_number(b.min_per_sec()),
                    show_duration(b.window())
                ),
            };
            Some([shown(name), format!("{limits}; {used}")])
        })
        .collect();
    out.push_str(&format!("budgets ({}):\n", budgets.len()));
    out.push_str(&indent(&columns(&[], &budgets)));
    let breakers: Vec<[String; 2]> = config
        .breaker_names()
        .filter_map(|name| {
            let b = config.breaker(name)?;
            let users = breaker_users(config, name);
            let used = if users.is_empty() {
                "unused".to_owned()
            } else {
                format!("used by {}", users.join(", "))
            };
            let slow = match b.slow_call() {
                Some(d) => format!(", slow_call {}", show_duration(d)),
                None => String::new(),
            };
            let fleet = fleet_link(b).map(|l| format!("; {l}")).unwrap_or_default();
            Some([
                shown(name),
                format!(
                    "opens at {}% failed of at least {} attempts over {}, for {}..{}; {} probe(s){slow}{fleet}; {used}",
                    show_number(b.failure_ratio() * 100.0),
                    b.min_calls(),
                    show_duration(b.window()),
                    show_duration(b.open_for()),
                    show_duration(b.max_open_for()),
                    b.probes(),
                ),
            ])
        })
        .collect();
    out.push_str(&format!("breakers ({}):\n", breakers.len()));
    out.push_str(&indent(&columns(&[], &breakers)));
    let limits: Vec<[String; 2]> = config
        .limit_names()
        .filter_map(|name| {
            let l = config.limit(name)?;
            let users = limit_users(config, name);
            let used = if users.is_empty() {
                "unused".to_owned()
            } else {
                format!("used by {}", users.join(", "))
            };
            let wait = match l.max_wait() {
                Some(d) => format!("waits at most {}", show_duration(d)),
                None => "waits up to the deadline".to_owned(),
            };
            Some([
                shown(name),
                format!(
                    "{}; {wait}, {} queued at most; {used}",
                    limit_size(l),
                    l.max_waiting()
                ),
            ])
        })
        .collect();
    if !limits.is_empty() {
        out.push_str(&format!("limits ({}):\n", limits.len()));
        out.push_str(&indent(&columns(&[], &limits)));
    }
    out
}

/// How concurrency limit `l` sets its size, in a few words: `fixed, 8 in
/// flight`, or an adaptive kind's size now, its bounds and what moves it.
pub fn limit_size(l: &ConcurrencyLimit) -> String {
    match l.kind() {
        LimitKind::Fixed { max_in_flight } => format!("fixed, {max_in_flight} in flight"),
        LimitKind::Aimd(s) => {
            let mut drops: Vec<String> = [
                ("timeout", s.drop_on_timeout),
                ("throttled", s.drop_on_throttled),
            ]
            .iter()
            .filter(|(_, on)| *on)
            .map(|(class, _)| (*class).to_owned())
            .collect();
            if let Some(d) = s.drop_above {
                drops.push(format!("slower than {}", show_duration(d)));
            }
            format!(
                "aimd, {} in flight now ({} to {}; x{} on a drop: {})",
                l.max_in_flight(),
                s.min,
                s.max,
                show_number(s.decrease),
                drops.join(", ")
            )
        }
        LimitKind::Gradient(s) => format!(
            "gradient, {} in flight now ({} to {}; tolerance {})",
            l.max_in_flight(),
            s.min,
            s.max,
            show_number(s.tolerance)
        ),
    }
}

/// The policies that name concurrency limit `name`, as tables show them.
pub fn limit_users(config: &Config, name: &str) -> Vec<String> {
    users(config, config.limit(name), Policy::limit)
}

/// The policies whose `of` is `table` (shared, so the same `Arc`), as
/// tables show them; none when there is no such table.
fn users<T>(
    config: &Config,
    table: Option<&std::sync::Arc<T>>,
    of: impl Fn(&Policy) -> Option<&std::sync::Arc<T>>,
) -> Vec<String> {
    let Some(table) = table else {
        return Vec::new();
    };
    config
        .policy_names()
        .filter(|p| {
            config
                .policy(p)
                .and_then(|p| of(p))
                .is_some_and(|t| std::sync::Arc::ptr_eq(t, table))
        })
        .map(shown)
        .collect()
}

/// A fleet breaker's store (without its password) and how its link is
/// timed (`store_timeout`, `refresh`), in a few words; `None` for a local
/// breaker.
#[cfg(feature = "redis")]
pub fn fleet_link(b: &retrykit_core::breaker::CircuitBreaker) -> Option<String> {
    let o = b.fleet_options()?;
    Some(format!(
        "shared by the fleet through {} (store_timeout {}, refresh {})",
        o.store_shown(),
        show_duration(o.timeout()),
        show_duration(o.refresh())
    ))
}

/// Without the `redis` feature no breaker is a fleet breaker.
#[cfg(not(feature = "redis"))]
pub fn fleet_link(_: &retrykit_core::breaker::CircuitBreaker) -> Option<String> {
    None
}

/// A `grpc_throttling` budget in a few words: its bucket and when it stops
/// retries and hedges.
pub fn throttling(t: &retrykit_core::GrpcThrottling) -> String {
    format!(
        "grpc_throttling: {} tokens, +{} per success, -1 per failure; retries and hedges while above {} (fed by gRPC calls)",
        show_number(t.max_tokens()),
        show_number(t.token_ratio()),
        show_number(t.max_tokens() / 2.0)
    )
}

/// The policies that name breaker `name`, as tables show them.
pub fn breaker_users(config: &Config, name: &str) -> Vec<String> {
    users(config, config.breaker(name), Policy::breaker)
}

/// A policy in one line: shape, range, jitter, limits, budget.
fn summary(config: &Config, name: &str, p: &Policy) -> String {
    let shape = match p.backoff() {
        Backoff::Exponential { factor } => format!("exponential ×{}", show_number(factor)),
        other => other.name().to_owned(),
    };
    let jitter = match p.jitter() {
        Jitter::Proportional(r) => format!("±{}% jitter", show_number(r * 100.0)),
        j => format!("{} jitter", j.name()),
    };
    let attempts = match p.max_attempts() {
        Some(1) => "1 attempt".to_owned(),
        Some(n) => format!("{n} attempts"),
        None => "unlimited attempts".to_owned(),
    };
    let mut parts = vec![
        format!(
            "{shape} {}..{}",
            show_duration(p.base()),
            show_duration(p.cap())
        ),
        jitter,
        attempts,
    ];
    if let Some(d) = p.deadline() {
        parts.push(format!("deadline {}", show_duration(d)));
    }
    if let Some(t) = p.attempt_timeout() {
        parts.push(format!("timeout {}", show_duration(t)));
    }
    if let Some(classes) = p.retry_on() {
        parts.push(format!("on {}", classes.join("|")));
    }
    if let Some(codes) = p.grpc_retry_on() {
        let names: Vec<&str> = codes.iter().filter_map(|c| code_name(*c)).collect();
        parts.push(format!("gRPC {}", names.join("|")));
    }
    if let Some(h) = p.hedge_settings() {
        let floor = match h.after {
            HedgeAfter::Percentile(_) => format!("floor {}, ", show_duration(h.floor)),
            HedgeAfter::Fixed(_) => String::new(),
        };
        parts.push(format!(
            "hedge after {} ({floor}at most {}% of calls)",
            h.after,
            show_number(h.share * 100.0)
        ));
    }
    let explained = config.explain(name).unwrap_or_default();
    if let Some(b) = explained
        .iter()
        .find(|f| f.key == "budget" && f.value != "none")
    {
        parts.push(format!("budget {}", shown(&b.value)));
    }
    if let Some(name) = p.breaker().and_then(|b| b.name()) {
        parts.push(format!("breaker {}", shown(name)));
    }
    if let Some(name) = p.limit().and_then(|l| l.name()) {
        parts.push(format!("limit {}", shown(name)));
    }
    if let Some(chain) = config.extends(name).filter(|c| !c.is_empty()) {
        parts.push(format!("extends {}", shown(chain[0])));
    }
    parts.join(", ")
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}\n")).collect()
}

/// The widest a padded column gets: a longer cell is printed whole, unpadded
/// (names are clipped before, see [`shown`]; this bounds the padding and keeps
/// the width within what `format!` accepts).
pub const MAX_WIDTH: usize = 80;

/// Left-aligned columns separated by two spaces; an empty header prints no header row.
pub fn columns<const N: usize>(header: &[&str], rows: &[[String; N]]) -> String {
    let mut widths = [0usize; N];
    for (i, h) in header.iter().enumerate().take(N) {
        widths[i] = h.chars().count();
    }
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i + 1 == cells.len() {
                s.push_str(c);
            } else {
                s.push_str(&format!("{c:<w$}  ", w = widths[i].min(MAX_WIDTH)));
            }
        }
        s.trim_end().to_owned() + "\n"
    };
    let mut out = String::new();
    if !header.is_empty() {
        out.push_str(&line(header.to_vec()));
    }
    for row in rows {
        out.push_str(&line(row.iter().map(String::as_str).collect()));
    }
    out
}
