//! What the end-to-end tests of the repository's Python scripts share (`ladder_script.rs`,
//! `field_ab_script.rs`): the repository as the scripts see it, a fresh directory per test, and
//! running `scripts/NAME` with `python3`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository, as the scripts see themselves (symbolic links resolved).
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// A fresh directory for one test of `scripts/SCRIPT`: `SCRIPT-NAME` in the target's scratch.
pub fn dir(script: &str, name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{script}-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `scripts/SCRIPT` with `args`.
pub fn run(script: &str, args: &[&str]) -> Output {
    Command::new("python3")
        .arg(repo().join("scripts").join(script))
        .args(args)
        .output()
        .unwrap_or_else(|e| {
            panic!("python3 runs (scripts/{script} needs Python 3.11 or later): {e}")
        })
}

/// The standard output of a run of `scripts/SCRIPT` that must have succeeded.
pub fn success(script: &str, output: &Output) -> String {
    assert!(
        output.status.success(),
        "scripts/{script} failed: {}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}
