//! What `retry-policy check` and `init()` spend on a file with 100,000 bad
//! `retry_on` entries (a 1.2 MB file): checking it, and rendering what is
//! printed. Both are linear in the file and the diagnostics (issue 31 measured
//! 172 s and 42 MB of output before); the rendered size is printed once, and
//! `tests/limits.rs` asserts it stays under 100 KB. Nothing here asserts a time.
//!
//! `cargo bench -p retrykit-config --bench diagnostics`

use criterion::{Criterion, criterion_group, criterion_main};
use retrykit_config::{Options, check_str};
use std::hint::black_box;

/// Entries in the bad list.
const ENTRIES: usize = 100_000;

/// One policy whose `retry_on` lists `Transient` (a near miss of `transient`:
/// classes match exactly, so each entry is an error) `ENTRIES` times.
fn bad_file() -> String {
    let list = vec!["\"Transient\""; ENTRIES].join(", ");
    format!("[policies.api]\nretry_on = [{list}]\n")
}

fn bench(c: &mut Criterion) {
    let text = bad_file();
    let options = Options::new();
    let diags = check_str(&text, "retry.toml", &options);
    eprintln!(
        "{} bytes of policy file, {} diagnostics, {} bytes rendered",
        text.len(),
        diags.len(),
        diags.render().len()
    );
    let mut group = c.benchmark_group("bad_retry_on_100k");
    group.sample_size(10);
    group.bench_function("check_and_render", |b| {
        b.iter(|| {
            let diags = check_str(black_box(&text), "retry.toml", &options);
            black_box(diags.render().len())
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
