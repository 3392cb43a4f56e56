//! `retry-policy explain NAME`: every setting's effective value and the layer
//! it came from (built-in, `[defaults]`, extends, own table, profile,
//! environment), for a policy, a budget or a circuit breaker.

use super::{CliError, Context};
use retrykit_config::Explained;
use std::process::ExitCode;

/// Options of `explain`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The policy (or budget, or breaker) to explain
    #[arg(value_name = "POLICY")]
    name: String,
}

/// Prints one line per setting.
pub fn run(args: Args, cx: &Context) -> Result<ExitCode, CliError> {
    let config = cx.load()?;
    let profile = config
        .profile()
        .map(|p| format!(" (profile `{p}`)"))
        .unwrap_or_default();
    let mut hedging = None;
    let fields = match config.explain(&args.name) {
        Some(fields) => {
            outln!("policy `{}`{profile}", args.name);
            let chain = config.extends(&args.name).unwrap_or_default();
            if !chain.is_empty() {
                outln!("extends: {}", chain.join(" → "));
            }
            hedging = config
                .policy(&args.name)
                .and_then(|p| super::show::hedging(p));
            fields
        }
        None => match config.explain_budget(&args.name) {
            Some(fields) => {
                outln!("budget `{}`{profile}", args.name);
                if let Some(t) = config.budget(&args.name).and_then(|b| b.throttling()) {
                    outln!("{}", super::list::throttling(t));
                }
                fields
            }
            None => match config.explain_breaker(&args.name) {
                Some(fields) => {
                    outln!("breaker `{}`{profile}", args.name);
                    let users = super::list::breaker_users(&config, &args.name);
                    if !users.is_empty() {
                        outln!("named by: {}", users.join(", "));
                    }
                    fields
                }
                None => return Err(super::find_policy(&config, &args.name).unwrap_err()),
            },
        },
    };
    out!("{}", table(&fields));
    if let Some(line) = hedging {
        outln!("{line}");
    }
    Ok(ExitCode::SUCCESS)
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
