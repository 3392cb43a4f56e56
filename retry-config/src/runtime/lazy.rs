//! The lazy loader: what retrykit-core runs on its first lookup when
//! `init` was never called.

use super::{ACTIVE, CallSites, Setup, not_found};
use retrykit_core::__private::loader::{self, LazyLoader};
use std::sync::PoisonError;

/// Run by retrykit-core on the first lookup when nothing was installed: loads
/// the discovered file, and says on stderr whatever keeps a call from
/// retrying as its policy says. In strict mode any such problem ends the
/// process instead.
pub(crate) fn lazy_load() {
    let setup = Setup::from_env();
    let path = setup.path.display().to_string();
    let strict = setup.strict;
    if let Some(search) = setup.search.as_ref().filter(|s| s.file.is_none()) {
        let problem = not_found(search)
            .iter()
            .next()
            .map(|d| d.message.clone())
            .unwrap_or_default();
        let why = format!("nothing was loaded: {problem}");
        loader::set_origin(why.clone());
        if strict {
            eprintln!("retrykit-config: {why}; strict mode (RETRY_STRICT) stops the program");
            std::process::exit(1);
        }
        // Said by each call site whose policy is missing, with its name.
        return;
    }
    // Kept as found, for `reload`, which refuses a bad environment as `init` does.
    let as_found = setup.clone();
    let mut setup = setup;
    let withheld = if strict {
        Vec::new()
    } else {
        setup.set_aside_bad_environment()
    };
    match setup.install_withholding(CallSites::Reported, withheld) {
        Ok((config, missing)) => {
            if !config.warnings().is_empty() {
                eprint!("retrykit-config: {path}:\n{}", config.warnings().render());
            }
            // A call site the file cannot serve says so itself on its first
            // call (once, with the fix), so it is not said twice here; strict
            // mode stops the program now instead, with every problem.
            if strict {
                loader::set_strict(true);
                if missing.has_errors() {
                    eprint!(
                        "retrykit-config: {path}:\n{}retrykit-config: strict mode (RETRY_STRICT) stops the program\n",
                        missing.render()
                    );
                    std::process::exit(1);
                }
            }
            *ACTIVE.lock().unwrap_or_else(PoisonError::into_inner) = Some(as_found);
        }
        Err(problems) => {
            eprint!(
                "retrykit-config: {path} was not installed:\n{}",
                problems.render()
            );
            loader::set_origin(format!(
                "nothing was loaded: {path} has errors (printed when it was read)"
            ));
            // Whether the file defines a site's policy is not known: each
            // site says the load failed, never "define [policies.NAME]".
            let why = format!(
                "{path} has errors (printed when it was read), so nothing was loaded\n  \
                 fix: mend them (`retry-policy check` lists them), and call retrykit_config::init() \
                 at start-up to make this an error there"
            );
            loader::set_withheld(loader::call_sites().map(|s| (s.policy.to_owned(), why.clone())));
            if strict {
                eprintln!("retrykit-config: strict mode (RETRY_STRICT) stops the program");
                std::process::exit(1);
            }
        }
    }
}

retrykit_core::__private::inventory::submit! {
    LazyLoader { name: "retrykit-config", load: lazy_load }
}
