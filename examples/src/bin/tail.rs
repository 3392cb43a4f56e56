//! "The Tail at Scale" on a real server, beside the simulator's prediction:
//! `tail --config FILE --policy NAME --calls N --concurrency C --slow-share S
//! --slow D --fast D --seed S [--format json]`. See `examples::tail`.

use clap::Parser;
use examples::output::{exit_with, print};
use examples::tail::{TailArgs, run};

fn main() {
    let args = TailArgs::parse();
    // A closed stdout (`tail ... | head -1`) ends quietly.
    if let Err(e) = run(&args).and_then(|text| Ok(print(&text)?)) {
        exit_with(&*e, 1);
    }
}
