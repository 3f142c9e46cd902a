//! ccsim's BPF programs and the process that holds them.
//!
//! Three BPF objects are built from `crates/emulate/bpf/` by `build.rs` (when clang, bpftool, gcc
//! and libbpf are installed) and embedded in the binary:
//!
//! * `ccsim_dctcp` - DCTCP as Linux's `tcp_dctcp.c`, a struct_ops congestion control;
//! * `ccsim_nv` - TCP-NV as Linux's `tcp_nv.c`, with a sock_ops program that supplies the base
//!   RTT (`BPF_SOCK_OPS_BASE_RTT` in the kernel) from per-address-pair rules;
//! * `ecnmark` - DCTCP-style step marking (CE when the port's HTB queue exceeds K) at the tc
//!   egress hook of a switch port, one instance per port.
//!
//! Both CCs implement `.cong_control` (PRR, growth and pacing done by the CC, as the kernel would)
//! and repair the garbage ssthresh/cwnd that a skipped struct_ops invocation leaves behind (see
//! `shared/research/kernel-emulation-feasibility.md` §1.5).
//!
//! [`load`] writes the objects and `ccsim-bpf-loader` into a work directory and starts the loader,
//! which attaches everything and holds it: the CCs and the sock_ops program through BPF links, the
//! markers as tc filters. [`Loaded::finish`] (or dropping [`Loaded`]) closes the loader's stdin;
//! it then prints its counters and detaches everything. The loader also exits when the process
//! that started it dies (`PR_SET_PDEATHSIG`, which follows the *thread* that spawned it: call
//! [`load`] from a thread that outlives the [`Loaded`]).
#![cfg_attr(not(ccsim_bpf), allow(unused_imports, dead_code))]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::registry::{Entry, ProcessId, Record, Resource};

/// The name ccsim's DCTCP registers under (`TCP_CONGESTION`).
pub const DCTCP_NAME: &str = "ccsim_dctcp";
/// The name ccsim's TCP-NV registers under (`TCP_CONGESTION`).
pub const NV_NAME: &str = "ccsim_nv";
/// The loader's executable name.
pub const LOADER_NAME: &str = "ccsim-bpf-loader";

/// How long [`load`] waits for the loader to attach everything.
const READY_TIMEOUT: Duration = Duration::from_secs(20);

#[cfg(ccsim_bpf)]
mod artefacts {
    pub const DCTCP: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/ccsim_dctcp.bpf.o"));
    pub const NV: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/ccsim_nv.bpf.o"));
    pub const ECNMARK: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/ecnmark.bpf.o"));
    pub const LOADER: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/ccsim-bpf-loader"));
}

/// Whether this binary carries the BPF programs. The error says what was missing when it was
/// built and how to fix that.
pub fn available() -> Result<(), String> {
    #[cfg(ccsim_bpf)]
    {
        Ok(())
    }
    #[cfg(not(ccsim_bpf))]
    {
        let reason = include_str!(concat!(env!("OUT_DIR"), "/bpf_unavailable.txt"));
        let reason = reason.lines().next().unwrap_or("unknown reason").trim();
        Err(format!(
            "this ccsim was built without its BPF programs ({reason}); install clang, llvm, libbpf-dev, bpftool \
             and gcc (Debian/Ubuntu: apt-get install clang llvm libbpf-dev bpftool gcc libelf-dev zlib1g-dev) and \
             rebuild ccsim"
        ))
    }
}

/// The unit of a marker's threshold K.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MarkUnit {
    Packets,
    Bytes,
}

/// One ECN marker: the egress of `dev` in namespace `netns` marks CE above `k`.
#[derive(Clone, Debug)]
pub struct Marker {
    /// Namespace name under /var/run/netns (a path if it contains '/').
    pub netns: String,
    pub dev: String,
    /// Marking threshold: the packet is marked if queue-before-it + it > k (packets or bytes).
    pub k: u64,
    pub unit: MarkUnit,
    /// Drop (instead of queueing) not-ECT packets that arrive over K.
    pub drop_non_ect: bool,
}

/// What to load.
#[derive(Clone, Debug, Default)]
pub struct BpfSetup {
    /// Register ccsim_dctcp.
    pub dctcp: bool,
    /// Register ccsim_nv.
    pub nv: bool,
    /// The cgroup v2 directory whose sockets get their NV base RTT from the sock_ops program.
    pub cgroup: Option<PathBuf>,
    /// Base RTT rules: (local address, remote address, base RTT in µs), for ccsim_nv.
    pub base_rtt: Vec<(std::net::Ipv4Addr, std::net::Ipv4Addr, u32)>,
    pub markers: Vec<Marker>,
}

/// The loader's counters at the end of a run.
#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
pub struct BpfCounters {
    /// Per congestion control (ccsim_dctcp, ccsim_nv): counter name -> value. Among them
    /// `guard_ssthresh` and `guard_cwnd` (repairs of a skipped struct_ops invocation),
    /// `ssthresh_calls`, `prr_episodes`; DCTCP's `alpha_updates`, `alpha_sum` (mean alpha =
    /// alpha_sum / alpha_updates / 1024), `last_alpha`; NV's `nv_base_rtt_from_storage`.
    #[serde(default)]
    pub cc: BTreeMap<String, BTreeMap<String, u64>>,
    /// One per marker, in the order of [`BpfSetup::markers`].
    #[serde(default)]
    pub markers: Vec<MarkerCounters>,
    /// Sockets the sock_ops program gave a base RTT.
    #[serde(default)]
    pub base_rtt_set: u64,
}

/// One marker's counters.
#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
pub struct MarkerCounters {
    pub dev: String,
    /// ECT packets marked CE.
    #[serde(default)]
    pub marks: u64,
    /// Not-ECT packets dropped over K (drop policy); these never reach the qdisc.
    #[serde(default)]
    pub drops_non_ect: u64,
    /// Packets that arrived over K already CE-marked.
    #[serde(default)]
    pub over_k_ce: u64,
}

/// The running loader. Dropping it without [`Loaded::finish`] still detaches everything.
pub struct Loaded {
    child: Option<Child>,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Arc<Mutex<String>>,
    /// The loader's entry in the run's registry, dropped from it once the loader is reaped.
    entry: Option<Entry>,
}

fn netns_path(netns: &str) -> String {
    if netns.contains('/') {
        netns.to_string()
    } else {
        format!("/var/run/netns/{netns}")
    }
}

/// The loader's command line for `setup`, with the artefacts in `dir`.
fn loader_args(setup: &BpfSetup, dir: &Path) -> Vec<String> {
    let p = |f: &str| dir.join(f).display().to_string();
    let mut args = Vec::new();
    if setup.dctcp {
        args.extend(["--cc".to_string(), p("ccsim_dctcp.bpf.o")]);
    }
    if setup.nv {
        args.extend(["--cc".to_string(), p("ccsim_nv.bpf.o")]);
        if let Some(cg) = &setup.cgroup {
            args.extend(["--cgroup".to_string(), cg.display().to_string()]);
        }
        for (local, remote, usec) in &setup.base_rtt {
            args.extend(["--base-rtt".to_string(), local.to_string(), remote.to_string(), usec.to_string()]);
        }
    }
    for m in &setup.markers {
        args.extend([
            "--mark".to_string(),
            p("ecnmark.bpf.o"),
            netns_path(&m.netns),
            m.dev.clone(),
            m.k.to_string(),
            match m.unit {
                MarkUnit::Packets => "packets".to_string(),
                MarkUnit::Bytes => "bytes".to_string(),
            },
            if m.drop_non_ect { "drop".to_string() } else { "queue".to_string() },
        ]);
    }
    args
}

#[cfg(ccsim_bpf)]
fn write_artefacts(dir: &Path) -> Result<PathBuf, String> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for (name, bytes) in [
        ("ccsim_dctcp.bpf.o", artefacts::DCTCP),
        ("ccsim_nv.bpf.o", artefacts::NV),
        ("ecnmark.bpf.o", artefacts::ECNMARK),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    // Write under a temporary name and rename, so that no writable fd of the executable is open
    // when it is exec'd.
    let loader = dir.join(LOADER_NAME);
    let tmp = dir.join(format!(".{LOADER_NAME}.tmp"));
    {
        let mut f = std::fs::File::create(&tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
        f.write_all(artefacts::LOADER).map_err(|e| format!("{}: {e}", tmp.display()))?;
    }
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, &loader).map_err(|e| format!("{}: {e}", loader.display()))?;
    Ok(loader)
}

/// Load and attach everything `setup` asks for; returns once the loader reports `ready`.
/// `workdir` receives the BPF objects and the loader executable. The loader process is recorded
/// in `record` (the run's registry) right after it starts.
pub fn load(setup: &BpfSetup, workdir: &Path, record: Option<&Record>) -> Result<Loaded, String> {
    available()?;
    #[cfg(not(ccsim_bpf))]
    {
        let _ = (setup, workdir, record);
        unreachable!("available() fails without ccsim_bpf")
    }
    #[cfg(ccsim_bpf)]
    {
        if !setup.dctcp && !setup.nv && setup.markers.is_empty() {
            return Err("nothing to load: no congestion control and no marker requested".into());
        }
        let loader = write_artefacts(workdir)?;
        let args = loader_args(setup, workdir);
        let mut child = spawn_retrying(&loader, &args)?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr_pipe = child.stderr.take().expect("piped stderr");
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                match line {
                    Ok(l) => {
                        if tx.send(l).is_err() {
                            break;
                        }
                    }
                    Err(_) => break,
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        {
            let stderr = stderr.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stderr_pipe).lines() {
                    let Ok(l) = line else { break };
                    if let Ok(mut s) = stderr.lock() {
                        if s.len() < 64 * 1024 {
                            s.push_str(&l);
                            s.push('\n');
                        }
                    }
                }
            });
        }
        let pid = child.id();
        let mut loaded = Loaded { child: Some(child), stdin, lines, stderr, entry: None };
        if let Some(record) = record {
            // On error `loaded` is dropped, which stops the loader.
            let process = ProcessId::of(pid).map_err(|e| format!("the BPF loader (pid {pid}): {e}"))?;
            loaded.entry = Some(record.add(Resource::BpfLoader(process))?);
        }
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match loaded.lines.recv_timeout(left) {
                Ok(l) if l.trim() == "ready" => return Ok(loaded),
                Ok(_) => continue,
                Err(RecvTimeoutError::Timeout) => {
                    let msg = loaded.abort();
                    return Err(format!(
                        "the BPF loader did not become ready within {} s{}",
                        READY_TIMEOUT.as_secs(),
                        if msg.is_empty() { String::new() } else { format!(": {msg}") }
                    ));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    let status = loaded.child.as_mut().and_then(|c| c.wait().ok());
                    loaded.child = None;
                    // Give the stderr reader a moment to collect the last lines.
                    std::thread::sleep(Duration::from_millis(50));
                    let msg = loaded.stderr_text();
                    return Err(format!(
                        "loading the BPF programs failed{}: {}",
                        status.map(|s| format!(" ({s})")).unwrap_or_default(),
                        if msg.is_empty() { "no message".to_string() } else { msg }
                    ));
                }
            }
        }
    }
}

/// Spawn the loader; retries ETXTBSY, which a concurrent fork elsewhere in the process can cause
/// right after the executable was written.
#[cfg(ccsim_bpf)]
fn spawn_retrying(loader: &Path, args: &[String]) -> Result<Child, String> {
    let mut tries = 0;
    loop {
        match Command::new(loader)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
        {
            Ok(c) => return Ok(c),
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) && tries < 20 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(25));
            }
            Err(e) => return Err(format!("{}: cannot start the BPF loader: {e}", loader.display())),
        }
    }
}

impl Loaded {
    fn stderr_text(&self) -> String {
        self.stderr.lock().map(|s| s.trim().to_string()).unwrap_or_default()
    }

    /// Kill the loader (it detaches its links on the way out only if it can; tc filters are
    /// removed with their namespaces). Returns what it wrote on stderr.
    fn abort(&mut self) -> String {
        self.stdin = None;
        if let Some(mut c) = self.child.take() {
            if !wait_timeout(&mut c, Duration::from_secs(2)) {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
        self.stderr_text()
    }

    /// The loader's process id.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(|c| c.id())
    }

    /// Detach everything and return the counters.
    pub fn finish(mut self) -> Result<BpfCounters, String> {
        self.stdin = None; // EOF: the loader prints its counters and detaches
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut json = None;
        while json.is_none() {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) if l.trim_start().starts_with('{') => json = Some(l),
                Ok(_) => continue,
                Err(_) => break,
            }
        }
        let mut child = self.child.take().ok_or("the BPF loader is gone")?;
        let exited = wait_timeout(&mut child, Duration::from_secs(10));
        if !exited {
            let _ = child.kill();
            let _ = child.wait();
        }
        std::thread::sleep(Duration::from_millis(20));
        let status = child.try_wait().ok().flatten();
        let json = json.ok_or_else(|| {
            format!(
                "the BPF loader ended without its counters{}: {}",
                status.map(|s| format!(" ({s})")).unwrap_or_default(),
                self.stderr_text()
            )
        })?;
        if let Some(s) = status {
            if !s.success() {
                return Err(format!("the BPF loader failed ({s}): {}", self.stderr_text()));
            }
        }
        parse_counters(&json)
    }
}

impl Drop for Loaded {
    fn drop(&mut self) {
        self.stdin = None;
        if let Some(mut c) = self.child.take() {
            if !wait_timeout(&mut c, Duration::from_secs(2)) {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
        // Every path that takes the child reaps it: the loader is gone.
        if let Some(e) = self.entry.take() {
            e.gone();
        }
    }
}

/// Wait for `child` up to `limit`; true if it exited.
fn wait_timeout(child: &mut Child, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => return true,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            Ok(None) => return false,
            Err(_) => return true,
        }
    }
}

/// Parse the loader's JSON line.
pub fn parse_counters(json: &str) -> Result<BpfCounters, String> {
    serde_json::from_str(json).map_err(|e| format!("cannot parse the BPF loader's counters ({e}): {json}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn available_matches_the_build() {
        #[cfg(ccsim_bpf)]
        assert!(available().is_ok());
        #[cfg(not(ccsim_bpf))]
        {
            let e = available().unwrap_err();
            assert!(e.contains("clang") && e.contains("rebuild"), "{e}");
        }
    }

    #[test]
    fn loader_command_line() {
        let setup = BpfSetup {
            dctcp: true,
            nv: true,
            cgroup: Some(PathBuf::from("/sys/fs/cgroup/x")),
            base_rtt: vec![("10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap(), 120)],
            markers: vec![Marker {
                netns: "cs12-sw0".into(),
                dev: "p3".into(),
                k: 30000,
                unit: MarkUnit::Bytes,
                drop_non_ect: true,
            }],
        };
        let a = loader_args(&setup, Path::new("/w"));
        assert_eq!(
            a.join(" "),
            "--cc /w/ccsim_dctcp.bpf.o --cc /w/ccsim_nv.bpf.o --cgroup /sys/fs/cgroup/x \
             --base-rtt 10.0.0.1 10.0.0.2 120 --mark /w/ecnmark.bpf.o /var/run/netns/cs12-sw0 p3 30000 bytes drop"
        );
    }

    #[test]
    fn counters_parse() {
        let c = parse_counters(
            r#"{"cc":{"ccsim_dctcp":{"guard_ssthresh":1,"ssthresh_calls":7}},"markers":[{"netns":"/var/run/netns/a","dev":"p1","k":20,"unit":"packets","drop_non_ect":false,"marks":5,"drops_non_ect":0,"over_k_ce":2,"over_k_non_ect":0,"packets":9}],"base_rtt_set":3}"#,
        )
        .unwrap();
        assert_eq!(c.cc["ccsim_dctcp"]["ssthresh_calls"], 7);
        assert_eq!(c.markers[0].dev, "p1");
        assert_eq!((c.markers[0].marks, c.markers[0].over_k_ce), (5, 2));
        assert_eq!(c.base_rtt_set, 3);
    }

    #[cfg(ccsim_bpf)]
    mod root {
        use super::super::*;
        use std::io::{Read, Write};
        use std::net::{Ipv4Addr, TcpListener, TcpStream};
        use std::os::fd::{AsRawFd, FromRawFd};
        use std::sync::Mutex;

        /// The CC names are global: one BPF test at a time.
        static SERIAL: Mutex<()> = Mutex::new(());

        fn is_root() -> bool {
            // SAFETY: geteuid has no preconditions.
            unsafe { libc::geteuid() == 0 }
        }

        fn sh(args: &[&str]) -> Result<(), String> {
            let o = Command::new(args[0]).args(&args[1..]).output().map_err(|e| format!("{}: {e}", args[0]))?;
            if o.status.success() {
                Ok(())
            } else {
                Err(format!("{}: {}", args.join(" "), String::from_utf8_lossy(&o.stderr)))
            }
        }

        fn available_ccs() -> String {
            std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control").unwrap_or_default()
        }

        /// Three namespaces a - r - b (r forwards), HTB at `rate` with a 500-packet FIFO on r's
        /// port towards b; removed on drop. The bottleneck is on a forwarding namespace as in an
        /// emulation: traffic a host sends through its own qdisc is still in GSO super-packets
        /// there (TCP always uses software GSO; it is segmented after the qdisc).
        struct Pair {
            a: String,
            r: String,
            b: String,
            workdir: PathBuf,
            cgroup: Option<(PathBuf, PathBuf)>,
        }

        const A_IP: &str = "10.99.1.1";
        const B_IP: &str = "10.99.2.1";

        impl Pair {
            fn new(tag: &str, rate: &str) -> Result<Pair, String> {
                let id = format!("{tag}{:x}", std::process::id() & 0xffff);
                let pair = Pair {
                    a: format!("ccbt{id}a"),
                    r: format!("ccbt{id}r"),
                    b: format!("ccbt{id}b"),
                    workdir: std::env::temp_dir().join(format!("ccsim-bpftest-{id}")),
                    cgroup: None,
                };
                for ns in [&pair.a, &pair.r, &pair.b] {
                    sh(&["ip", "netns", "add", ns])?;
                    sh(&["ip", "-n", ns, "link", "set", "lo", "up"])?;
                    sh(&["ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv4.tcp_ecn=1"])?;
                }
                sh(&["ip", "netns", "exec", &pair.r, "sysctl", "-qw", "net.ipv4.ip_forward=1"])?;
                sh(&[
                    "ip", "link", "add", "ea", "netns", &pair.a, "type", "veth", "peer", "name", "ra", "netns", &pair.r,
                ])?;
                sh(&[
                    "ip", "link", "add", "eb", "netns", &pair.b, "type", "veth", "peer", "name", "rb", "netns", &pair.r,
                ])?;
                for (ns, dev, addr) in [
                    (&pair.a, "ea", "10.99.1.1/24"),
                    (&pair.r, "ra", "10.99.1.2/24"),
                    (&pair.r, "rb", "10.99.2.2/24"),
                    (&pair.b, "eb", "10.99.2.1/24"),
                ] {
                    sh(&["ip", "-n", ns, "addr", "add", addr, "dev", dev])?;
                    sh(&["ip", "-n", ns, "link", "set", dev, "up"])?;
                    let _ = sh(&[
                        "ip", "netns", "exec", ns, "ethtool", "-K", dev, "tso", "off", "gso", "off", "gro", "off",
                        "tx", "off", "rx", "off",
                    ]);
                }
                sh(&["ip", "-n", &pair.a, "route", "add", "default", "via", "10.99.1.2"])?;
                sh(&["ip", "-n", &pair.b, "route", "add", "default", "via", "10.99.2.2"])?;
                let r = pair.r.as_str();
                sh(&["tc", "-n", r, "qdisc", "add", "dev", "rb", "root", "handle", "1:", "htb", "default", "10"])?;
                sh(&[
                    "tc", "-n", r, "class", "add", "dev", "rb", "parent", "1:", "classid", "1:10", "htb", "rate", rate,
                    "ceil", rate,
                ])?;
                sh(&["tc", "-n", r, "qdisc", "add", "dev", "rb", "parent", "1:10", "pfifo", "limit", "500"])?;
                Ok(pair)
            }

            /// Put this process into a fresh cgroup v2 (undone on drop).
            fn enter_cgroup(&mut self) -> Result<PathBuf, String> {
                let mounts = std::fs::read_to_string("/proc/mounts").map_err(|e| e.to_string())?;
                let root = mounts
                    .lines()
                    .map(|l| l.split_whitespace().collect::<Vec<_>>())
                    .find(|f| f.len() > 2 && f[2] == "cgroup2")
                    .map(|f| PathBuf::from(f[1]))
                    .ok_or("no cgroup2 mount")?;
                let me = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
                let cur = me.lines().find_map(|l| l.strip_prefix("0::")).unwrap_or("/").trim_start_matches('/');
                let parent = if cur.is_empty() { root.clone() } else { root.join(cur) };
                let dir = root.join(format!("{}-cg", self.a));
                std::fs::create_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
                self.cgroup = Some((dir.clone(), parent.join("cgroup.procs")));
                std::fs::write(dir.join("cgroup.procs"), std::process::id().to_string()).map_err(|e| e.to_string())?;
                Ok(dir)
            }
        }

        impl Drop for Pair {
            fn drop(&mut self) {
                if let Some((dir, parent_procs)) = &self.cgroup {
                    let _ = std::fs::write(parent_procs, std::process::id().to_string());
                    let _ = std::fs::remove_dir(dir);
                }
                for ns in [&self.a, &self.r, &self.b] {
                    let _ = Command::new("ip").args(["netns", "del", ns]).status();
                }
                let _ = std::fs::remove_dir_all(&self.workdir);
            }
        }

        /// Run `f` on a thread that has entered namespace `ns`.
        fn in_netns<T: Send + 'static>(
            ns: &str,
            f: impl FnOnce() -> Result<T, String> + Send + 'static,
        ) -> std::thread::JoinHandle<Result<T, String>> {
            let path = netns_path(ns);
            std::thread::spawn(move || {
                let file = std::fs::File::open(&path).map_err(|e| format!("{path}: {e}"))?;
                // SAFETY: setns on a valid fd; it only changes this thread's network namespace.
                if unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
                    return Err(format!("setns {path}: {}", std::io::Error::last_os_error()));
                }
                f()
            })
        }

        fn set_cc(fd: i32, cc: &str) -> Result<(), String> {
            // SAFETY: setsockopt with a valid fd and a buffer of the given length.
            let r = unsafe {
                libc::setsockopt(fd, libc::IPPROTO_TCP, libc::TCP_CONGESTION, cc.as_ptr() as *const _, cc.len() as _)
            };
            if r != 0 {
                return Err(format!("TCP_CONGESTION {cc}: {}", std::io::Error::last_os_error()));
            }
            Ok(())
        }

        /// A TCP connection from `a` to `b` with congestion control `cc` on
        /// both ends, sending `bytes`. Returns the bytes received.
        fn transfer(pair: &Pair, cc: &'static str, port: u16, bytes: usize) -> Result<usize, String> {
            let (ready_tx, ready_rx) = std::sync::mpsc::channel();
            let server = in_netns(&pair.b, move || {
                let l = TcpListener::bind((B_IP, port)).map_err(|e| e.to_string())?;
                set_cc(l.as_raw_fd(), cc)?;
                let _ = ready_tx.send(());
                let (mut s, _) = l.accept().map_err(|e| e.to_string())?;
                let mut buf = vec![0u8; 1 << 16];
                let mut n = 0;
                loop {
                    match s.read(&mut buf) {
                        Ok(0) => break,
                        Ok(k) => n += k,
                        Err(e) => return Err(e.to_string()),
                    }
                }
                Ok(n)
            });
            ready_rx.recv_timeout(Duration::from_secs(5)).map_err(|_| "server did not start".to_string())?;
            let client = in_netns(&pair.a, move || {
                // SAFETY: plain socket(2); the fd is owned by the TcpStream below.
                let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0) };
                if fd < 0 {
                    return Err(std::io::Error::last_os_error().to_string());
                }
                // SAFETY: fd is a fresh socket we own.
                let mut s = unsafe { TcpStream::from_raw_fd(fd) };
                set_cc(fd, cc)?;
                let addr = libc::sockaddr_in {
                    sin_family: libc::AF_INET as _,
                    sin_port: port.to_be(),
                    sin_addr: libc::in_addr { s_addr: u32::from(B_IP.parse::<Ipv4Addr>().unwrap()).to_be() },
                    sin_zero: [0; 8],
                };
                // SAFETY: connect with a valid sockaddr_in of the given size.
                let r = unsafe {
                    libc::connect(
                        fd,
                        &addr as *const libc::sockaddr_in as *const libc::sockaddr,
                        std::mem::size_of::<libc::sockaddr_in>() as _,
                    )
                };
                if r != 0 {
                    return Err(format!("connect: {}", std::io::Error::last_os_error()));
                }
                let buf = vec![0x5au8; 1 << 16];
                let mut left = bytes;
                while left > 0 {
                    let k = left.min(buf.len());
                    s.write_all(&buf[..k]).map_err(|e| e.to_string())?;
                    left -= k;
                }
                Ok(())
            });
            client.join().map_err(|_| "client panicked".to_string())??;
            server.join().map_err(|_| "server panicked".to_string())?
        }

        #[test]
        fn ccs_register_and_unregister() {
            if !is_root() {
                eprintln!("skipped: needs root");
                return;
            }
            let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
            let dir = std::env::temp_dir().join(format!("ccsim-bpftest-reg-{}", std::process::id()));
            struct Rm(PathBuf);
            impl Drop for Rm {
                fn drop(&mut self) {
                    let _ = std::fs::remove_dir_all(&self.0);
                }
            }
            let _rm = Rm(dir.clone());
            let setup = BpfSetup { dctcp: true, nv: true, ..Default::default() };
            let loaded = load(&setup, &dir, None).unwrap();
            let ccs = available_ccs();
            assert!(ccs.split_whitespace().any(|c| c == DCTCP_NAME), "{ccs}");
            assert!(ccs.split_whitespace().any(|c| c == NV_NAME), "{ccs}");
            let counters = loaded.finish().unwrap();
            assert!(counters.cc.contains_key(DCTCP_NAME) && counters.cc.contains_key(NV_NAME), "{counters:?}");
            let ccs = available_ccs();
            assert!(!ccs.split_whitespace().any(|c| c == DCTCP_NAME || c == NV_NAME), "still registered: {ccs}");

            // Dropping without finish also unregisters.
            let loaded = load(&setup, &dir, None).unwrap();
            drop(loaded);
            let ccs = available_ccs();
            assert!(!ccs.split_whitespace().any(|c| c == DCTCP_NAME || c == NV_NAME), "still registered: {ccs}");
        }

        #[test]
        fn load_errors_name_the_device() {
            if !is_root() {
                eprintln!("skipped: needs root");
                return;
            }
            let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
            let pair = Pair::new("e", "10mbit").unwrap();
            let setup = BpfSetup {
                markers: vec![Marker {
                    netns: pair.a.clone(),
                    dev: "nosuchdev0".into(),
                    k: 10,
                    unit: MarkUnit::Packets,
                    drop_non_ect: false,
                }],
                ..Default::default()
            };
            let err = load(&setup, &pair.workdir, None).err().expect("must fail");
            assert!(err.contains("nosuchdev0"), "{err}");
        }

        #[test]
        fn dctcp_over_a_marking_port() {
            if !is_root() {
                eprintln!("skipped: needs root");
                return;
            }
            let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
            let pair = Pair::new("d", "20mbit").unwrap();
            let setup = BpfSetup {
                dctcp: true,
                markers: vec![Marker {
                    netns: pair.r.clone(),
                    dev: "rb".into(),
                    k: 5,
                    unit: MarkUnit::Packets,
                    drop_non_ect: false,
                }],
                ..Default::default()
            };
            let loaded = load(&setup, &pair.workdir, None).unwrap();
            let got = transfer(&pair, DCTCP_NAME, 5301, 3 << 20).unwrap();
            assert_eq!(got, 3 << 20);
            let c = loaded.finish().unwrap();
            let d = &c.cc[DCTCP_NAME];
            assert!(c.markers[0].marks > 0, "{c:?}");
            assert_eq!(c.markers[0].dev, "rb");
            assert!(d["alpha_updates"] > 0 && d["ssthresh_calls"] > 0 && d["cong_control_calls"] > 0, "{d:?}");
            assert_eq!(d["reno_fallbacks"], 0, "ECN was not negotiated: {d:?}");
            // The filter is gone with the loader; the HTB stays.
            let o = Command::new("tc").args(["-n", &pair.r, "filter", "show", "dev", "rb", "egress"]).output().unwrap();
            assert!(String::from_utf8_lossy(&o.stdout).trim().is_empty(), "filter left behind");
        }

        #[test]
        fn nv_gets_its_base_rtt() {
            if !is_root() {
                eprintln!("skipped: needs root");
                return;
            }
            let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
            let mut pair = Pair::new("n", "20mbit").unwrap();
            let cg = match pair.enter_cgroup() {
                Ok(cg) => cg,
                Err(e) => {
                    eprintln!("skipped: no cgroup v2 ({e})");
                    return;
                }
            };
            let a: Ipv4Addr = A_IP.parse().unwrap();
            let b: Ipv4Addr = B_IP.parse().unwrap();
            let setup =
                BpfSetup { nv: true, cgroup: Some(cg), base_rtt: vec![(a, b, 150), (b, a, 150)], ..Default::default() };
            let loaded = load(&setup, &pair.workdir, None).unwrap();
            let got = transfer(&pair, NV_NAME, 5302, 2 << 20).unwrap();
            assert_eq!(got, 2 << 20);
            let c = loaded.finish().unwrap();
            let nv = &c.cc[NV_NAME];
            assert_eq!(c.base_rtt_set, 2, "{c:?}");
            assert_eq!(nv["nv_base_rtt_from_storage"], 2, "{nv:?}");
        }
    }
}
