//! Helpers of the tests that run `caro-match` and read what it wrote.

// Each test binary compiles this module and uses its own share of it.
#![allow(dead_code)]

use std::io::Write;
use std::path::Path;
use std::process::Output;

/// What a `caro-match` run that must have succeeded printed.
pub fn stdout(output: &Output) -> String {
    assert!(
        output.status.success(),
        "caro-match failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// Writes `from` gzipped to `to`, as docs/strength-runs keeps `games.jsonl` files.
pub fn gzip(from: &Path, to: &Path) {
    let mut encoder = flate2::write::GzEncoder::new(
        std::fs::File::create(to).unwrap(),
        flate2::Compression::default(),
    );
    encoder.write_all(&std::fs::read(from).unwrap()).unwrap();
    encoder.finish().unwrap();
}
