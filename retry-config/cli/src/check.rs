//! `retry-policy check [FILE]`: every problem of the file, under every
//! profile (or the one selected), in one pass.

use super::{CliError, Context, Stream};
use retrykit_config::{Config, Diagnostic, Diagnostics, FileOrigin, Options};
use std::path::PathBuf;
use std::process::ExitCode;

/// Options of `check`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The file to check [default: --config, $RETRY_CONFIG, else ./retry.toml]
    #[arg(value_name = "FILE")]
    file: Option<PathBuf>,
    /// Treat warnings as errors
    #[arg(long)]
    deny_warnings: bool,
    /// How to print diagnostics: with source excerpts, one line each, or JSON lines
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = Format::Human)]
    format: Format,
    /// Print every diagnostic (human and short formats print the first 50, then how many more)
    #[arg(long)]
    all: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    Human,
    Short,
    Json,
}

/// Prints the diagnostics and a summary; exit status 1 when there are errors,
/// 2 when the file cannot be read (the check could not run).
/// Without `--profile` (or `$RETRY_PROFILE`) the base file and every profile are checked.
pub fn run(args: Args, cx: &Context) -> Result<ExitCode, CliError> {
    let (path, origin) = match args.file {
        Some(file) => (file, FileOrigin::Given),
        None => cx.path(),
    };
    let options = cx.options().deny_warnings(args.deny_warnings);
    let name = path.display().to_string();
    let (diags, text) = match super::read(&path, origin) {
        Ok(text) => (check(&text, &name, &options), Some(text)),
        Err(diags) => (diags, None),
    };
    let unreadable = text.is_none();
    let scope = match &options.profile {
        Some(p) => format!("profile `{p}`"),
        None => "the base settings and every profile".to_owned(),
    };
    match args.format {
        Format::Json => {
            for d in &diags {
                outln!("{}", json(d));
            }
        }
        Format::Short if args.all => diags.iter().for_each(|d| outln!("{d}")),
        Format::Short => out!("{diags}"),
        Format::Human if diags.is_empty() => {
            outln!("{}: ok ({scope})", path.display());
            if let Some(text) = &text {
                chaos_lines(text, &name, &options)
                    .iter()
                    .for_each(|l| outln!("{l}"));
            }
        }
        Format::Human => {
            if args.all {
                out!("{}", diags.render_all(cx.color(Stream::Stdout)));
            } else {
                out!("{}", cx.render(&diags, Stream::Stdout));
            }
            if !diags.has_errors() {
                outln!("{}: ok with warnings ({scope})", path.display());
            }
        }
    }
    Ok(match (unreadable, diags.has_errors()) {
        (true, _) => ExitCode::from(2),
        (false, true) => ExitCode::from(1),
        (false, false) => ExitCode::SUCCESS,
    })
}

/// [`retrykit_config::check_str`], plus a warning when the file is valid but
/// defines no policy: a program using it would find none of its names.
pub(crate) fn check(text: &str, name: &str, options: &Options) -> Diagnostics {
    let mut diags = retrykit_config::check_str(text, name, options);
    if diags.has_errors() {
        return diags;
    }
    let lenient = options.clone().deny_warnings(false);
    let defines_none = Config::load_str(text, name, &lenient)
        .is_ok_and(|config| config.policy_names().next().is_none());
    if defines_none {
        diags.push(
            Diagnostic::warning("policies", format!("{name} defines no policies"))
                .note("every #[retry(policy = \"NAME\")] call site needs a [policies.NAME] table; add one for each name your code uses"),
        );
        if options.deny_warnings {
            diags.deny_warnings();
        }
    }
    diags
}

/// Where the file injects chaos: the start-up line of the selected
/// profile, or of the base settings and each profile that has one.
fn chaos_lines(text: &str, name: &str, options: &Options) -> Vec<String> {
    let profiles: Vec<Option<String>> = match &options.profile {
        Some(p) => vec![Some(p.clone())],
        None => {
            let base = Config::load_str(text, name, &options.clone().deny_warnings(false));
            let names = base.map(|c| c.profiles().map(|p| Some(p.to_owned())).collect::<Vec<_>>());
            std::iter::once(None)
                .chain(names.unwrap_or_default())
                .collect()
        }
    };
    profiles
        .into_iter()
        .filter_map(|p| {
            let mut opts = options.clone().deny_warnings(false);
            opts.profile = p;
            Config::load_str(text, name, &opts).ok()?.chaos_line()
        })
        .collect()
}

/// One diagnostic as a JSON object, for editors and CI annotations.
fn json(d: &Diagnostic) -> serde_json::Value {
    let (file, line, column, end) = match &d.span {
        Some(span) => {
            let (line, column) = span.line_column();
            let (end_line, end_column) = span.source().line_column(span.range().end);
            (
                Some(span.source().name()),
                Some(line),
                Some(column),
                Some(serde_json::json!({ "line": end_line, "column": end_column })),
            )
        }
        None => (None, None, None, None),
    };
    serde_json::json!({
        "severity": d.severity.to_string(),
        "message": d.message,
        "key": d.key,
        "file": file,
        "line": line,
        "column": column,
        "end": end,
        "label": d.label,
        "suggestion": d.suggestion,
        "notes": d.notes,
    })
}
