//! Scratch directories for the command-line tests, removed when dropped — also when a test
//! fails and unwinds.

use std::ffi::OsStr;
use std::ops::Deref;
use std::path::{Path, PathBuf};

/// `ccsim-test-<pid>-<name>` under the system's temporary directory: absent when made (a
/// leftover of an earlier run is removed), removed with everything in it when dropped.
pub struct Scratch(PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!("ccsim-test-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        Scratch(d)
    }
}

impl Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<OsStr> for Scratch {
    fn as_ref(&self) -> &OsStr {
        self.0.as_os_str()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
