//! Where packetdrill's TCP suite is, and what Linux does with each of its scripts.
//!
//! The scripts are a third-party suite (GPL-2.0) kept outside the repository; ccsim holds its own
//! manifest (`conformance.tsv`): each script's path, Linux 6.18's result and whether it is in
//! scope. One setting finds the suite: `CCSIM_PACKETDRILL`, else `../shared/conformance/packetdrill`
//! beside the repository.

use std::path::{Path, PathBuf};

/// The environment variable naming the suite's directory (holding `upstream/` and `seed/`).
pub const SUITE_ENV: &str = "CCSIM_PACKETDRILL";

/// How to get the suite, for messages.
pub const SUITE_HOW: &str = "packetdrill's gtests/net/tcp (google/packetdrill at 2c4001c4d6fc) as <dir>/upstream, \
named by CCSIM_PACKETDRILL or at ../shared/conformance/packetdrill beside the repository";

/// The suite's directory: `CCSIM_PACKETDRILL`, else `<repo>/../shared/conformance/packetdrill`
/// (`repo` the repository's root); None when it is not there.
pub fn suite_dir(repo: &Path) -> Option<PathBuf> {
    let dir = match std::env::var_os(SUITE_ENV) {
        Some(d) => PathBuf::from(d),
        None => repo.join("../shared/conformance/packetdrill"),
    };
    dir.is_dir().then_some(dir)
}

/// One script of the manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManifestEntry {
    /// Relative to the suite's `upstream/`.
    pub script: String,
    /// Linux 6.18's result: "pass", "pass*", "pass@14ms", "fail", "skip".
    pub linux: String,
    /// In scope for a congestion-control simulator.
    pub in_scope: bool,
    pub note: String,
}

impl ManifestEntry {
    /// Linux passes it (also on a rerun, or with the VM's wider tolerance).
    pub fn linux_passes(&self) -> bool {
        self.linux.starts_with("pass")
    }
}

/// The manifest shipped with ccsim.
pub fn manifest() -> Vec<ManifestEntry> {
    include_str!("../conformance.tsv")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("script\t") && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            ManifestEntry {
                script: f[0].to_string(),
                linux: f.get(1).copied().unwrap_or("").to_string(),
                in_scope: f.get(2) == Some(&"in"),
                note: f.get(3).copied().unwrap_or("").to_string(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_manifest_lists_the_whole_suite() {
        let m = super::manifest();
        assert_eq!(m.len(), 162);
        assert_eq!(m.iter().filter(|e| e.in_scope && e.linux_passes()).count(), 60);
    }
}
