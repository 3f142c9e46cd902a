//! `ccsim sweep`: parameter sweeps run on Dask, which is Python; the command hands over to the
//! Python package (`python -m ccsim sweep`), installed with `pip install .` from the repository.

use std::process::Command;

/// The Python interpreter to use: `CCSIM_PYTHON`, else `python3`.
fn python() -> String {
    std::env::var("CCSIM_PYTHON").unwrap_or_else(|_| "python3".into())
}

pub fn cmd(a: crate::args::SweepArgs) -> Result<(), String> {
    let args = a.args;
    let py = python();
    let probe = Command::new(&py).args(["-c", "import ccsim, dask.distributed"]).output();
    match probe {
        Ok(o) if o.status.success() => {}
        Ok(_) => {
            return Err(format!(
                "ccsim sweep runs on Dask through ccsim's Python package, which `{py}` cannot import: \
                 install it with `pip install .` from the repository (docs/python.md), or name another \
                 interpreter in CCSIM_PYTHON"
            ))
        }
        Err(e) => return Err(format!("ccsim sweep needs Python (`{py}`: {e}); set CCSIM_PYTHON to the interpreter")),
    }
    let status = Command::new(&py)
        .args(["-m", "ccsim", "sweep"])
        .args(&args)
        .status()
        .map_err(|e| format!("`{py} -m ccsim sweep`: {e}"))?;
    match status.code() {
        Some(0) => Ok(()),
        Some(c) => std::process::exit(c),
        None => Err("the sweep was killed by a signal".into()),
    }
}
