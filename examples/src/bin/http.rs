//! The HTTP client demo: a local server on 127.0.0.1 answers 503 and 429
//! with `Retry-After` in both RFC 9110 forms (and some garbage), then 200;
//! the `#[retry(policy = "http")]` client obeys, and the report shows each
//! header as the server sent it and the wait that followed.

use clap::Parser;
use examples::http::{demo_script, run_demo};
use examples::output::{Stdout, exit_with};
use examples::policies::{load_policies, profile};

/// A local server answers 503 and 429 with Retry-After (both RFC 9110 forms,
/// and some garbage), then 200; the retrying client obeys, and the report
/// shows each header and the wait that followed. RETRY_PROFILE=test waits less.
#[derive(Parser)]
#[command(name = "http")]
struct Cli {}

fn main() {
    let Cli {} = Cli::parse();
    demo();
}

#[tokio::main(flavor = "current_thread")]
async fn demo() {
    let result = match load_policies(&profile(None)) {
        // A closed stdout (`http | head -2`) ends the demo quietly.
        Ok(_) => run_demo(demo_script(), &mut Stdout).await.map(drop),
        Err(problems) => Err(problems.into()),
    };
    if let Err(e) = result {
        exit_with(&*e, 1);
    }
}
