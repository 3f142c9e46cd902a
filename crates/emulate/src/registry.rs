//! What a running emulation holds and what it made, so that nothing it made outlives it unseen.
//!
//! * **The lock**, `/run/ccsim/emulate.lock`: an exclusive `flock` a run holds from its first
//!   check to its last removal (and `ccsim emulate --cleanup` while it cleans). The holder writes
//!   its pid into the file, so a second run is refused at once with that pid. The kernel releases
//!   the lock when the holder dies, however it dies; the file itself stays (removing a lock file
//!   races with the next run opening it).
//! * **The registry**, `/run/ccsim/emulate-<pid>-<prefix>.json`, one per run: its owner (pid,
//!   process start time, boot id) and everything the run created, in order. Each entry is written
//!   (temporary file + rename, so the file is always whole) before the thing is created — or, for
//!   a mount, right after — and dropped once the thing is removed; the file goes when it is empty.
//!   After a `kill -9` at any moment the file says exactly what to remove, and
//!   [`crate::cleanup`] removes that once the owner is gone.

use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Where the lock and the registries live (a tmpfs on systemd machines: emptied at boot).
pub const RUN_DIR: &str = "/run/ccsim";
/// The lock file's name in [`RUN_DIR`].
pub const LOCK_FILE: &str = "emulate.lock";
/// The version of the registry format written by this ccsim.
const FORMAT: u32 = 1;

// ---------------------------------------------------------------------------------------------
// Processes
// ---------------------------------------------------------------------------------------------

/// A process, told apart from a later one that reuses its pid by its start time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessId {
    pub pid: u32,
    /// `starttime` of `/proc/<pid>/stat`: clock ticks after boot.
    pub start_ticks: u64,
}

/// The fields of `/proc/<pid>/stat` that matter here.
#[derive(Debug, PartialEq, Eq)]
struct ProcStat {
    state: char,
    start_ticks: u64,
}

/// Parses `/proc/<pid>/stat`. The command name (field 2) may hold spaces and parentheses, so
/// the fields are counted from the last `)`: state is field 3, starttime field 22.
fn parse_stat(text: &str) -> Option<ProcStat> {
    let (_, rest) = text.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let state = fields.first()?.chars().next()?;
    let start_ticks = fields.get(19)?.parse().ok()?;
    Some(ProcStat { state, start_ticks })
}

fn read_stat(pid: u32) -> Option<ProcStat> {
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

impl ProcessId {
    /// The process with this pid now.
    pub fn of(pid: u32) -> Result<ProcessId, String> {
        let path = format!("/proc/{pid}/stat");
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
        let stat = parse_stat(&text).ok_or_else(|| format!("{path}: not in the format of /proc/<pid>/stat"))?;
        Ok(ProcessId { pid, start_ticks: stat.start_ticks })
    }

    /// This process.
    pub fn current() -> Result<ProcessId, String> {
        ProcessId::of(std::process::id())
    }

    /// Whether this very process still runs (a zombie does not: it holds nothing any more).
    pub fn is_running(&self) -> bool {
        read_stat(self.pid).is_some_and(|s| s.start_ticks == self.start_ticks && !matches!(s.state, 'Z' | 'X'))
    }
}

/// The kernel's id of this boot: process start times count from boot.
pub fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id").map(|s| s.trim().to_string()).unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// The registry file
// ---------------------------------------------------------------------------------------------

/// One thing a run created.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Resource {
    /// A network namespace (`ip netns add`), with the veths, qdiscs and tc filters inside it.
    Namespace { name: String },
    /// A cgroup v2 directory.
    Cgroup { path: PathBuf },
    /// A tracefs mount ccsim made because none was there.
    TracefsMount { path: PathBuf },
    /// An ftrace instance directory.
    FtraceInstance { path: PathBuf },
    /// The BPF loader process; its struct_ops and cgroup BPF links are held by its file
    /// descriptors (nothing is pinned), so they go with it.
    BpfLoader(ProcessId),
    /// A temporary work directory (the BPF objects and the loader executable).
    WorkDir { path: PathBuf },
}

impl std::fmt::Display for Resource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Resource::Namespace { name } => write!(f, "namespace {name}"),
            Resource::Cgroup { path } => write!(f, "cgroup {}", path.display()),
            Resource::TracefsMount { path } => write!(f, "tracefs mount {}", path.display()),
            Resource::FtraceInstance { path } => write!(f, "ftrace instance {}", path.display()),
            Resource::BpfLoader(p) => write!(f, "BPF loader process {}", p.pid),
            Resource::WorkDir { path } => write!(f, "work directory {}", path.display()),
        }
    }
}

/// The content of one registry file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Registry {
    pub format: u32,
    pub owner: ProcessId,
    /// [`boot_id`] when the run started: after a reboot no pid of the file means anything.
    pub boot_id: String,
    /// The run's name prefix (`cs` + 4 hex digits).
    pub prefix: String,
    /// In the order they were created; removed in reverse.
    pub created: Vec<Resource>,
}

impl Registry {
    /// Whether the run that wrote this is still running.
    pub fn owner_is_running(&self) -> bool {
        self.boot_id == boot_id() && self.owner.is_running()
    }
}

/// The registry file of the run `owner` with names starting `prefix`.
pub fn registry_path(dir: &Path, owner: u32, prefix: &str) -> PathBuf {
    dir.join(format!("emulate-{owner}-{prefix}.json"))
}

/// The temporary file a registry is written to before it replaces `path`.
fn temporary_path(path: &Path) -> PathBuf {
    path.with_extension("json.tmp")
}

/// Writes `registry` to `path` so that a reader (or a `kill -9`) sees the old or the new
/// content, never a part: a temporary file, then a rename over the old one.
pub fn write_atomically(path: &Path, registry: &Registry) -> Result<(), String> {
    let text = serde_json::to_string_pretty(registry)
        .map_err(|e| format!("{}: cannot encode the registry: {e}", path.display()))?;
    let tmp = temporary_path(path);
    std::fs::write(&tmp, text + "\n").map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path)
        .map_err(|e| format!("{}: cannot replace it with {}: {e}", path.display(), tmp.display()))
}

/// Reads one registry file; the error names the file.
pub fn read_registry(path: &Path) -> Result<Registry, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let r: Registry =
        serde_json::from_str(&text).map_err(|e| format!("{}: not a ccsim emulation registry ({e})", path.display()))?;
    if r.format != FORMAT {
        return Err(format!(
            "{}: registry format {} (this ccsim reads format {FORMAT}); use the ccsim that wrote it",
            path.display(),
            r.format
        ));
    }
    Ok(r)
}

/// One registry file found in the run directory, read or not.
pub struct RecordedRun {
    pub path: PathBuf,
    pub registry: Result<Registry, String>,
}

/// Every registry file in `dir` (`emulate-*.json`), oldest name first. A missing `dir` has none.
pub fn recorded_runs(dir: &Path) -> Result<Vec<RecordedRun>, String> {
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("{}: {e}", dir.display())),
    };
    let mut paths: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(is_registry_name))
        .collect();
    paths.sort();
    Ok(paths.into_iter().map(|path| RecordedRun { registry: read_registry(&path), path }).collect())
}

fn is_registry_name(name: &str) -> bool {
    name.starts_with("emulate-") && name.ends_with(".json")
}

/// Temporary registry files (`emulate-*.json.tmp`) in `dir`: what a `kill -9` during a write
/// leaves. They never list more than the registry beside them and the one entry being added,
/// whose thing was not created yet.
pub fn temporary_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut v: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_suffix(".tmp")).is_some_and(is_registry_name)
        })
        .collect();
    v.sort();
    v
}

/// The registry file a temporary file belongs to.
pub fn registry_of_temporary(tmp: &Path) -> PathBuf {
    tmp.with_extension("")
}

/// The owner pid in a registry file name `emulate-<pid>-<prefix>.json[.tmp]`.
pub fn owner_pid_of_name(path: &Path) -> Option<u32> {
    let name = path.file_name()?.to_str()?;
    name.strip_prefix("emulate-")?.split('-').next()?.parse().ok()
}

// ---------------------------------------------------------------------------------------------
// The running emulation's registry
// ---------------------------------------------------------------------------------------------

struct RecordFile {
    path: PathBuf,
    registry: Registry,
}

impl Drop for RecordFile {
    fn drop(&mut self) {
        // Everything listed was removed: the record has nothing more to say. Otherwise the file
        // stays for `ccsim emulate --cleanup`.
        if self.registry.created.is_empty() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// The registry of the run in this process; cheap to clone. The file is removed when the last
/// clone goes, if by then every entry was dropped as removed.
#[derive(Clone)]
pub struct Record(Arc<Mutex<RecordFile>>);

impl Record {
    /// Starts the registry of a run with names starting `prefix`, in `dir` (made if missing).
    pub fn create(dir: &Path, prefix: &str) -> Result<Record, String> {
        create_run_dir(dir)?;
        let owner = ProcessId::current()?;
        let registry =
            Registry { format: FORMAT, owner, boot_id: boot_id(), prefix: prefix.to_string(), created: Vec::new() };
        let path = registry_path(dir, owner.pid, prefix);
        write_atomically(&path, &registry)?;
        Ok(Record(Arc::new(Mutex::new(RecordFile { path, registry }))))
    }

    fn file(&self) -> std::sync::MutexGuard<'_, RecordFile> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records `resource` (call it before creating the thing, or right after for a mount). The
    /// returned entry is to be dropped with [`Entry::gone`] once the thing is removed — or if
    /// creating it failed.
    pub fn add(&self, resource: Resource) -> Result<Entry, String> {
        let mut file = self.file();
        file.registry.created.push(resource.clone());
        if let Err(e) = write_atomically(&file.path, &file.registry) {
            file.registry.created.pop();
            return Err(format!("cannot record {resource} in the run's registry: {e}"));
        }
        Ok(Entry { record: self.clone(), resource })
    }

    fn forget(&self, resource: &Resource) {
        let mut file = self.file();
        if let Some(i) = file.registry.created.iter().rposition(|r| r == resource) {
            file.registry.created.remove(i);
            // If this write fails the file still lists a thing that is gone, which
            // `--cleanup` finds gone: nothing is lost.
            let _ = write_atomically(&file.path, &file.registry);
        }
    }

    /// What is recorded and not yet removed.
    pub fn remaining(&self) -> Vec<Resource> {
        self.file().registry.created.clone()
    }

    /// The registry file.
    pub fn path(&self) -> PathBuf {
        self.file().path.clone()
    }
}

/// One recorded thing of the running emulation.
pub struct Entry {
    record: Record,
    resource: Resource,
}

impl Entry {
    /// The thing is gone (removed, or never created): drop it from the registry. An entry
    /// dropped without this stays recorded.
    pub fn gone(self) {
        self.record.forget(&self.resource);
    }

    pub fn resource(&self) -> &Resource {
        &self.resource
    }
}

fn create_run_dir(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: cannot create ccsim's run directory: {e}", dir.display()))
}

// ---------------------------------------------------------------------------------------------
// The lock
// ---------------------------------------------------------------------------------------------

/// Who holds the lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockRole {
    /// An emulation.
    Run,
    /// `ccsim emulate --cleanup`.
    Cleanup,
}

impl LockRole {
    fn word(self) -> &'static str {
        match self {
            LockRole::Run => "run",
            LockRole::Cleanup => "cleanup",
        }
    }
}

/// The holder of a lock that could not be taken, as it wrote itself into the lock file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockHolder {
    /// `None` if the holder had not written its pid yet, or wrote something else.
    pub pid: Option<u32>,
    pub role: Option<LockRole>,
    pub lock_file: PathBuf,
}

impl LockHolder {
    fn parse(text: &str, lock_file: &Path) -> LockHolder {
        let mut words = text.split_whitespace();
        let pid = words.next().and_then(|w| w.parse().ok());
        let role = match words.next() {
            Some("run") => Some(LockRole::Run),
            Some("cleanup") => Some(LockRole::Cleanup),
            _ => None,
        };
        LockHolder { pid, role, lock_file: lock_file.to_path_buf() }
    }

    fn pid_text(&self) -> String {
        self.pid.map(|p| format!("pid {p}")).unwrap_or_else(|| "pid not known yet".to_string())
    }

    /// Why a new run cannot start.
    pub fn refusal(&self) -> String {
        match self.role {
            Some(LockRole::Cleanup) => format!(
                "`ccsim emulate --cleanup` is running ({}, holding {}); start the emulation when it has finished",
                self.pid_text(),
                self.lock_file.display()
            ),
            _ => format!(
                "another ccsim emulation is running ({}, holding {}); one emulation at a time: wait for it to \
                 finish, or stop it (Ctrl-C or kill) and start again",
                self.pid_text(),
                self.lock_file.display()
            ),
        }
    }
}

/// The exclusive emulation lock; released when dropped (or when the process dies).
pub struct EmulationLock {
    _file: File,
}

/// What trying the lock gave.
pub enum LockAttempt {
    Acquired(EmulationLock),
    Held(LockHolder),
}

/// Tries the lock in `dir` without waiting. An error is an I/O failure, naming the file.
pub fn try_lock(dir: &Path, role: LockRole) -> Result<LockAttempt, String> {
    create_run_dir(dir)?;
    let path = dir.join(LOCK_FILE);
    // Not truncated on open: the content is the holder's pid until we hold the lock ourselves.
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    // SAFETY: flock on a file descriptor we own; it only changes the lock state of the file.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EWOULDBLOCK) {
            return Err(format!("{}: cannot lock it: {e}", path.display()));
        }
        return Ok(LockAttempt::Held(read_holder(&mut file, &path)));
    }
    let me = format!("{} {}\n", std::process::id(), role.word());
    file.set_len(0)
        .and_then(|()| file.rewind())
        .and_then(|()| file.write_all(me.as_bytes()))
        .map_err(|e| format!("{}: cannot write this process's pid into it: {e}", path.display()))?;
    Ok(LockAttempt::Acquired(EmulationLock { _file: file }))
}

/// The holder's pid from the lock file. A holder that has just taken the lock writes its pid a
/// moment later: wait up to 200 ms for it.
fn read_holder(file: &mut File, path: &Path) -> LockHolder {
    let mut holder = LockHolder { pid: None, role: None, lock_file: path.to_path_buf() };
    for _ in 0..20 {
        let mut text = String::new();
        if file.rewind().is_ok() && file.read_to_string(&mut text).is_ok() {
            holder = LockHolder::parse(&text, path);
            if holder.pid.is_some() {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    holder
}

/// The lock for an emulation in `dir`: refused at once, naming the holder, if it is held.
pub fn lock_for_run(dir: &Path) -> Result<EmulationLock, String> {
    match try_lock(dir, LockRole::Run)? {
        LockAttempt::Acquired(lock) => Ok(lock),
        LockAttempt::Held(holder) => Err(holder.refusal()),
    }
}

/// Refuses a new run while a registry in `dir` lists things of another run (call it holding the
/// lock: then no other run is alive, and every registry is a leftover).
pub fn check_no_leftovers(dir: &Path) -> Result<(), String> {
    let runs = recorded_runs(dir)?;
    let Some(run) = runs.first() else { return Ok(()) };
    let more = match runs.len() {
        1 => String::new(),
        n => format!(" (and {} more registries)", n - 1),
    };
    Err(match &run.registry {
        Err(e) => format!("{e}{more}; if no ccsim emulation is running, inspect the file and delete it"),
        Ok(r) if r.owner_is_running() => format!(
            "{} lists what ccsim pid {} made and has not removed yet{more}; once it has exited, remove it with \
             `ccsim emulate --cleanup`",
            run.path.display(),
            r.owner.pid
        ),
        Ok(r) => format!(
            "an earlier emulation (pid {}) ended without removing what it made, listed in {}{more}; remove it with \
             `ccsim emulate --cleanup`",
            r.owner.pid,
            run.path.display()
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scratch directory, removed when dropped.
    struct Dir(PathBuf);

    impl Dir {
        fn new(tag: &str) -> Dir {
            let d = std::env::temp_dir().join(format!("ccsim-registry-test-{}-{tag}", std::process::id()));
            let _ = std::fs::remove_dir_all(&d);
            Dir(d)
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn stat_fields_are_counted_from_the_last_parenthesis() {
        let line = "4242 (a (weird) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10";
        assert_eq!(parse_stat(line), Some(ProcStat { state: 'S', start_ticks: 987654 }));
        assert_eq!(parse_stat("garbage"), None);
        let me = ProcessId::current().unwrap();
        assert!(me.is_running());
        assert!(!ProcessId { start_ticks: me.start_ticks + 1, ..me }.is_running(), "a reused pid is another process");
    }

    #[test]
    fn entries_are_written_as_added_and_the_file_goes_when_all_are_gone() {
        let dir = Dir::new("rec");
        let rec = Record::create(&dir.0, "cs1234").unwrap();
        let path = rec.path();
        assert_eq!(path, registry_path(&dir.0, std::process::id(), "cs1234"));
        let ns = rec.add(Resource::Namespace { name: "cs1234-0".into() }).unwrap();
        let wd = rec.add(Resource::WorkDir { path: "/tmp/x".into() }).unwrap();
        let on_disk = read_registry(&path).unwrap();
        assert_eq!(on_disk.created, vec![ns.resource().clone(), wd.resource().clone()]);
        assert!(on_disk.owner_is_running());
        assert!(!temporary_path(&path).exists(), "the temporary file is renamed over the registry");
        ns.gone();
        assert_eq!(read_registry(&path).unwrap().created, vec![Resource::WorkDir { path: "/tmp/x".into() }]);
        // An entry dropped without `gone` stays recorded, and so does the file.
        drop(wd);
        drop(rec);
        assert!(path.exists());
        let runs = recorded_runs(&dir.0).unwrap();
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].registry.as_ref().unwrap().created.len(), 1);
        assert_eq!(owner_pid_of_name(&path), Some(std::process::id()));
        let e = check_no_leftovers(&dir.0).unwrap_err();
        assert!(e.contains(&path.display().to_string()) && e.contains("--cleanup"), "{e}");

        let rec = Record::create(&dir.0, "cs5678").unwrap();
        let p2 = rec.path();
        rec.add(Resource::Namespace { name: "cs5678-0".into() }).unwrap().gone();
        drop(rec);
        assert!(!p2.exists(), "a registry whose entries are all gone is removed");
    }

    #[test]
    fn a_corrupt_registry_is_named() {
        let dir = Dir::new("bad");
        std::fs::create_dir_all(&dir.0).unwrap();
        let p = dir.0.join("emulate-1-cs0000.json");
        std::fs::write(&p, "{ not json").unwrap();
        let runs = recorded_runs(&dir.0).unwrap();
        let e = runs[0].registry.as_ref().unwrap_err();
        assert!(e.contains(&p.display().to_string()) && e.contains("not a ccsim emulation registry"), "{e}");
        let e = check_no_leftovers(&dir.0).unwrap_err();
        assert!(e.contains(&p.display().to_string()), "{e}");
    }

    #[test]
    fn resources_round_trip_through_json() {
        let r = Registry {
            format: FORMAT,
            owner: ProcessId { pid: 7, start_ticks: 99 },
            boot_id: "b".into(),
            prefix: "cs00ff".into(),
            created: vec![
                Resource::WorkDir { path: "/tmp/ccsim-emulate-cs00ff".into() },
                Resource::Namespace { name: "cs00ff-0".into() },
                Resource::Cgroup { path: "/sys/fs/cgroup/ccsim-cs00ff".into() },
                Resource::BpfLoader(ProcessId { pid: 8, start_ticks: 100 }),
                Resource::TracefsMount { path: "/sys/kernel/tracing".into() },
                Resource::FtraceInstance { path: "/sys/kernel/tracing/instances/ccsim-cs00ff".into() },
            ],
        };
        let text = serde_json::to_string(&r).unwrap();
        assert!(text.contains(r#"{"kind":"bpf_loader","pid":8,"start_ticks":100}"#), "{text}");
        assert_eq!(serde_json::from_str::<Registry>(&text).unwrap(), r);
        assert!(!r.owner_is_running(), "another boot's pid 7 is not running");
    }

    #[test]
    fn the_lock_is_exclusive_and_names_its_holder() {
        let dir = Dir::new("lock");
        let held = lock_for_run(&dir.0).unwrap();
        // A second open file description of the same file conflicts, as another process would.
        let e = lock_for_run(&dir.0).err().expect("the lock is held");
        assert!(e.contains(&format!("pid {}", std::process::id())) && e.contains("another ccsim emulation"), "{e}");
        match try_lock(&dir.0, LockRole::Cleanup).unwrap() {
            LockAttempt::Held(h) => assert_eq!((h.pid, h.role), (Some(std::process::id()), Some(LockRole::Run))),
            LockAttempt::Acquired(_) => panic!("the lock was taken twice"),
        }
        drop(held);
        let cleaning = match try_lock(&dir.0, LockRole::Cleanup).unwrap() {
            LockAttempt::Acquired(l) => l,
            LockAttempt::Held(h) => panic!("released lock still held by {h:?}"),
        };
        let e = lock_for_run(&dir.0).err().expect("held by the clean-up");
        assert!(e.contains("--cleanup") && e.contains(&format!("pid {}", std::process::id())), "{e}");
        drop(cleaning);
    }
}
