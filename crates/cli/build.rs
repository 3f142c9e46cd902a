//! Embeds the commit ccsim is built from in `ccsim --version` (CCSIM_COMMIT): `git rev-parse`,
//! or "unknown commit" outside a git checkout (a source archive).

use std::process::Command;

fn main() {
    let commit = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| format!("commit {}", s.trim()))
        .unwrap_or_else(|| "unknown commit".into());
    println!("cargo:rustc-env=CCSIM_COMMIT={commit}");
    // Rebuilt when the checked-out commit moves.
    for f in ["../../.git/HEAD", "../../.git/refs/heads", "../../.git/packed-refs"] {
        if std::path::Path::new(f).exists() {
            println!("cargo:rerun-if-changed={f}");
        }
    }
}
