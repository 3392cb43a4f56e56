//! Concurrency limits against a real server that serves C calls at once and
//! queues the rest: `load [--policy NAME]... [--clients N] [--capacity C]
//! [--service D] [--duration D] [--format json]`. See `examples::load`.

use clap::Parser;
use examples::load::{LoadArgs, run};
use examples::output::{exit_with, print};

fn main() {
    let args = LoadArgs::parse();
    // A closed stdout (`load | head -1`) ends quietly.
    if let Err(e) = run(&args).and_then(|text| Ok(print(&text)?)) {
        exit_with(&*e, 1);
    }
}
