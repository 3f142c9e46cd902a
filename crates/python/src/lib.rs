//! `ccsim._ccsim`: the Rust side of ccsim's Python package. A thin layer over the library the
//! command line uses — scenario parsing and overrides (`ccsim-scenario`), running a scenario to
//! a results directory, and the reproduction's scorecard (`ccsim-cli`) — so that Python and the
//! command line compute the same numbers. Runs release the GIL. The Python side
//! (`python/ccsim`) turns results into pandas DataFrames and runs sweeps.

use ccsim_scenario as scenario;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use std::path::PathBuf;

/// A scenario error as Python's `ccsim.ScenarioError(message, file, field)`.
fn scenario_err(py: Python<'_>, e: scenario::Error) -> PyErr {
    let made = py
        .import("ccsim.errors")
        .and_then(|m| m.getattr("ScenarioError"))
        .and_then(|cls| cls.call1((e.to_string(), e.file.clone(), e.field.clone())));
    match made {
        Ok(obj) => PyErr::from_value(obj),
        Err(_) => PyValueError::new_err(e.to_string()),
    }
}

fn overrides(py: Python<'_>, sets: &[String]) -> PyResult<Vec<scenario::Override>> {
    sets.iter().map(|s| scenario::Override::parse(s).map_err(|e| scenario_err(py, e))).collect()
}

/// Parse, override and validate a scenario (as `ccsim check` does); the checked scenario and
/// its network.
fn checked(
    py: Python<'_>,
    text: &str,
    file: &str,
    base_dir: Option<PathBuf>,
    sets: &[String],
) -> PyResult<(scenario::Scenario, scenario::Built)> {
    let sets = overrides(py, sets)?;
    let s = scenario::parse_with(text, file, base_dir.as_deref(), &sets).map_err(|e| scenario_err(py, e))?;
    let built = scenario::build(&s).map_err(|e| scenario_err(py, e.in_file(file)))?;
    Ok((s, built))
}

/// The scenario with every default filled in, as TOML (`ccsim check`); raises ScenarioError.
#[pyfunction]
#[pyo3(signature = (text, file, base_dir=None, sets=Vec::new()))]
fn resolve(py: Python<'_>, text: &str, file: &str, base_dir: Option<PathBuf>, sets: Vec<String>) -> PyResult<String> {
    let (s, _) = checked(py, text, file, base_dir, &sets)?;
    Ok(scenario::resolved_toml(&s))
}

/// The scenario text with the overrides written into it (not validated beyond TOML).
#[pyfunction]
fn apply_overrides(py: Python<'_>, text: &str, file: &str, sets: Vec<String>) -> PyResult<String> {
    let sets = overrides(py, &sets)?;
    scenario::apply_overrides(text, file, &sets).map_err(|e| scenario_err(py, e))
}

/// A scenario dictionary, given as JSON, written as TOML.
#[pyfunction]
fn toml_from_json(py: Python<'_>, json: &str) -> PyResult<String> {
    scenario::toml_from_json(json).map_err(|e| scenario_err(py, e))
}

/// Run a scenario into the results directory `out`, exactly as `ccsim run` does, with the GIL
/// released; the results are the files in `out`.
#[pyfunction]
#[pyo3(signature = (text, file, out, base_dir=None, sets=Vec::new()))]
fn run(
    py: Python<'_>,
    text: &str,
    file: &str,
    out: PathBuf,
    base_dir: Option<PathBuf>,
    sets: Vec<String>,
) -> PyResult<()> {
    let (s, built) = checked(py, text, file, base_dir, &sets)?;
    let resolved = scenario::resolved_toml(&s);
    py.allow_threads(|| scenario::run_to_dir(built, &resolved, &out, None, |_, _| {}).map(|_| ()))
        .map_err(PyRuntimeError::new_err)
}

/// Run the named seed experiments (all when empty) and return the scorecard as JSON rows.
#[pyfunction]
#[pyo3(signature = (names, quick, out, jobs))]
fn reproduce(py: Python<'_>, names: Vec<String>, quick: bool, out: PathBuf, jobs: usize) -> PyResult<String> {
    let known = ccsim_cli::reproduce::experiment_names();
    if let Some(n) = names.iter().find(|n| !known.contains(&n.as_str())) {
        return Err(PyValueError::new_err(format!("unknown experiment `{n}`; known: {}", known.join(", "))));
    }
    let command = format!("ccsim.reproduce({names:?}, quick={})", if quick { "True" } else { "False" });
    let (rows, _report) = py
        .allow_threads(|| ccsim_cli::reproduce::scorecard(&names, quick, &out, jobs.max(1), &command))
        .map_err(PyRuntimeError::new_err)?;
    serde_json::to_string(&rows).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// The experiments `reproduce` knows, in catalog order.
#[pyfunction]
fn experiment_names() -> Vec<&'static str> {
    ccsim_cli::reproduce::experiment_names()
}

/// The file a monitored port's queue series is written to in a results directory.
#[pyfunction]
fn queue_csv_name(port: &str) -> String {
    scenario::queue_csv_name(port)
}

/// ccsim's version (the workspace's).
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _ccsim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(resolve, m)?)?;
    m.add_function(wrap_pyfunction!(apply_overrides, m)?)?;
    m.add_function(wrap_pyfunction!(toml_from_json, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(reproduce, m)?)?;
    m.add_function(wrap_pyfunction!(experiment_names, m)?)?;
    m.add_function(wrap_pyfunction!(queue_csv_name, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    Ok(())
}
