//! Per-ACK congestion state from the kernel's `tcp:tcp_probe` tracepoint: cwnd, ssthresh and
//! srtt of every sender socket, each time a segment arrives on it.
//!
//! The run gets its own ftrace instance (`instances/ccsim-<prefix>`), so its buffer and filter
//! touch nothing else. The instance, and the tracefs mount if the run had to make one, are
//! guards: recorded in the run's registry, removed when dropped — after success, an error or an
//! interrupt — and dropped from the registry once removed.

use crate::registry::{Entry, Record, Resource};
use std::io::Read;
use std::path::{Path, PathBuf};

const TRACEFS: &str = "/sys/kernel/tracing";

/// One `tcp_probe` event of a sender socket.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Probe {
    /// CLOCK_MONOTONIC, ns.
    pub t_ns: u64,
    pub dport: u16,
    pub snd_cwnd: u32,
    pub ssthresh: u32,
    /// Smoothed RTT, µs.
    pub srtt_us: u32,
    pub snd_una: u32,
}

/// A tracefs mount this run made; unmounted when dropped.
struct TracefsMount {
    path: PathBuf,
    entry: Option<Entry>,
}

impl TracefsMount {
    /// Mounts tracefs at `path` and records the mount (right after: before, a failed mount
    /// would leave a record of somebody else's later mount).
    fn mount(path: &Path, record: &Record) -> Result<TracefsMount, String> {
        let out = std::process::Command::new("mount")
            .args(["-t", "tracefs", "tracefs"])
            .arg(path)
            .output()
            .map_err(|e| format!("cannot run mount for tracefs at {}: {e}", path.display()))?;
        if !out.status.success() {
            return Err(format!(
                "cannot mount tracefs at {}: {}",
                path.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        let mut mount = TracefsMount { path: path.to_path_buf(), entry: None };
        // On error the mount is dropped, and so unmounted.
        mount.entry = Some(record.add(Resource::TracefsMount { path: path.to_path_buf() })?);
        Ok(mount)
    }
}

impl Drop for TracefsMount {
    fn drop(&mut self) {
        let ok = std::process::Command::new("umount").arg(&self.path).output().is_ok_and(|o| o.status.success());
        if ok {
            if let Some(e) = self.entry.take() {
                e.gone();
            }
        }
    }
}

/// An ftrace instance directory of this run; removed when dropped.
struct FtraceInstance {
    dir: PathBuf,
    entry: Option<Entry>,
}

impl FtraceInstance {
    /// Records, then makes, the instance `dir`.
    fn create(dir: &Path, record: &Record) -> Result<FtraceInstance, String> {
        let entry = record.add(Resource::FtraceInstance { path: dir.to_path_buf() })?;
        if let Err(e) = std::fs::create_dir(dir) {
            entry.gone();
            return Err(format!("cannot make the ftrace instance {}: {e}", dir.display()));
        }
        Ok(FtraceInstance { dir: dir.to_path_buf(), entry: Some(entry) })
    }
}

impl Drop for FtraceInstance {
    fn drop(&mut self) {
        let _ = std::fs::write(self.dir.join("events/tcp/tcp_probe/enable"), "0");
        // Removing the instance frees its buffer; it fails while a file of it is open.
        if std::fs::remove_dir(&self.dir).is_ok() {
            if let Some(e) = self.entry.take() {
                e.gone();
            }
        }
    }
}

/// An ftrace instance recording `tcp_probe` for sockets whose destination port is in a range.
pub struct ProbeTrace {
    // Fields drop in this order: the pipe is closed before the instance is removed (an instance
    // can be removed only once nothing holds its files open), the instance before tracefs is
    // unmounted.
    pipe: std::fs::File,
    instance: FtraceInstance,
    _mount: Option<TracefsMount>,
    partial: String,
    pub events: Vec<Probe>,
}

fn write(p: &Path, v: &str) -> Result<(), String> {
    std::fs::write(p, v).map_err(|e| format!("{}: {e}", p.display()))
}

impl ProbeTrace {
    /// Start tracing sender sockets talking to ports `lo..=hi`, in an instance named after
    /// `prefix`, recorded in `record`.
    pub fn start(prefix: &str, lo: u16, hi: u16, record: &Record) -> Result<ProbeTrace, String> {
        let root = Path::new(TRACEFS);
        let mount = if root.join("instances").is_dir() { None } else { Some(TracefsMount::mount(root, record)?) };
        let instance = FtraceInstance::create(&root.join("instances").join(format!("ccsim-{prefix}")), record)?;
        let pipe_path = instance.dir.join("trace_pipe");
        let pipe = std::fs::File::open(&pipe_path).map_err(|e| format!("{}: {e}", pipe_path.display()))?;
        // From here on, an error drops the pipe, the instance and the mount, in that order.
        write(&instance.dir.join("trace_clock"), "mono")?;
        write(&instance.dir.join("buffer_size_kb"), "8192")?;
        let ev = instance.dir.join("events/tcp/tcp_probe");
        write(&ev.join("filter"), &format!("dport >= {lo} && dport <= {hi}"))?;
        write(&ev.join("enable"), "1")?;
        set_nonblocking(&pipe);
        Ok(ProbeTrace { pipe, instance, _mount: mount, partial: String::new(), events: Vec::new() })
    }

    /// Read what has arrived (call every few ms, so the buffer never fills).
    pub fn drain(&mut self) {
        let mut buf = [0u8; 65536];
        loop {
            match self.pipe.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    self.partial.push_str(&String::from_utf8_lossy(&buf[..n]));
                    let end = self.partial.rfind('\n').map_or(0, |i| i + 1);
                    let complete: String = self.partial.drain(..end).collect();
                    self.events.extend(complete.lines().filter_map(parse));
                }
                Err(_) => break,
            }
        }
    }

    /// Events the kernel dropped because the buffer was full.
    pub fn overruns(&self) -> u64 {
        let mut n = 0;
        for cpu in std::fs::read_dir(self.instance.dir.join("per_cpu")).into_iter().flatten().flatten() {
            if let Ok(s) = std::fs::read_to_string(cpu.path().join("stats")) {
                n += s
                    .lines()
                    .find_map(|l| l.strip_prefix("overrun:"))
                    .and_then(|v| v.trim().parse::<u64>().ok())
                    .unwrap_or(0);
            }
        }
        n
    }
}

fn set_nonblocking(f: &std::fs::File) {
    use std::os::fd::AsRawFd;
    // SAFETY: fcntl on a valid fd we own.
    unsafe {
        let fl = libc::fcntl(f.as_raw_fd(), libc::F_GETFL);
        libc::fcntl(f.as_raw_fd(), libc::F_SETFL, fl | libc::O_NONBLOCK);
    }
}

fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let i = line.find(key)? + key.len();
    let rest = &line[i..];
    Some(rest.split_whitespace().next().unwrap_or(""))
}

fn num(s: &str) -> Option<u64> {
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// One trace line: `... 1234.567890: tcp_probe: family=AF_INET src=... dest=10.0.0.3:5001 ...`.
pub fn parse(line: &str) -> Option<Probe> {
    let colon = line.find(": tcp_probe:")?;
    let ts = line[..colon].rsplit(' ').next()?;
    let (s, us) = ts.split_once('.')?;
    let t_ns = s.parse::<u64>().ok()? * 1_000_000_000 + us.parse::<u64>().ok()? * 1_000;
    let dest = field(line, " dest=")?;
    let dport = dest.rsplit(':').next()?.parse().ok()?;
    Some(Probe {
        t_ns,
        dport,
        snd_cwnd: num(field(line, " snd_cwnd=")?)? as u32,
        ssthresh: num(field(line, " ssthresh=")?)? as u32,
        srtt_us: num(field(line, " srtt=")?)? as u32,
        snd_una: num(field(line, " snd_una=")?)? as u32,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn parses_a_tcp_probe_line() {
        let l = "          <idle>-0       [001] ..s2.  5021.123456: tcp_probe: family=AF_INET src=10.0.0.1:40000 \
                 dest=10.0.0.3:5001 mark=0x0 data_len=0 snd_nxt=0x1a2b snd_una=0x1a00 snd_cwnd=23 ssthresh=17 \
                 snd_wnd=65535 srtt=512 rcv_wnd=65535 sock_cookie=2a skbaddr=0000 skaddr=0000";
        let p = super::parse(l).unwrap();
        assert_eq!(p.t_ns, 5_021_123_456_000);
        assert_eq!((p.dport, p.snd_cwnd, p.ssthresh, p.srtt_us, p.snd_una), (5001, 23, 17, 512, 0x1a00));
        assert!(super::parse("no probe here").is_none());
    }
}
