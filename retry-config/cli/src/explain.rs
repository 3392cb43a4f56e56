//! `retry-policy explain NAME`: every setting's effective value and the layer
//! it came from (built-in, `[defaults]`, extends, own table, profile,
//! environment), for a policy, a budget, a circuit breaker or a
//! concurrency limit.

use super::{CliError, Context, shown};
use retrykit_config::{Config, Explained};
use retrykit_schema::suggest::did_you_mean;
use std::process::ExitCode;

/// Options of `explain`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The policy, budget, breaker or limit to explain (each of them, when several share the name)
    #[arg(value_name = "NAME")]
    name: String,
}

/// Prints one line per setting of every policy, budget, breaker and limit named
/// `name`, each under its own heading.
pub fn run(args: Args, cx: &Context) -> Result<ExitCode, CliError> {
    let config = cx.load()?;
    let name = args.name.as_str();
    let profile = config
        .profile()
        .map(|p| format!(" (profile `{p}`)"))
        .unwrap_or_default();
    let mut sections = Vec::new();
    if let Some(fields) = config.explain(name) {
        let mut head = vec![format!("policy `{}`{profile}", shown(name))];
        let chain = config.extends(name).unwrap_or_default();
        if !chain.is_empty() {
            head.push(format!("extends: {}", chain.join(" → ")));
        }
        let tail = config.policy(name).and_then(|p| super::show::hedging(p));
        sections.push((head, fields, tail));
    }
    if let Some(fields) = config.explain_budget(name) {
        let mut head = vec![format!("budget `{}`{profile}", shown(name))];
        if let Some(t) = config.budget(name).and_then(|b| b.throttling()) {
            head.push(super::list::throttling(t));
        }
        sections.push((head, fields, None));
    }
    if let Some(fields) = config.explain_breaker(name) {
        let mut head = vec![format!("breaker `{}`{profile}", shown(name))];
        let users = super::list::breaker_users(&config, name);
        if !users.is_empty() {
            head.push(format!("named by: {}", users.join(", ")));
        }
        sections.push((head, fields, None));
    }
    if let Some(fields) = config.explain_limit(name) {
        let mut head = vec![format!("limit `{}`{profile}", shown(name))];
        let users = super::list::limit_users(&config, name);
        if !users.is_empty() {
            head.push(format!("named by: {}", users.join(", ")));
        }
        sections.push((head, fields, None));
    }
    if sections.is_empty() {
        return Err(not_found(&config, name));
    }
    for (at, (head, fields, tail)) in sections.iter().enumerate() {
        if at > 0 {
            outln!("");
        }
        for line in head {
            outln!("{line}");
        }
        out!("{}", table(fields));
        if let Some(line) = tail {
            outln!("{line}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// No table is named `name`: the error offers the closest name of any kind
/// and lists what each kind defines.
fn not_found(config: &Config, name: &str) -> CliError {
    let kinds: [(&str, Vec<&str>); 4] = [
        ("policy", config.policy_names().collect()),
        ("budget", config.budget_names().collect()),
        ("breaker", config.breaker_names().collect()),
        ("limit", config.limit_names().collect()),
    ];
    let all = kinds
        .iter()
        .flat_map(|(kind, names)| names.iter().map(move |n| (*kind, *n)));
    let close = did_you_mean(name, all.clone().map(|(_, n)| n))
        .map(|meant| {
            let of: Vec<String> = all
                .clone()
                .filter(|(_, n)| *n == meant)
                .map(|(kind, _)| format!("a {kind}"))
                .collect();
            let of = match of.split_last() {
                Some((last, [])) => last.clone(),
                Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
                None => String::new(),
            };
            format!(" (did you mean `{}`, {of}?)", shown(&meant))
        })
        .unwrap_or_default();
    let defined: Vec<String> = kinds
        .iter()
        .filter(|(_, names)| !names.is_empty())
        .map(|(kind, names)| {
            let names: Vec<String> = names.iter().map(|n| shown(n)).collect();
            format!("{kind}: {}", names.join(", "))
        })
        .collect();
    CliError::usage(format!(
        "no policy, budget or breaker `{}` in {}{close}; defined: {}",
        shown(name),
        config.source().name(),
        if defined.is_empty() {
            "none".to_owned()
        } else {
            defined.join("; ")
        }
    ))
}

fn table(fields: &[Explained]) -> String {
    let rows: Vec<[String; 4]> = fields
        .iter()
        .map(|f| {
            [
                f.key.to_owned(),
                f.value.clone(),
                f.layer.to_string(),
                f.span.as_ref().map(ToString::to_string).unwrap_or_default(),
            ]
        })
        .collect();
    super::list::columns(&["KEY", "VALUE", "FROM", "AT"], &rows)
}
