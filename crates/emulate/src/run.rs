//! One emulated run, start to finish: check, build the network, load the BPF programs, run the
//! applications while sampling, take everything down, write the results.

use crate::bpf;
use crate::capture::DequeueCapture;
use crate::netns::Network;
use crate::plan::{Plan, PortPlan};
use crate::qpoll::{self, QdiscPoller};
use crate::registry::{self, Entry, Record, Resource};
use crate::sys;
use crate::traffic::{self, Clock, FlowResult};
use std::os::fd::RawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Raised by SIGINT, SIGTERM and SIGHUP: the run stops early and cleans up.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

fn install_signal_handlers() {
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::signal(sig, on_signal as *const () as libc::sighandler_t);
        }
    }
}

/// One queue sample: time (ns since start), packets, bytes.
pub type QueueSeries = Vec<(i64, u32, u32)>;
/// One flow sample: time, cwnd (packets), bytes acked, srtt (us), ssthresh.
pub type FlowSeries = Vec<(i64, u32, u64, u32, u32)>;

/// Counters of one watched port, read at the start and at the end.
#[derive(Clone, Debug, Default)]
pub struct PortCounters {
    pub packets: u64,
    pub bytes: u64,
    pub drops: u64,
}

/// Everything an emulated run measured, before it is summarised.
pub struct RawResults {
    pub plan: Plan,
    pub queue_series: Vec<(String, QueueSeries)>,
    pub port_counters: Vec<(String, PortCounters)>,
    pub flows: Vec<FlowResult>,
    pub flow_series: Vec<FlowSeries>,
    pub received: Vec<u64>,
    pub pings: Vec<(u64, Vec<f64>)>,
    /// Inter-dequeue gaps (ns) of full-size frames at `dequeue_port`, and the frame length.
    pub dequeue_port: Option<String>,
    pub dequeue_gaps: Vec<u32>,
    pub dequeue_frame_len: u32,
    pub capture_drops: u32,
    /// Per-ACK `tcp_probe` events of the senders: (flow index, time since start, probe).
    pub probes: Vec<(usize, i64, crate::trace::Probe)>,
    pub probe_overruns: u64,
    /// `ss -tin` snapshots: (time since start, node name, namespace, ss output).
    pub ss: Vec<(i64, String, String, String)>,
    pub bpf: Option<bpf::BpfCounters>,
    pub commands: Vec<String>,
    pub interrupted: bool,
    pub kernel: String,
}

/// The cgroup the run's sockets are made in, so the base-RTT sock_ops program sees them.
struct Cgroup {
    dir: PathBuf,
    parent_procs: PathBuf,
    entry: Option<Entry>,
}

impl Cgroup {
    fn enter(prefix: &str, record: &Record) -> Result<Cgroup, String> {
        let mounts = std::fs::read_to_string("/proc/mounts").map_err(|e| format!("/proc/mounts: {e}"))?;
        let root = mounts
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .find(|f| f.len() > 2 && f[2] == "cgroup2")
            .map(|f| PathBuf::from(f[1]))
            .ok_or("no cgroup v2 hierarchy is mounted; TCP-NV's base RTT needs one for its sock_ops program")?;
        let me = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
        let cur = me.lines().find_map(|l| l.strip_prefix("0::")).unwrap_or("/").trim_start_matches('/').to_string();
        let parent = if cur.is_empty() { root.clone() } else { root.join(&cur) };
        let dir = root.join(format!("ccsim-{prefix}"));
        let entry = record.add(Resource::Cgroup { path: dir.clone() })?;
        if let Err(e) = std::fs::create_dir(&dir) {
            entry.gone();
            return Err(format!("cannot make the cgroup {}: {e}", dir.display()));
        }
        let cg = Cgroup { dir, parent_procs: parent.join("cgroup.procs"), entry: Some(entry) };
        std::fs::write(cg.dir.join("cgroup.procs"), std::process::id().to_string())
            .map_err(|e| format!("{}: cannot move ccsim into it: {e}", cg.dir.display()))?;
        Ok(cg)
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        let _ = std::fs::write(&self.parent_procs, std::process::id().to_string());
        if std::fs::remove_dir(&self.dir).is_ok() {
            if let Some(e) = self.entry.take() {
                e.gone();
            }
        }
    }
}

/// The run's temporary directory (BPF objects, the loader executable); removed when dropped.
struct WorkDir {
    path: PathBuf,
    entry: Option<Entry>,
}

impl WorkDir {
    /// Records, then makes, `ccsim-emulate-<prefix>` in the system's temporary directory.
    fn create(prefix: &str, record: &Record) -> Result<WorkDir, String> {
        let path = std::env::temp_dir().join(format!("ccsim-emulate-{prefix}"));
        let entry = record.add(Resource::WorkDir { path: path.clone() })?;
        if let Err(e) = std::fs::create_dir(&path) {
            entry.gone();
            return Err(format!("cannot make the work directory {}: {e}", path.display()));
        }
        Ok(WorkDir { path, entry: Some(entry) })
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        if std::fs::remove_dir_all(&self.path).is_ok() {
            if let Some(e) = self.entry.take() {
                e.gone();
            }
        }
    }
}

fn check_root() -> Result<(), String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err("ccsim emulate needs root (network namespaces, tc, BPF): run it as root or with sudo".into());
    }
    Ok(())
}

/// Refuse to start without root, the tools, or with leftovers of an earlier run recorded in
/// `run_dir` (call it holding the emulation lock).
pub fn preflight(plan: &Plan, run_dir: &Path) -> Result<(), String> {
    check_root()?;
    for tool in ["ip", "tc", "ethtool", "sysctl"] {
        let found = std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
            .unwrap_or(false)
            || ["/usr/sbin", "/sbin", "/usr/bin"].iter().any(|d| Path::new(d).join(tool).is_file());
        if !found {
            return Err(format!("`{tool}` not found: install iproute2, ethtool and procps (scripts/setup does)"));
        }
    }
    registry::check_no_leftovers(run_dir)?;
    let needs_bpf = plan.needs_dctcp || plan.needs_nv || plan.ports().any(|p| p.mark.is_some());
    if needs_bpf {
        bpf::available()
            .map_err(|e| format!("this scenario needs ccsim's BPF programs (ECN marking, DCTCP or NV): {e}"))?;
    }
    Ok(())
}

/// Run the plan, holding the emulation lock in [`registry::RUN_DIR`] and recording everything
/// it creates in its registry there. Everything created is removed before this returns,
/// whatever happens; what cannot be removed stays recorded, and the error says so.
pub fn run(plan: Plan, progress: &mut dyn FnMut(&str)) -> Result<RawResults, String> {
    check_root()?;
    let run_dir = Path::new(registry::RUN_DIR);
    let lock = registry::lock_for_run(run_dir)?;
    preflight(&plan, run_dir)?;
    install_signal_handlers();
    INTERRUPTED.store(false, Ordering::SeqCst);
    let record = Record::create(run_dir, &plan.prefix)?;
    let result =
        WorkDir::create(&plan.prefix, &record).and_then(|work| run_recorded(plan, &work.path, &record, progress));
    // Every guard holding an entry is dropped by now.
    let left = record.remaining();
    let registry_file = record.path();
    drop(record);
    drop(lock);
    if left.is_empty() {
        return result;
    }
    let left: Vec<String> = left.iter().map(Resource::to_string).collect();
    let msg = format!(
        "could not remove {}; they are listed in {}: remove them with `ccsim emulate --cleanup` once this ccsim has \
         exited",
        left.join(", "),
        registry_file.display()
    );
    Err(match result {
        Ok(_) => msg,
        Err(e) => format!("{e}; also, {msg}"),
    })
}

fn run_recorded(
    plan: Plan,
    workdir: &Path,
    record: &Record,
    progress: &mut dyn FnMut(&str),
) -> Result<RawResults, String> {
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default().trim().to_string();
    progress("building namespaces, veth pairs and qdiscs");
    let net = Network::build(&plan, record)?;
    let cgroup =
        if plan.needs_nv && !plan.base_rtt.is_empty() { Some(Cgroup::enter(&plan.prefix, record)?) } else { None };
    let markers: Vec<bpf::Marker> = plan
        .ports()
        .filter_map(|p| {
            p.mark.map(|(k, drop_non_ect)| bpf::Marker {
                netns: plan.nodes[p.node].netns.clone(),
                dev: p.dev.clone(),
                k,
                unit: if p.bytes { bpf::MarkUnit::Bytes } else { bpf::MarkUnit::Packets },
                drop_non_ect,
            })
        })
        .collect();
    let loaded = if plan.needs_dctcp || plan.needs_nv || !markers.is_empty() {
        progress("loading BPF programs");
        let setup = bpf::BpfSetup {
            dctcp: plan.needs_dctcp,
            nv: plan.needs_nv,
            cgroup: cgroup.as_ref().map(|c| c.dir.clone()),
            base_rtt: plan.base_rtt.clone(),
            markers,
        };
        Some(bpf::load(&setup, workdir, Some(record))?)
    } else {
        None
    };
    let result = run_apps(&plan, record, progress);
    // Take down in reverse: BPF first (its counters), then the network.
    let counters = match loaded {
        Some(l) => Some(l.finish()?),
        None => None,
    };
    drop(cgroup);
    let commands = net.shell.log.clone();
    drop(net);
    let apps = result?;
    Ok(RawResults {
        plan,
        queue_series: apps.queue_series,
        port_counters: apps.port_counters,
        flows: apps.flows,
        flow_series: apps.flow_series,
        received: apps.received,
        pings: apps.pings,
        dequeue_port: apps.dequeue_port,
        dequeue_gaps: apps.dequeue_gaps,
        dequeue_frame_len: apps.dequeue_frame_len,
        capture_drops: apps.capture_drops,
        probes: apps.probes,
        probe_overruns: apps.probe_overruns,
        ss: apps.ss,
        bpf: counters,
        commands,
        interrupted: INTERRUPTED.load(Ordering::SeqCst),
        kernel,
    })
}

struct Apps {
    queue_series: Vec<(String, QueueSeries)>,
    port_counters: Vec<(String, PortCounters)>,
    flows: Vec<FlowResult>,
    flow_series: Vec<FlowSeries>,
    received: Vec<u64>,
    pings: Vec<(u64, Vec<f64>)>,
    dequeue_port: Option<String>,
    dequeue_gaps: Vec<u32>,
    dequeue_frame_len: u32,
    capture_drops: u32,
    probes: Vec<(usize, i64, crate::trace::Probe)>,
    probe_overruns: u64,
    ss: Vec<(i64, String, String, String)>,
}

/// The port whose departures are timed: the first watched port towards a flow's receiver.
fn dequeue_port(plan: &Plan) -> Option<&PortPlan> {
    let watched: Vec<&PortPlan> = plan.ports().filter(|p| p.monitor.is_some()).collect();
    watched.iter().find(|p| plan.flows.iter().any(|f| f.dst == p.peer)).or(watched.first()).copied()
}

fn root_stats(poller: &mut QdiscPoller, ifindex: u32) -> Option<qpoll::QdiscStats> {
    poller.dump(ifindex).ok()?.into_iter().find(|q| q.parent == 0xffff_ffff)
}

/// Each polled port's root qdisc counters now (zeros where the kernel did not answer).
fn port_counters(pollers: &mut [(QdiscPoller, u32)]) -> Vec<PortCounters> {
    pollers
        .iter_mut()
        .map(|(pl, idx)| {
            root_stats(pl, *idx)
                .map(|s| PortCounters { packets: s.packets, bytes: s.bytes, drops: s.drops as u64 })
                .unwrap_or_default()
        })
        .collect()
}

fn run_apps(plan: &Plan, record: &Record, progress: &mut dyn FnMut(&str)) -> Result<Apps, String> {
    let stop = Arc::new(AtomicBool::new(false));
    let end_ns = plan.duration_ns;
    // Sockets, made in their namespaces.
    let mut listeners = Vec::new();
    let mut clients = Vec::new();
    for f in &plan.flows {
        let l = sys::with_netns(&plan.nodes[f.dst].netns, || traffic::listener(f))
            .map_err(|e| format!("flow {}: listener on {}: {e}", f.name, plan.nodes[f.dst].name))?;
        listeners.push(l);
        let c = sys::with_netns(&plan.nodes[f.src].netns, || traffic::client(f))
            .map_err(|e| format!("flow {}: socket on {}: {e}", f.name, plan.nodes[f.src].name))?;
        clients.push(c);
    }
    let mut ping_fds = Vec::new();
    for p in &plan.pings {
        let fd = sys::with_netns(&plan.nodes[p.src].netns, || traffic::ping_socket(p))
            .map_err(|e| format!("ping {}: {e}", p.name))?;
        ping_fds.push(fd);
    }
    // Watched ports: a poller per switch namespace, opened there.
    let watched: Vec<&PortPlan> = plan.ports().filter(|p| p.monitor.is_some()).collect();
    let mut pollers = Vec::new();
    for p in &watched {
        let ns = &plan.nodes[p.node].netns;
        let (poller, idx) = sys::with_netns(ns, || Ok((QdiscPoller::new()?, qpoll::ifindex(&p.dev)?)))
            .map_err(|e| format!("queue poller for {}: {e}", p.monitor.as_deref().unwrap_or("")))?;
        pollers.push((poller, idx));
    }
    let dq = dequeue_port(plan);
    let capture = match dq {
        Some(p) => Some(
            sys::with_netns(&plan.nodes[p.node].netns, || DequeueCapture::open(&p.dev))
                .map_err(|e| format!("dequeue capture on {}: {e}", p.dev))?,
        ),
        None => None,
    };
    let start_counters = port_counters(&mut pollers);

    // Per-ACK state of every sender: tcp_probe on the listeners' ports (non-fatal if tracefs is
    // unavailable; the 1 ms tcp_info samples remain).
    let n = plan.flows.len() as u16;
    let mut probe = if n > 0 {
        match crate::trace::ProbeTrace::start(&plan.prefix, 5001, 5000 + n, record) {
            Ok(t) => Some(t),
            Err(e) => {
                progress(&format!("per-ACK tracing unavailable: {e}"));
                None
            }
        }
    } else {
        None
    };
    let clock = Clock::start_in(Duration::from_millis(200));
    progress("running");
    let flow_fds: Vec<Arc<Mutex<Option<RawFd>>>> = plan.flows.iter().map(|_| Arc::new(Mutex::new(None))).collect();
    let mut receivers = Vec::new();
    for l in listeners {
        let st = stop.clone();
        receivers.push(std::thread::spawn(move || traffic::run_receiver(l, st)));
    }
    let mut senders = Vec::new();
    for (i, (f, fd)) in plan.flows.iter().zip(clients).enumerate() {
        let (f, st, slot) = (f.clone(), stop.clone(), flow_fds[i].clone());
        senders.push(std::thread::spawn(move || traffic::run_sender(f, fd, clock, end_ns, st, slot)));
    }
    let mut pingers = Vec::new();
    for (i, (p, fd)) in plan.pings.iter().zip(ping_fds).enumerate() {
        let (p, st) = (p.clone(), stop.clone());
        let id = (std::process::id() as u16).wrapping_add(i as u16);
        pingers.push(std::thread::spawn(move || traffic::run_ping(p, fd, id, clock, end_ns, st)));
    }
    let capture_thread = capture.map(|mut cap| {
        let st = stop.clone();
        std::thread::spawn(move || {
            let mut gaps = Vec::new();
            let mut last: Option<(u64, u32)> = None;
            let mut len = 0u32;
            while !st.load(Ordering::Relaxed) {
                match cap.next() {
                    Ok(Some(fr)) => {
                        // Full-size frames only: the ideal gap is one MTU at the link rate.
                        if let Some((t, l)) = last {
                            if l == fr.len && fr.len >= 1000 && fr.t_ns >= t {
                                gaps.push((fr.t_ns - t).min(u32::MAX as u64) as u32);
                                len = fr.len;
                            }
                        }
                        last = Some((fr.t_ns, fr.len));
                    }
                    Ok(None) => {}
                    Err(_) => break,
                }
            }
            (gaps, len, cap.kernel_drops().unwrap_or(0))
        })
    });

    let ss_thread = (plan.ss_every_ns > 0 && !plan.flows.is_empty()).then(|| {
        let st = stop.clone();
        let (every, filter) = (plan.ss_every_ns, ss_filter(plan));
        let mut nodes: Vec<usize> = plan.flows.iter().flat_map(|f| [f.src, f.dst]).collect();
        nodes.sort_unstable();
        nodes.dedup();
        let nodes: Vec<(String, String)> =
            nodes.into_iter().map(|i| (plan.nodes[i].name.clone(), plan.nodes[i].netns.clone())).collect();
        std::thread::spawn(move || ss_snapshots(&nodes, &filter, every, end_ns, clock, &st))
    });

    // The sampler runs on this thread.
    let interval = plan.interval_ns.max(100_000);
    let mut queue_series: Vec<QueueSeries> = watched.iter().map(|_| Vec::new()).collect();
    let mut flow_series: Vec<FlowSeries> = plan.flows.iter().map(|_| Vec::new()).collect();
    let mut next = 0u64;
    while next <= end_ns && !INTERRUPTED.load(Ordering::Relaxed) {
        clock.sleep_until(next, &INTERRUPTED);
        let t = clock.now();
        for (k, (pl, idx)) in pollers.iter_mut().enumerate() {
            if let Some(s) = root_stats(pl, *idx) {
                queue_series[k].push((t, s.qlen, s.backlog));
            }
        }
        for (k, slot) in flow_fds.iter().enumerate() {
            let g = slot.lock().unwrap();
            if let Some(fd) = *g {
                if let Ok(i) = sys::tcp_info(fd) {
                    flow_series[k].push((t, i.snd_cwnd, i.bytes_acked, i.rtt, i.snd_ssthresh));
                }
            }
        }
        if let Some(p) = probe.as_mut() {
            p.drain();
        }
        next += interval;
        if next % 1_000_000_000 < interval {
            progress(&format!("{:.0}/{:.0} s", next as f64 / 1e9, end_ns as f64 / 1e9));
        }
    }
    let end_counters = port_counters(&mut pollers);
    stop.store(true, Ordering::SeqCst);
    let flows: Vec<FlowResult> = senders.into_iter().map(|h| h.join().unwrap_or_default()).collect();
    let received: Vec<u64> = receivers.into_iter().map(|h| h.join().unwrap_or(0)).collect();
    let pings: Vec<(u64, Vec<f64>)> = pingers.into_iter().map(|h| h.join().unwrap_or_default()).collect();
    let ss = ss_thread.map(|h| h.join().unwrap_or_default()).unwrap_or_default();
    let (dequeue_gaps, dequeue_frame_len, capture_drops) =
        capture_thread.map(|h| h.join().unwrap_or_default()).unwrap_or_default();
    if let Some(f) = flows.iter().zip(&plan.flows).find_map(|(r, f)| r.error.as_ref().map(|e| (f, e))) {
        return Err(format!("flow {}: {}", f.0.name, f.1));
    }
    let (probes, probe_overruns) = match probe.as_mut() {
        Some(p) => {
            p.drain();
            let ev = std::mem::take(&mut p.events)
                .into_iter()
                .map(|e| ((e.dport - 5001) as usize, clock.rel(e.t_ns), e))
                .collect();
            (ev, p.overruns())
        }
        None => (Vec::new(), 0),
    };
    drop(probe);
    let names: Vec<String> = watched.iter().map(|p| p.monitor.clone().unwrap_or_default()).collect();
    let port_counters = names
        .iter()
        .zip(start_counters.iter().zip(&end_counters))
        .map(|(n, (a, b))| {
            (
                n.clone(),
                PortCounters {
                    packets: b.packets.saturating_sub(a.packets),
                    bytes: b.bytes.saturating_sub(a.bytes),
                    drops: b.drops.saturating_sub(a.drops),
                },
            )
        })
        .collect();
    Ok(Apps {
        queue_series: names.iter().cloned().zip(queue_series).collect(),
        port_counters,
        flows,
        flow_series,
        received,
        pings,
        dequeue_port: dq.and_then(|p| p.monitor.clone()),
        dequeue_gaps,
        dequeue_frame_len,
        capture_drops,
        probes,
        probe_overruns,
        ss,
    })
}

/// The `ss` filter for the run's connections: the listeners' ports, on either end.
fn ss_filter(plan: &Plan) -> String {
    let (lo, hi) = plan.flows.iter().fold((u16::MAX, 0), |(lo, hi), f| (lo.min(f.dst_port), hi.max(f.dst_port)));
    format!("( dport >= :{lo} and dport <= :{hi} ) or ( sport >= :{lo} and sport <= :{hi} )")
}

/// `ss -tin` in each namespace every `every` ns and at the end, as a user would run it beside
/// the experiment (in the namespace, so it sees that host's sockets only).
fn ss_snapshots(
    nodes: &[(String, String)],
    filter: &str,
    every: u64,
    end_ns: u64,
    clock: Clock,
    stop: &AtomicBool,
) -> Vec<(i64, String, String, String)> {
    let mut out = Vec::new();
    let mut t = every.min(end_ns);
    loop {
        clock.sleep_until(t, stop);
        if stop.load(Ordering::Relaxed) || INTERRUPTED.load(Ordering::Relaxed) {
            break;
        }
        let now = clock.now();
        for (name, ns) in nodes {
            let o = std::process::Command::new("ip")
                .args(["netns", "exec", ns, "ss", "-tin", "state", "established", filter])
                .output();
            let text = match o {
                Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).into_owned(),
                Ok(o) => format!("ss failed: {}", String::from_utf8_lossy(&o.stderr).trim()),
                Err(e) => format!("ss failed: {e}"),
            };
            out.push((now, name.clone(), ns.clone(), text));
        }
        if t >= end_ns {
            break;
        }
        // The last snapshot is taken just before the flows stop.
        t = (t + every).min(end_ns.saturating_sub(1_000_000).max(t + 1));
    }
    out
}
