//! Thin, commented wrappers over the Linux system calls the emulator needs: entering a network
//! namespace, TCP socket options (`TCP_CONGESTION`, `TCP_INFO`, `TCP_CC_INFO`), `IP_TOS`, and clocks.
//!
//! Every error is an [`io::Error`] whose message says which call failed on what.

use std::ffi::{c_int, c_void};
use std::fs::File;
use std::io;
use std::mem;
use std::os::fd::{AsRawFd, RawFd};
use std::path::PathBuf;

/// Wraps `e` with a context message, keeping its [`io::ErrorKind`].
pub(crate) fn ctx(e: io::Error, what: impl std::fmt::Display) -> io::Error {
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

/// `errno` of the last failed call, with context.
pub(crate) fn last_err(what: impl std::fmt::Display) -> io::Error {
    ctx(io::Error::last_os_error(), what)
}

// ---------------------------------------------------------------------------------------------
// Network namespaces
// ---------------------------------------------------------------------------------------------

/// Where `ip netns add NAME` bind-mounts the namespace: `/var/run/netns/NAME`.
pub fn netns_path(name: &str) -> PathBuf {
    PathBuf::from("/var/run/netns").join(name)
}

/// Moves the calling thread into the namespace behind `fd`.
fn setns_net(fd: RawFd) -> io::Result<()> {
    // SAFETY: setns only reads its two integer arguments; a bad fd gives EBADF/EINVAL.
    if unsafe { libc::setns(fd, libc::CLONE_NEWNET) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Puts the thread back into its original namespace when dropped during a panic in `f`.
struct NetnsRestore {
    orig: File,
    armed: bool,
}

impl NetnsRestore {
    fn restore(mut self) -> io::Result<()> {
        self.armed = false;
        setns_net(self.orig.as_raw_fd()).map_err(|e| ctx(e, "setns back to the thread's original network namespace"))
    }
}

impl Drop for NetnsRestore {
    fn drop(&mut self) {
        if self.armed && setns_net(self.orig.as_raw_fd()).is_err() {
            // Unwinding out of `f` with the thread stuck in a foreign namespace would silently
            // send later traffic of this thread to the wrong place; this cannot be reported.
            eprintln!("ccsim-emulate: cannot return the thread to its network namespace; aborting");
            std::process::abort();
        }
    }
}

/// Runs `f` with the CALLING THREAD inside the network namespace `name` (as made by
/// `ip netns add`), then moves the thread back to the namespace it was in before, also when `f`
/// fails or panics.
///
/// Only the calling thread switches (`setns(CLONE_NEWNET)` is per thread). Sockets created inside
/// `f` belong to `name` for their whole life, so the intended use is to create sockets (and
/// [`crate::qpoll::QdiscPoller`] / [`crate::capture::DequeueCapture`]) here and use them later
/// from any thread. Name lookups such as `if_nametoindex` inside `f` also see `name`'s devices.
///
/// Do not call this on a thread that other code expects to stay in the root namespace while `f`
/// runs (e.g. a shared async-runtime worker whose other tasks could run during `f`); on a
/// dedicated thread, or a plain thread that just runs `f` to completion, it is fine.
pub fn with_netns<T>(name: &str, f: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
    let path = netns_path(name);
    let target = File::open(&path).map_err(|e| ctx(e, format_args!("open network namespace {}", path.display())))?;
    let orig = File::open("/proc/thread-self/ns/net")
        .map_err(|e| ctx(e, "open /proc/thread-self/ns/net (the thread's current network namespace)"))?;
    setns_net(target.as_raw_fd()).map_err(|e| ctx(e, format_args!("setns into network namespace {name}")))?;
    drop(target);
    let guard = NetnsRestore { orig, armed: true };
    let out = f();
    guard.restore()?;
    out
}

// ---------------------------------------------------------------------------------------------
// Socket options
// ---------------------------------------------------------------------------------------------

/// `setsockopt(fd, level, opt, &val, sizeof(int))`.
pub fn set_int_opt(fd: RawFd, level: c_int, opt: c_int, val: c_int) -> io::Result<()> {
    // SAFETY: the kernel reads exactly size_of::<c_int>() bytes from &val, which lives on our stack.
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            opt,
            &val as *const c_int as *const c_void,
            mem::size_of::<c_int>() as libc::socklen_t,
        )
    };
    if r != 0 {
        return Err(last_err(format_args!("setsockopt(fd {fd}, level {level}, opt {opt}, {val})")));
    }
    Ok(())
}

/// `getsockopt` of an `int` option.
pub fn get_int_opt(fd: RawFd, level: c_int, opt: c_int) -> io::Result<c_int> {
    let mut val: c_int = 0;
    let mut len = mem::size_of::<c_int>() as libc::socklen_t;
    // SAFETY: the kernel writes at most `len` bytes into `val`, a c_int on our stack.
    let r = unsafe { libc::getsockopt(fd, level, opt, &mut val as *mut c_int as *mut c_void, &mut len) };
    if r != 0 {
        return Err(last_err(format_args!("getsockopt(fd {fd}, level {level}, opt {opt})")));
    }
    Ok(val)
}

/// Reads a socket option into `buf`; returns the number of bytes the kernel filled.
fn get_opt_bytes(fd: RawFd, level: c_int, opt: c_int, buf: &mut [u8], what: &str) -> io::Result<usize> {
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: the kernel writes at most `len` (= buf.len()) bytes into buf.
    let r = unsafe { libc::getsockopt(fd, level, opt, buf.as_mut_ptr() as *mut c_void, &mut len) };
    if r != 0 {
        return Err(last_err(format_args!("getsockopt({what}) on fd {fd}")));
    }
    Ok((len as usize).min(buf.len()))
}

/// Sets the IPv4 TOS byte (`IP_TOS`): DSCP in the upper 6 bits, ECN in the lower 2
/// (1 = ECT(1), 2 = ECT(0), 3 = CE). For probe sockets; TCP overrides the ECN bits itself.
pub fn set_tos(fd: RawFd, tos: u8) -> io::Result<()> {
    set_int_opt(fd, libc::IPPROTO_IP, libc::IP_TOS, tos as c_int)
        .map_err(|e| ctx(e, format_args!("set IP_TOS {tos:#04x}")))
}

/// Chooses the socket's congestion control (`TCP_CONGESTION`), e.g. "reno", "cubic", "bbr" or
/// the name of a registered BPF struct_ops CC.
pub fn set_tcp_congestion(fd: RawFd, name: &str) -> io::Result<()> {
    // SAFETY: the kernel reads name.len() bytes (no NUL needed) from the string's buffer.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            name.as_ptr() as *const c_void,
            name.len() as libc::socklen_t,
        )
    };
    if r != 0 {
        return Err(last_err(format_args!("setsockopt(TCP_CONGESTION, {name:?}) on fd {fd}")));
    }
    Ok(())
}

/// The socket's congestion control name (`TCP_CONGESTION`).
pub fn tcp_congestion(fd: RawFd) -> io::Result<String> {
    let mut buf = [0u8; 16]; // TCP_CA_NAME_MAX
    let n = get_opt_bytes(fd, libc::IPPROTO_TCP, libc::TCP_CONGESTION, &mut buf, "TCP_CONGESTION")?;
    let name = &buf[..n];
    let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
    Ok(String::from_utf8_lossy(&name[..end]).into_owned())
}

// ---------------------------------------------------------------------------------------------
// TCP_INFO
// ---------------------------------------------------------------------------------------------

/// `struct tcp_info` exactly as in include/uapi/linux/tcp.h of Linux 6.18 (280 bytes). Fields up
/// to `total_rto_time` (248 bytes) are stable since 6.7; the AccECN trailer came with 6.18.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct RawTcpInfo {
    state: u8,
    ca_state: u8,
    retransmits: u8,
    probes: u8,
    backoff: u8,
    options: u8,
    /// `tcpi_snd_wscale : 4, tcpi_rcv_wscale : 4` (little-endian bit order: snd in the low nibble).
    wscale: u8,
    /// `tcpi_delivery_rate_app_limited:1, tcpi_fastopen_client_fail:2`.
    app_limited_fo_fail: u8,
    rto: u32,
    ato: u32,
    snd_mss: u32,
    rcv_mss: u32,
    unacked: u32,
    sacked: u32,
    lost: u32,
    retrans: u32,
    fackets: u32,
    last_data_sent: u32,
    last_ack_sent: u32,
    last_data_recv: u32,
    last_ack_recv: u32,
    pmtu: u32,
    rcv_ssthresh: u32,
    rtt: u32,
    rttvar: u32,
    snd_ssthresh: u32,
    snd_cwnd: u32,
    advmss: u32,
    reordering: u32,
    rcv_rtt: u32,
    rcv_space: u32,
    total_retrans: u32,
    pacing_rate: u64,
    max_pacing_rate: u64,
    bytes_acked: u64,
    bytes_received: u64,
    segs_out: u32,
    segs_in: u32,
    notsent_bytes: u32,
    min_rtt: u32,
    data_segs_in: u32,
    data_segs_out: u32,
    delivery_rate: u64,
    busy_time: u64,
    rwnd_limited: u64,
    sndbuf_limited: u64,
    delivered: u32,
    delivered_ce: u32,
    bytes_sent: u64,
    bytes_retrans: u64,
    dsack_dups: u32,
    reord_seen: u32,
    rcv_ooopack: u32,
    snd_wnd: u32,
    rcv_wnd: u32,
    rehash: u32,
    total_rto: u16,
    total_rto_recoveries: u16,
    total_rto_time: u32,
    // AccECN trailer (Linux 6.18).
    received_ce: u32,
    delivered_e1_bytes: u32,
    delivered_e0_bytes: u32,
    delivered_ce_bytes: u32,
    received_e1_bytes: u32,
    received_e0_bytes: u32,
    received_ce_bytes: u32,
    /// 6.18: `__u16 tcpi_accecn_fail_mode; __u16 tcpi_accecn_opt_seen;`. Later kernels repack
    /// this word as bitfields (ecn_mode:2, accecn_opt_seen:2, accecn_fail_mode:4, options2:24),
    /// so it is not decoded.
    accecn_word: u32,
}

/// The kernel's `struct tcp_info` for one socket (field names without the `tcpi_` prefix, units as
/// in the kernel: times in µs except the `last_*` fields and `total_rto_time` in ms, rates in
/// bytes/s). Fields the running kernel did not fill (a shorter struct) are 0; `len` says how many
/// bytes it filled (280 on Linux 6.18, 248 on 6.7–6.17).
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct TcpInfo {
    /// Bytes of `struct tcp_info` the kernel filled.
    pub len: u32,
    /// TCP state (1 = ESTABLISHED, see `include/net/tcp_states.h`).
    pub state: u8,
    /// Congestion-avoidance state (0 Open, 1 Disorder, 2 CWR, 3 Recovery, 4 Loss).
    pub ca_state: u8,
    pub retransmits: u8,
    pub probes: u8,
    pub backoff: u8,
    /// `TCPI_OPT_*` bits: 1 timestamps, 2 SACK, 4 wscale, 8 ECN, 16 ECN seen, 32 SYN data, ...
    pub options: u8,
    pub snd_wscale: u8,
    pub rcv_wscale: u8,
    pub delivery_rate_app_limited: bool,
    pub fastopen_client_fail: u8,
    pub rto: u32,
    pub ato: u32,
    pub snd_mss: u32,
    pub rcv_mss: u32,
    pub unacked: u32,
    pub sacked: u32,
    pub lost: u32,
    pub retrans: u32,
    pub fackets: u32,
    pub last_data_sent: u32,
    pub last_ack_sent: u32,
    pub last_data_recv: u32,
    pub last_ack_recv: u32,
    pub pmtu: u32,
    pub rcv_ssthresh: u32,
    /// Smoothed RTT, µs.
    pub rtt: u32,
    pub rttvar: u32,
    pub snd_ssthresh: u32,
    /// Congestion window, segments.
    pub snd_cwnd: u32,
    pub advmss: u32,
    pub reordering: u32,
    pub rcv_rtt: u32,
    pub rcv_space: u32,
    pub total_retrans: u32,
    pub pacing_rate: u64,
    pub max_pacing_rate: u64,
    pub bytes_acked: u64,
    pub bytes_received: u64,
    pub segs_out: u32,
    pub segs_in: u32,
    pub notsent_bytes: u32,
    pub min_rtt: u32,
    pub data_segs_in: u32,
    pub data_segs_out: u32,
    pub delivery_rate: u64,
    pub busy_time: u64,
    pub rwnd_limited: u64,
    pub sndbuf_limited: u64,
    pub delivered: u32,
    /// Segments delivered with the CE mark echoed back (ECE), the DCTCP-relevant count.
    pub delivered_ce: u32,
    pub bytes_sent: u64,
    pub bytes_retrans: u64,
    pub dsack_dups: u32,
    pub reord_seen: u32,
    pub rcv_ooopack: u32,
    pub snd_wnd: u32,
    pub rcv_wnd: u32,
    pub rehash: u32,
    pub total_rto: u16,
    pub total_rto_recoveries: u16,
    pub total_rto_time: u32,
    /// CE-marked segments received (Linux 6.18+).
    pub received_ce: u32,
    /// Accurate-ECN byte counters (Linux 6.18+; 0 unless AccECN was negotiated).
    pub delivered_e1_bytes: u32,
    pub delivered_e0_bytes: u32,
    pub delivered_ce_bytes: u32,
    pub received_e1_bytes: u32,
    pub received_e0_bytes: u32,
    pub received_ce_bytes: u32,
}

impl TcpInfo {
    fn from_raw(r: &RawTcpInfo, len: u32) -> TcpInfo {
        TcpInfo {
            len,
            state: r.state,
            ca_state: r.ca_state,
            retransmits: r.retransmits,
            probes: r.probes,
            backoff: r.backoff,
            options: r.options,
            snd_wscale: r.wscale & 0x0f,
            rcv_wscale: r.wscale >> 4,
            delivery_rate_app_limited: r.app_limited_fo_fail & 1 != 0,
            fastopen_client_fail: (r.app_limited_fo_fail >> 1) & 3,
            rto: r.rto,
            ato: r.ato,
            snd_mss: r.snd_mss,
            rcv_mss: r.rcv_mss,
            unacked: r.unacked,
            sacked: r.sacked,
            lost: r.lost,
            retrans: r.retrans,
            fackets: r.fackets,
            last_data_sent: r.last_data_sent,
            last_ack_sent: r.last_ack_sent,
            last_data_recv: r.last_data_recv,
            last_ack_recv: r.last_ack_recv,
            pmtu: r.pmtu,
            rcv_ssthresh: r.rcv_ssthresh,
            rtt: r.rtt,
            rttvar: r.rttvar,
            snd_ssthresh: r.snd_ssthresh,
            snd_cwnd: r.snd_cwnd,
            advmss: r.advmss,
            reordering: r.reordering,
            rcv_rtt: r.rcv_rtt,
            rcv_space: r.rcv_space,
            total_retrans: r.total_retrans,
            pacing_rate: r.pacing_rate,
            max_pacing_rate: r.max_pacing_rate,
            bytes_acked: r.bytes_acked,
            bytes_received: r.bytes_received,
            segs_out: r.segs_out,
            segs_in: r.segs_in,
            notsent_bytes: r.notsent_bytes,
            min_rtt: r.min_rtt,
            data_segs_in: r.data_segs_in,
            data_segs_out: r.data_segs_out,
            delivery_rate: r.delivery_rate,
            busy_time: r.busy_time,
            rwnd_limited: r.rwnd_limited,
            sndbuf_limited: r.sndbuf_limited,
            delivered: r.delivered,
            delivered_ce: r.delivered_ce,
            bytes_sent: r.bytes_sent,
            bytes_retrans: r.bytes_retrans,
            dsack_dups: r.dsack_dups,
            reord_seen: r.reord_seen,
            rcv_ooopack: r.rcv_ooopack,
            snd_wnd: r.snd_wnd,
            rcv_wnd: r.rcv_wnd,
            rehash: r.rehash,
            total_rto: r.total_rto,
            total_rto_recoveries: r.total_rto_recoveries,
            total_rto_time: r.total_rto_time,
            received_ce: r.received_ce,
            delivered_e1_bytes: r.delivered_e1_bytes,
            delivered_e0_bytes: r.delivered_e0_bytes,
            delivered_ce_bytes: r.delivered_ce_bytes,
            received_e1_bytes: r.received_e1_bytes,
            received_e0_bytes: r.received_e0_bytes,
            received_ce_bytes: r.received_ce_bytes,
        }
    }
}

/// `getsockopt(TCP_INFO)`. Works on any TCP socket (state 7 = CLOSE before connect).
pub fn tcp_info(fd: RawFd) -> io::Result<TcpInfo> {
    let mut raw = RawTcpInfo::default();
    let mut len = mem::size_of::<RawTcpInfo>() as libc::socklen_t;
    // SAFETY: RawTcpInfo is plain-old-data (every bit pattern valid); the kernel writes at most
    // `len` = size_of::<RawTcpInfo>() bytes into it and reports how many it wrote. Bytes it did
    // not write keep their zero default.
    let r =
        unsafe { libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_INFO, &mut raw as *mut _ as *mut c_void, &mut len) };
    if r != 0 {
        return Err(last_err(format_args!("getsockopt(TCP_INFO) on fd {fd}")));
    }
    Ok(TcpInfo::from_raw(&raw, len))
}

// ---------------------------------------------------------------------------------------------
// TCP_CC_INFO (BBR)
// ---------------------------------------------------------------------------------------------

/// `struct tcp_bbr_info` (include/uapi/linux/inet_diag.h), as returned by BBR's `get_info`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct BbrInfo {
    /// Lower 32 bits of the max-filtered bandwidth estimate, bytes/s.
    pub bw_lo: u32,
    /// Upper 32 bits of the bandwidth estimate.
    pub bw_hi: u32,
    /// Min-filtered RTT, µs.
    pub min_rtt: u32,
    /// Pacing gain << 8 (256 = 1.0).
    pub pacing_gain: u32,
    /// Cwnd gain << 8.
    pub cwnd_gain: u32,
}

impl BbrInfo {
    /// The bandwidth estimate in bytes per second.
    pub fn bw(&self) -> u64 {
        ((self.bw_hi as u64) << 32) | self.bw_lo as u64
    }
}

/// BBR's internals through `getsockopt(TCP_CC_INFO)`; `None` when the socket's CC is not BBR.
///
/// The kernel copies `min(optlen, size)` bytes of `union tcp_cc_info` where `size` is what the
/// CC's `get_info` returned, and does not report which member it filled. On this kernel: reno,
/// cubic and BPF struct_ops CCs have no `get_info` (length 0), vegas and dctcp fill 16 bytes
/// (`tcpvegas_info`, `tcp_dctcp_info`), and BBR fills the 20-byte `tcp_bbr_info`. The length is
/// therefore the tag.
pub fn tcp_cc_info_bbr(fd: RawFd) -> io::Result<Option<BbrInfo>> {
    let mut buf = [0u8; 64]; // larger than union tcp_cc_info (20 bytes)
    let n = get_opt_bytes(fd, libc::IPPROTO_TCP, libc::TCP_CC_INFO, &mut buf, "TCP_CC_INFO")?;
    if n != 20 {
        return Ok(None);
    }
    let w = |i: usize| u32::from_ne_bytes(buf[4 * i..4 * i + 4].try_into().unwrap());
    Ok(Some(BbrInfo { bw_lo: w(0), bw_hi: w(1), min_rtt: w(2), pacing_gain: w(3), cwnd_gain: w(4) }))
}

// ---------------------------------------------------------------------------------------------
// Clocks
// ---------------------------------------------------------------------------------------------

fn clock(id: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec into `ts`; both clocks always exist on Linux.
    let r = unsafe { libc::clock_gettime(id, &mut ts) };
    debug_assert_eq!(r, 0);
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// `CLOCK_MONOTONIC` in ns (the clock of `ktime_get_ns`, tracepoints use it too).
pub fn clock_ns() -> u64 {
    clock(libc::CLOCK_MONOTONIC)
}

/// `CLOCK_REALTIME` in ns (the clock of socket receive timestamps such as `SO_TIMESTAMPNS`).
pub fn realtime_ns() -> u64 {
    clock(libc::CLOCK_REALTIME)
}

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

#[cfg(test)]
pub(crate) mod testutil {
    //! Scratch namespaces for root tests: a guard deletes them even when an assertion fails.

    use std::process::Command;

    /// True when running as root; otherwise prints why the test is skipped.
    pub fn is_root(test: &str) -> bool {
        // SAFETY: geteuid has no arguments and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("SKIPPED {test}: needs root (network namespaces, veth, tc)");
            return false;
        }
        true
    }

    /// Runs a command, panicking with its stderr when it fails.
    pub fn run(args: &[&str]) {
        let out = Command::new(args[0]).args(&args[1..]).output().unwrap_or_else(|e| panic!("spawn {args:?}: {e}"));
        assert!(out.status.success(), "{args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    }

    /// Scratch network namespaces `ccsimtest-<pid>-<tag>...`, deleted on drop.
    pub struct Netns {
        pub names: Vec<String>,
    }

    impl Netns {
        /// Creates one namespace per suffix, e.g. `Netns::new("cap", &["a", "b"])`, with `lo` up.
        pub fn new(tag: &str, suffixes: &[&str]) -> Netns {
            let mut ns = Netns { names: Vec::new() };
            for s in suffixes {
                let name = format!("ccsimtest-{}-{tag}-{s}", std::process::id());
                // Register before creating so a partial failure still cleans up.
                ns.names.push(name.clone());
                run(&["ip", "netns", "add", &name]);
                run(&["ip", "-n", &name, "link", "set", "lo", "up"]);
                // No IPv6 autoconf chatter (router solicitations, MLD) on the test links.
                run(&["ip", "netns", "exec", &name, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"]);
                run(&["ip", "netns", "exec", &name, "sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1"]);
            }
            ns
        }

        pub fn name(&self, i: usize) -> &str {
            &self.names[i]
        }
    }

    impl Drop for Netns {
        fn drop(&mut self) {
            for n in &self.names {
                // Deleting a namespace also deletes the veth ends inside it (and their peers).
                let _ = Command::new("ip").args(["netns", "del", n]).status();
            }
        }
    }

    /// Two namespaces `a` and `b` joined by a veth pair `va` (10.99.0.1, in a) <-> `vb`
    /// (10.99.0.2, in b), offloads off, with `va`'s egress shaped by HTB at `rate` (root `1:`,
    /// class `1:10`) and a `pfifo limit 1000` leaf `10:`.
    pub fn veth_htb(tag: &str, rate: &str) -> Netns {
        let ns = Netns::new(tag, &["a", "b"]);
        let (a, b) = (ns.name(0).to_string(), ns.name(1).to_string());
        run(&["ip", "-n", &a, "link", "add", "va", "type", "veth", "peer", "name", "vb", "netns", &b]);
        run(&["ip", "-n", &a, "addr", "add", "10.99.0.1/24", "dev", "va"]);
        run(&["ip", "-n", &b, "addr", "add", "10.99.0.2/24", "dev", "vb"]);
        run(&["ip", "-n", &a, "link", "set", "va", "up"]);
        run(&["ip", "-n", &b, "link", "set", "vb", "up"]);
        for (n, d) in [(&a, "va"), (&b, "vb")] {
            run(&["ip", "netns", "exec", n, "ethtool", "-K", d, "tso", "off", "gso", "off", "gro", "off"]);
        }
        run(&["tc", "-n", &a, "qdisc", "add", "dev", "va", "root", "handle", "1:", "htb", "default", "10"]);
        run(&["tc", "-n", &a, "class", "add", "dev", "va", "parent", "1:", "classid", "1:10", "htb", "rate", rate]);
        run(&[
            "tc", "-n", &a, "qdisc", "add", "dev", "va", "parent", "1:10", "handle", "10:", "pfifo", "limit", "1000",
        ]);
        ns
    }
}

#[cfg(test)]
mod tests {
    use super::testutil::*;
    use super::*;
    use std::mem::{offset_of, size_of};
    use std::net::{TcpListener, TcpStream};
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn sys_tcp_info_layout_matches_uapi() {
        // Offsets from include/uapi/linux/tcp.h (x86_64 / any LP64 little-endian Linux).
        assert_eq!(size_of::<RawTcpInfo>(), 280);
        assert_eq!(offset_of!(RawTcpInfo, wscale), 6);
        assert_eq!(offset_of!(RawTcpInfo, app_limited_fo_fail), 7);
        assert_eq!(offset_of!(RawTcpInfo, rto), 8);
        assert_eq!(offset_of!(RawTcpInfo, snd_mss), 16);
        assert_eq!(offset_of!(RawTcpInfo, rtt), 68);
        assert_eq!(offset_of!(RawTcpInfo, snd_ssthresh), 76);
        assert_eq!(offset_of!(RawTcpInfo, snd_cwnd), 80);
        assert_eq!(offset_of!(RawTcpInfo, total_retrans), 100);
        assert_eq!(offset_of!(RawTcpInfo, pacing_rate), 104);
        assert_eq!(offset_of!(RawTcpInfo, bytes_received), 128);
        assert_eq!(offset_of!(RawTcpInfo, min_rtt), 148);
        assert_eq!(offset_of!(RawTcpInfo, delivery_rate), 160);
        assert_eq!(offset_of!(RawTcpInfo, delivered), 192);
        assert_eq!(offset_of!(RawTcpInfo, delivered_ce), 196);
        assert_eq!(offset_of!(RawTcpInfo, bytes_retrans), 208);
        assert_eq!(offset_of!(RawTcpInfo, snd_wnd), 228);
        assert_eq!(offset_of!(RawTcpInfo, rcv_wnd), 232);
        assert_eq!(offset_of!(RawTcpInfo, total_rto), 240);
        assert_eq!(offset_of!(RawTcpInfo, total_rto_time), 244);
        assert_eq!(offset_of!(RawTcpInfo, received_ce), 248);
        assert_eq!(offset_of!(RawTcpInfo, accecn_word), 276);
    }

    #[test]
    fn sys_tcp_info_bitfields() {
        let raw = RawTcpInfo { wscale: 0x97, app_limited_fo_fail: 0b101, snd_cwnd: 42, ..Default::default() };
        let i = TcpInfo::from_raw(&raw, 280);
        assert_eq!((i.snd_wscale, i.rcv_wscale), (7, 9));
        assert!(i.delivery_rate_app_limited);
        assert_eq!(i.fastopen_client_fail, 2);
        assert_eq!(i.snd_cwnd, 42);
        let raw = RawTcpInfo { app_limited_fo_fail: 0b110, ..Default::default() };
        let i = TcpInfo::from_raw(&raw, 280);
        assert!(!i.delivery_rate_app_limited);
        assert_eq!(i.fastopen_client_fail, 3);
    }

    #[test]
    fn sys_clocks() {
        let (a, b) = (clock_ns(), clock_ns());
        assert!(b >= a && a > 0);
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
        assert!(realtime_ns().abs_diff(now) < 1_000_000_000);
    }

    #[test]
    fn sys_netns_path() {
        assert_eq!(netns_path("h1"), PathBuf::from("/var/run/netns/h1"));
    }

    fn thread_netns_inode() -> u64 {
        std::fs::metadata("/proc/thread-self/ns/net").unwrap().ino()
    }

    #[test]
    fn sys_with_netns_missing_namespace_is_an_error() {
        let before = thread_netns_inode();
        let e = with_netns("ccsim-no-such-namespace", || Ok(())).unwrap_err();
        assert!(e.to_string().contains("ccsim-no-such-namespace"), "{e}");
        assert_eq!(thread_netns_inode(), before);
    }

    #[test]
    fn sys_with_netns_switches_and_restores() {
        if !is_root("sys_with_netns_switches_and_restores") {
            return;
        }
        let ns = Netns::new("wn", &["a"]);
        let root = thread_netns_inode();
        let target = std::fs::metadata(netns_path(ns.name(0))).unwrap().ino();
        assert_ne!(root, target);
        let inside = with_netns(ns.name(0), || Ok(thread_netns_inode())).unwrap();
        assert_eq!(inside, target);
        assert_eq!(thread_netns_inode(), root);
        // Restored also when f fails.
        let e = with_netns(ns.name(0), || -> io::Result<()> { Err(io::Error::other("boom")) }).unwrap_err();
        assert_eq!(e.to_string(), "boom");
        assert_eq!(thread_netns_inode(), root);
        // And when f panics.
        let name = ns.name(0).to_string();
        let r = std::panic::catch_unwind(move || {
            with_netns(&name, || -> io::Result<()> {
                panic!("intentional panic inside with_netns (expected by this test)")
            })
        });
        assert!(r.is_err());
        assert_eq!(thread_netns_inode(), root);
    }

    #[test]
    fn sys_tcp_info_and_congestion_in_netns() {
        if !is_root("sys_tcp_info_and_congestion_in_netns") {
            return;
        }
        let ns = Netns::new("tcp", &["a"]);
        let (listener, client) = with_netns(ns.name(0), || {
            let l = TcpListener::bind("127.0.0.1:0")?;
            let c = TcpStream::connect(l.local_addr()?)?;
            Ok((l, c))
        })
        .unwrap();
        let (server, _) = listener.accept().unwrap();
        let fd = client.as_raw_fd();
        let i = tcp_info(fd).unwrap();
        eprintln!("tcp_info after connect: {i:?}");
        assert!(i.len >= 248, "kernel filled only {} bytes", i.len);
        assert_eq!(i.state, 1, "ESTABLISHED");
        assert_eq!(i.snd_cwnd, 10, "initial window");
        assert_eq!(i.ca_state, 0);
        assert!(i.snd_mss > 1000 && i.pmtu > 1500, "{} {}", i.snd_mss, i.pmtu);
        assert!(i.options & 1 != 0, "timestamps negotiated");

        set_tcp_congestion(fd, "reno").unwrap();
        assert_eq!(tcp_congestion(fd).unwrap(), "reno");
        assert_eq!(tcp_cc_info_bbr(fd).unwrap(), None);
        set_tcp_congestion(fd, "cubic").unwrap();
        assert_eq!(tcp_congestion(fd).unwrap(), "cubic");
        assert_eq!(tcp_cc_info_bbr(fd).unwrap(), None);
        let e = set_tcp_congestion(fd, "nosuchcc").unwrap_err();
        assert!(e.to_string().contains("nosuchcc"), "{e}");
        if set_tcp_congestion(fd, "bbr").is_ok() {
            // Send a little so BBR has samples.
            use std::io::{Read, Write};
            let mut c = &client;
            c.write_all(&[0u8; 100_000]).unwrap();
            let mut got = 0;
            let mut s = &server;
            let mut buf = [0u8; 65536];
            while got < 100_000 {
                got += s.read(&mut buf).unwrap();
            }
            let b = tcp_cc_info_bbr(fd).unwrap().expect("BBR reports tcp_bbr_info");
            eprintln!("bbr: {b:?} bw {} B/s", b.bw());
            assert!(b.pacing_gain > 0 && b.cwnd_gain > 0);
            let i = tcp_info(fd).unwrap();
            assert!(i.bytes_sent >= 100_000, "{}", i.bytes_sent);
        }
        // On TCP sockets the kernel keeps the ECN bits for itself; the DSCP part is taken.
        set_tos(fd, 0x20 | 0x02).unwrap();
        assert_eq!(get_int_opt(fd, libc::IPPROTO_IP, libc::IP_TOS).unwrap() & 0xfc, 0x20);
        drop((client, server));
    }
}
