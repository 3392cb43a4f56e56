//! A real fleet against a local server, beside the simulator's prediction:
//! `fleet --config FILE --policy NAME --clients N --outage D --capacity C
//! --tick T --seed S [--format json]`. See `examples::fleet`.

use clap::Parser;
use examples::fleet::{FleetArgs, run, run_child};
use examples::policies::error_report;

fn main() {
    let args = FleetArgs::parse();
    let result = if args.child_of.is_some() {
        run_child(&args).map(|()| String::new())
    } else {
        run(&args)
    };
    match result {
        Ok(text) => print!("{text}"),
        Err(e) => {
            eprint!("{}", error_report(&*e));
            std::process::exit(1);
        }
    }
}
