//! A real fleet against a local server, beside the simulator's prediction:
//! `fleet --config FILE --policy NAME --clients N --outage D --capacity C
//! --tick T --seed S [--repeat N] [--format json]`. See `examples::fleet`.

use clap::Parser;
use examples::fleet::{FleetArgs, run, run_child};
use examples::output::{exit_with, print};

fn main() {
    let args = FleetArgs::parse();
    let result = if args.child_of.is_some() {
        run_child(&args).map(|()| String::new())
    } else {
        run(&args)
    };
    // A closed stdout (`fleet ... | head -1`) ends quietly.
    if let Err(e) = result.and_then(|text| Ok(print(&text)?)) {
        exit_with(&*e, 1);
    }
}
