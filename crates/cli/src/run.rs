//! `ccsim run`: a scenario into a results directory, safely — the directory is checked before
//! the run (an earlier run's results are not mixed with new ones: a non-empty directory is
//! refused unless `--force`), the results are written into a temporary directory beside it and
//! renamed into place when complete, and Ctrl-C or SIGTERM end the run early with what exists
//! written and `"interrupted": true` in summary.json (a second Ctrl-C kills at once).

use crate::args::RunArgs;
use crate::limits::{self, Limits};
use ccsim_scenario as scenario;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Raised by the first SIGINT or SIGTERM.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(sig: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
    // SAFETY: signal() is async-signal-safe; the next such signal takes its default action.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
    }
}

/// The exit status of a run ended by a signal (128 + SIGINT, as shells report it).
pub const EXIT_INTERRUPTED: u8 = 130;

/// Why `ccsim run` ended without its full results.
pub enum RunEnd {
    Failed(String),
    Interrupted,
}

/// The results directory a run may write to: refused if it holds anything, unless `force`.
fn check_out(dir: &Path, force: bool) -> Result<(), String> {
    match std::fs::read_dir(dir) {
        Ok(mut entries) => {
            if entries.next().is_some() && !force {
                return Err(format!(
                    "{}: not empty (an earlier run's results?); choose another --out, or --force to replace it",
                    dir.display()
                ));
            }
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let parent = dir.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: cannot create: {e}", parent.display()))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => {
            Err(format!("{}: exists and is not a directory", dir.display()))
        }
        Err(e) => Err(format!("{}: {e}", dir.display())),
    }
}

/// `DIR` → `.DIR.partial-PID` beside it (same file system, so the final rename is atomic).
fn partial_dir(dir: &Path) -> PathBuf {
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "results".into());
    dir.with_file_name(format!(".{name}.partial-{}", std::process::id()))
}

/// Put the finished results at `dir`, replacing what was there (checked empty or `--force`).
fn move_into_place(work: &Path, dir: &Path) -> Result<(), String> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| format!("{}: cannot replace: {e}", dir.display()))?;
    }
    std::fs::rename(work, dir).map_err(|e| format!("{}: cannot move results into place: {e}", dir.display()))
}

pub fn cmd(a: RunArgs) -> Result<(), RunEnd> {
    let path = a.scenario.display().to_string();
    let (quiet, dir) = (a.quiet, a.out);
    let sets = crate::overrides(&a.sets).map_err(RunEnd::Failed)?;
    let s = scenario::load_with(&a.scenario, &sets).map_err(|e| RunEnd::Failed(e.to_string()))?;
    let built = scenario::build(&s).map_err(|e| RunEnd::Failed(e.in_file(&path).to_string()))?;
    check_out(&dir, a.force).map_err(RunEnd::Failed)?;
    let est = scenario::estimate(&built);
    Limits::new(a.max_memory, a.max_output, &dir).check(&est, &path).map_err(RunEnd::Failed)?;
    if !quiet {
        for w in scenario::warnings(&s, &built) {
            eprintln!("warning: {path}: {w}");
        }
        for w in limits::warnings(&est) {
            eprintln!("warning: {path}: {w}");
        }
    }
    let resolved = scenario::resolved_toml(&s);
    let work = partial_dir(&dir);
    let _ = std::fs::remove_dir_all(&work);

    let stop = Arc::new(AtomicBool::new(false));
    INTERRUPTED.store(false, Ordering::SeqCst);
    // SAFETY: the handler only stores to an atomic and calls signal(), both async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
    }
    let bar = progress_bar(quiet, built.cfg.duration.ns());
    let watch = Arc::clone(&stop);
    let result = scenario::run_to_dir(built, &resolved, &work, Some(stop), |t, _| {
        if INTERRUPTED.load(Ordering::Relaxed) {
            watch.store(true, Ordering::Relaxed);
        }
        bar.set_position(t.ns() / 1000);
    });
    bar.finish_and_clear();
    // SAFETY: back to the default dispositions.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_DFL);
        libc::signal(libc::SIGTERM, libc::SIG_DFL);
    }
    let outcome = match result {
        Ok(o) => o,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&work);
            return Err(RunEnd::Failed(e));
        }
    };
    move_into_place(&work, &dir).map_err(|e| {
        let _ = std::fs::remove_dir_all(&work);
        RunEnd::Failed(e)
    })?;
    if !quiet {
        crate::print_summary(&outcome.summary, &dir);
    }
    if outcome.summary.interrupted {
        eprintln!(
            "interrupted at {} of {} s simulated: the results so far are in {} (summary.json says \"interrupted\": true)",
            outcome.summary.duration_s,
            outcome.summary.planned_duration_s.unwrap_or(f64::NAN),
            dir.display()
        );
        return Err(RunEnd::Interrupted);
    }
    Ok(())
}

/// Simulated time against the planned duration, with the rate and an ETA; hidden when stderr is
/// not a terminal (a log file gets no progress lines) or with --quiet.
fn progress_bar(quiet: bool, total_ns: u64) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total_ns / 1000), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{bar:32} {msg} {elapsed} elapsed, ETA {eta}")
            .expect("a valid template")
            .with_key("msg", |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let sim = s.pos() as f64 / 1e6;
                let rate = sim / s.elapsed().as_secs_f64().max(1e-9);
                let _ = write!(w, "{sim:.3}/{:.3} s simulated ({rate:.3} s/s)", s.len().unwrap_or(0) as f64 / 1e6);
            }),
    );
    bar
}
