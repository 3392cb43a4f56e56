//! The compile-fail suite: one contract per file, with the expected
//! diagnostics beside it (`TRYBUILD=overwrite` regenerates them; review
//! every change). Passing cases prove what must keep compiling.
//!
//! The cases are checked against `ui/retry.toml`: the test re-runs itself
//! with `RETRY_CONFIG` pointing there, since trybuild builds the cases in a
//! crate of its own, far from this one's `Cargo.toml`.

use std::path::Path;
use std::process::Command;

#[test]
fn ui() {
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ui/retry.toml");
    if std::env::var_os("RETRY_CONFIG").as_deref() != Some(config.as_os_str()) {
        let status = Command::new(std::env::current_exe().unwrap())
            .args(["ui", "--exact", "--nocapture", "--test-threads=1"])
            .env("RETRY_CONFIG", &config)
            .status()
            .unwrap();
        assert!(
            status.success(),
            "the compile-fail suite failed (see above)"
        );
        return;
    }
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/retry/*.rs");
    t.compile_fail("tests/ui/classify/*.rs");
    t.pass("tests/ui/pass/*.rs");
}
