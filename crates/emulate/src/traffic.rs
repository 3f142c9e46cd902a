//! The applications of an emulated run, on the kernel's sockets: bulk senders and fixed-size
//! transfers (one listener per flow, with the flow's server-side congestion control), and ICMP
//! echo probes. Sockets are made inside the hosts' namespaces (`sys::with_netns`) and then used
//! from ordinary threads; times are measured on CLOCK_MONOTONIC from the run's start.

use crate::plan::{FlowKindPlan, FlowPlan, PingPlan, Plan};
use crate::sys;
use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::os::fd::{FromRawFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn cvt(r: libc::c_int, what: &str) -> io::Result<libc::c_int> {
    if r < 0 {
        let e = io::Error::last_os_error();
        Err(io::Error::new(e.kind(), format!("{what}: {e}")))
    } else {
        Ok(r)
    }
}

fn sockaddr(addr: Ipv4Addr, port: u16) -> libc::sockaddr_in {
    // SAFETY: sockaddr_in is plain data; all-zero is a valid value.
    let mut sa: libc::sockaddr_in = unsafe { std::mem::zeroed() };
    sa.sin_family = libc::AF_INET as libc::sa_family_t;
    sa.sin_port = port.to_be();
    sa.sin_addr = libc::in_addr { s_addr: u32::from(addr).to_be() };
    sa
}

fn setopt(fd: RawFd, level: libc::c_int, opt: libc::c_int, val: libc::c_int, what: &str) -> io::Result<()> {
    // SAFETY: a valid fd and a pointer to a live c_int of the given length.
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            opt,
            &val as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    cvt(r, what).map(|_| ())
}

/// A TCP socket, not yet connected or listening.
fn tcp_socket() -> io::Result<RawFd> {
    // SAFETY: plain socket(2).
    cvt(unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) }, "socket")
}

fn bind(fd: RawFd, addr: Ipv4Addr, port: u16) -> io::Result<()> {
    let sa = sockaddr(addr, port);
    // SAFETY: sa lives across the call; the length is its size.
    let r = unsafe {
        libc::bind(fd, &sa as *const _ as *const libc::sockaddr, std::mem::size_of::<libc::sockaddr_in>() as u32)
    };
    cvt(r, &format!("bind {addr}:{port}")).map(|_| ())
}

/// The listener of one flow, in the receiver's namespace, with the flow's server-side
/// congestion control and receive buffer (SO_RCVBUFFORCE with ccsim's rcvbuf, which the kernel
/// doubles and locks; none when ccsim's rcvbuf is "auto").
pub fn listener(f: &FlowPlan) -> io::Result<TcpListener> {
    let fd = tcp_socket()?;
    // SAFETY: fd is a fresh socket we own.
    let l = unsafe { TcpListener::from_raw_fd(fd) };
    setopt(fd, libc::SOL_SOCKET, libc::SO_REUSEADDR, 1, "SO_REUSEADDR")?;
    if let Some(n) = f.rcvbuf {
        setopt(fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, n as libc::c_int, "SO_RCVBUFFORCE")?;
    }
    sys::set_tcp_congestion(fd, &f.server_cc)
        .map_err(|e| io::Error::new(e.kind(), format!("TCP_CONGESTION {} on the listener: {e}", f.server_cc)))?;
    if f.tos != 0 {
        setopt(fd, libc::IPPROTO_IP, libc::IP_TOS, f.tos as libc::c_int, "IP_TOS")?;
    }
    bind(fd, f.dst_addr, f.dst_port)?;
    // SAFETY: listen(2) on our socket.
    cvt(unsafe { libc::listen(fd, 16) }, "listen")?;
    Ok(l)
}

/// The sender's socket, bound, options set, not connected.
pub fn client(f: &FlowPlan) -> io::Result<RawFd> {
    let fd = tcp_socket()?;
    let r = (|| {
        setopt(fd, libc::SOL_SOCKET, libc::SO_REUSEADDR, 1, "SO_REUSEADDR")?;
        sys::set_tcp_congestion(fd, &f.client_cc)
            .map_err(|e| io::Error::new(e.kind(), format!("TCP_CONGESTION {}: {e}", f.client_cc)))?;
        if f.nodelay {
            setopt(fd, libc::IPPROTO_TCP, libc::TCP_NODELAY, 1, "TCP_NODELAY")?;
        }
        if f.tos != 0 {
            setopt(fd, libc::IPPROTO_IP, libc::IP_TOS, f.tos as libc::c_int, "IP_TOS")?;
        }
        if f.mark != 0 {
            setopt(fd, libc::SOL_SOCKET, libc::SO_MARK, f.mark as libc::c_int, "SO_MARK")?;
        }
        if f.pacing {
            // Any SO_MAX_PACING_RATE turns on the kernel's internal pacing (SK_PACING_NEEDED).
            setopt(fd, libc::SOL_SOCKET, libc::SO_MAX_PACING_RATE, -1, "SO_MAX_PACING_RATE")?;
        }
        bind(fd, f.src_addr, f.src_port)
    })();
    if let Err(e) = r {
        // SAFETY: closing the socket we created.
        unsafe { libc::close(fd) };
        return Err(e);
    }
    Ok(fd)
}

fn connect(fd: RawFd, f: &FlowPlan) -> io::Result<()> {
    let sa = sockaddr(f.dst_addr, f.dst_port);
    // SAFETY: sa lives across the call.
    let r = unsafe {
        libc::connect(fd, &sa as *const _ as *const libc::sockaddr, std::mem::size_of::<libc::sockaddr_in>() as u32)
    };
    cvt(r, &format!("connect to {}:{}", f.dst_addr, f.dst_port)).map(|_| ())
}

/// The run's clock: nanoseconds since its start.
#[derive(Clone, Copy)]
pub struct Clock {
    t0: u64,
}

impl Clock {
    pub fn start_in(lead: Duration) -> Clock {
        Clock { t0: sys::clock_ns() + lead.as_nanos() as u64 }
    }
    /// A CLOCK_MONOTONIC time as ns since the start.
    pub fn rel(&self, mono_ns: u64) -> i64 {
        mono_ns as i64 - self.t0 as i64
    }
    pub fn now(&self) -> i64 {
        sys::clock_ns() as i64 - self.t0 as i64
    }
    /// Sleep until `t` ns after the start (or until `stop` is raised).
    pub fn sleep_until(&self, t: u64, stop: &AtomicBool) {
        loop {
            let left = t as i64 - self.now();
            if left <= 0 || stop.load(Ordering::Relaxed) {
                return;
            }
            std::thread::sleep(Duration::from_nanos(left.min(50_000_000) as u64));
        }
    }
}

/// What a sender saw.
#[derive(Clone, Debug, Default)]
pub struct FlowResult {
    pub established_ns: Option<i64>,
    /// When the sender stopped writing (bulk) or the transfer was acknowledged.
    pub end_ns: Option<i64>,
    pub completion_ns: Option<i64>,
    /// RPC flows: each request's latency, from the write of its first byte to its last byte
    /// acknowledged (as `ccsim run` measures it).
    pub rpc_latencies_ns: Vec<u64>,
    pub info: Option<sys::TcpInfo>,
    pub error: Option<String>,
}

/// Write up to `left` bytes of `buf`: how many the socket took (0 when the send buffer stayed
/// full for the write timeout), or the error that ends the flow.
fn write_some(s: &mut TcpStream, buf: &[u8], left: u64) -> Result<u64, String> {
    let n = left.min(buf.len() as u64) as usize;
    match s.write(&buf[..n]) {
        Ok(w) => Ok(w as u64),
        Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => Ok(0),
        Err(e) => Err(format!("write: {e}")),
    }
}

/// Run one sender: connect at its start, write until its stop / the end of the run (bulk),
/// until `bytes` are written and acknowledged (transfer), or request after request (rpc). `fd_out` receives the connected
/// socket's fd for the sampler.
pub fn run_sender(
    f: FlowPlan,
    fd: RawFd,
    clock: Clock,
    end_ns: u64,
    stop: Arc<AtomicBool>,
    fd_out: Arc<std::sync::Mutex<Option<RawFd>>>,
) -> FlowResult {
    let mut res = FlowResult::default();
    // SAFETY: we own fd; the stream closes it when dropped.
    let mut s = unsafe { TcpStream::from_raw_fd(fd) };
    clock.sleep_until(f.start_ns, &stop);
    if stop.load(Ordering::Relaxed) {
        return res;
    }
    if let Err(e) = connect(fd, &f) {
        res.error = Some(e.to_string());
        return res;
    }
    res.established_ns = Some(clock.now());
    *fd_out.lock().unwrap() = Some(fd);
    let _ = s.set_write_timeout(Some(Duration::from_millis(20)));
    let buf = vec![0u8; 64 * 1024];
    let stop_at = f.stop_ns.unwrap_or(end_ns).min(end_ns) as i64;
    match f.kind {
        FlowKindPlan::Bulk => {
            while clock.now() < stop_at && !stop.load(Ordering::Relaxed) {
                if let Err(e) = write_some(&mut s, &buf, buf.len() as u64) {
                    res.error = Some(e);
                    break;
                }
            }
            res.end_ns = Some(clock.now().min(stop_at));
        }
        FlowKindPlan::Transfer { bytes } => {
            let mut left = bytes;
            while left > 0 && clock.now() < end_ns as i64 && !stop.load(Ordering::Relaxed) {
                match write_some(&mut s, &buf, left) {
                    Ok(w) => left -= w,
                    Err(e) => {
                        res.error = Some(e);
                        break;
                    }
                }
            }
            // Completion: every byte acknowledged (tcpi_bytes_acked), polled every 50 us.
            while left == 0 && clock.now() < end_ns as i64 && !stop.load(Ordering::Relaxed) {
                match sys::tcp_info(fd) {
                    Ok(i) if i.bytes_acked >= bytes => {
                        res.completion_ns = Some(clock.now());
                        break;
                    }
                    Ok(_) => std::thread::sleep(Duration::from_micros(50)),
                    Err(_) => break,
                }
            }
            res.end_ns = res.completion_ns;
        }
        FlowKindPlan::Rpc { bytes } => {
            // The next request as soon as the previous one is acknowledged, until the stop.
            let mut acked_goal = 0u64;
            'rpc: while clock.now() < stop_at && !stop.load(Ordering::Relaxed) {
                let t0 = clock.now();
                acked_goal += bytes;
                let mut left = bytes;
                while left > 0 {
                    if clock.now() >= end_ns as i64 || stop.load(Ordering::Relaxed) {
                        break 'rpc;
                    }
                    match write_some(&mut s, &buf, left) {
                        Ok(w) => left -= w,
                        Err(e) => {
                            res.error = Some(e);
                            break 'rpc;
                        }
                    }
                }
                loop {
                    if clock.now() >= end_ns as i64 || stop.load(Ordering::Relaxed) {
                        break 'rpc;
                    }
                    match sys::tcp_info(fd) {
                        Ok(i) if i.bytes_acked >= acked_goal => break,
                        Ok(_) => std::thread::sleep(Duration::from_micros(20)),
                        Err(e) => {
                            res.error = Some(format!("tcp_info: {e}"));
                            break 'rpc;
                        }
                    }
                }
                res.rpc_latencies_ns.push((clock.now() - t0).max(0) as u64);
            }
            res.end_ns = Some(clock.now().min(stop_at));
        }
    }
    // The sampler must not read a closed fd; it reads the last state from `info`.
    *fd_out.lock().unwrap() = None;
    res.info = sys::tcp_info(fd).ok();
    let _ = s.shutdown(std::net::Shutdown::Write);
    res
}

/// Accept the flow's connection and read until EOF or the end; returns bytes received.
pub fn run_receiver(l: TcpListener, stop: Arc<AtomicBool>) -> u64 {
    let _ = l.set_nonblocking(true);
    let mut conn = loop {
        match l.accept() {
            Ok((c, _)) => break c,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if stop.load(Ordering::Relaxed) {
                    return 0;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(_) => return 0,
        }
    };
    let _ = conn.set_nonblocking(false);
    let _ = conn.set_read_timeout(Some(Duration::from_millis(50)));
    let mut buf = vec![0u8; 256 * 1024];
    let mut total = 0u64;
    loop {
        match conn.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => total += n as u64,
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
            }
            Err(_) => break,
        }
    }
    total
}

/// A raw ICMP socket in the probe's source namespace.
pub fn ping_socket(p: &PingPlan) -> io::Result<RawFd> {
    // SAFETY: plain socket(2).
    let fd = cvt(
        unsafe { libc::socket(libc::AF_INET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, libc::IPPROTO_ICMP) },
        "raw ICMP socket",
    )?;
    if p.tos != 0 {
        setopt(fd, libc::IPPROTO_IP, libc::IP_TOS, p.tos as libc::c_int, "IP_TOS")?;
    }
    Ok(fd)
}

fn icmp_checksum(b: &[u8]) -> u16 {
    let mut sum = 0u32;
    for c in b.chunks(2) {
        sum += u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]) as u32;
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Echo requests every interval from start to stop (or the end); RTTs in seconds, and the
/// number sent. Replies come from the destination's kernel, as with `ping`.
pub fn run_ping(p: PingPlan, fd: RawFd, id: u16, clock: Clock, end_ns: u64, stop: Arc<AtomicBool>) -> (u64, Vec<f64>) {
    let stop_at = p.stop_ns.unwrap_or(end_ns).min(end_ns);
    let payload = (p.size as usize).saturating_sub(28).max(8);
    let dst = sockaddr(p.dst_addr, 0);
    let mut sent_at: Vec<i64> = Vec::new();
    let mut rtts: Vec<Option<f64>> = Vec::new();
    let mut next = p.start_ns;
    let mut rbuf = [0u8; 2048];
    clock.sleep_until(p.start_ns, &stop);
    // Wait for replies up to 1 s after the last request.
    while !stop.load(Ordering::Relaxed) && clock.now() < stop_at as i64 + 1_000_000_000 {
        let now = clock.now();
        if now >= next as i64 && next < stop_at {
            let seq = sent_at.len() as u16;
            let mut pkt = vec![0u8; 8 + payload];
            pkt[0] = 8;
            pkt[4..6].copy_from_slice(&id.to_be_bytes());
            pkt[6..8].copy_from_slice(&seq.to_be_bytes());
            let c = icmp_checksum(&pkt);
            pkt[2..4].copy_from_slice(&c.to_be_bytes());
            sent_at.push(clock.now());
            rtts.push(None);
            // SAFETY: pkt and dst live across the call.
            unsafe {
                libc::sendto(
                    fd,
                    pkt.as_ptr() as *const libc::c_void,
                    pkt.len(),
                    0,
                    &dst as *const _ as *const libc::sockaddr,
                    std::mem::size_of::<libc::sockaddr_in>() as u32,
                )
            };
            next += p.interval_ns;
        }
        if next >= stop_at && rtts.iter().all(|r| r.is_some()) {
            break;
        }
        let wait_ns = (next as i64 - clock.now()).clamp(100_000, 20_000_000);
        let mut pfd = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd.
        let r = unsafe { libc::poll(&mut pfd, 1, (wait_ns / 1_000_000).max(1) as i32) };
        if r <= 0 {
            continue;
        }
        // SAFETY: rbuf is writable for its length.
        let n = unsafe { libc::recv(fd, rbuf.as_mut_ptr() as *mut libc::c_void, rbuf.len(), libc::MSG_DONTWAIT) };
        let t = clock.now();
        if n < 28 {
            continue;
        }
        let ihl = ((rbuf[0] & 0x0f) as usize) * 4;
        let icmp = &rbuf[ihl..n as usize];
        if icmp.len() < 8 || icmp[0] != 0 || u16::from_be_bytes([icmp[4], icmp[5]]) != id {
            continue;
        }
        let seq = u16::from_be_bytes([icmp[6], icmp[7]]) as usize;
        if let Some(slot) = rtts.get_mut(seq) {
            if slot.is_none() {
                *slot = Some((t - sent_at[seq]) as f64 / 1e9);
            }
        }
    }
    // SAFETY: closing our socket.
    unsafe { libc::close(fd) };
    (sent_at.len() as u64, rtts.into_iter().flatten().collect())
}

/// The namespace of a node.
pub fn netns_of(plan: &Plan, node: usize) -> &str {
    &plan.nodes[node].netns
}

#[cfg(test)]
mod tests {
    #[test]
    fn icmp_checksum_of_an_echo_request() {
        // Echo request id 1 seq 1, no payload: checksum 0xf7fd.
        let mut p = [8u8, 0, 0, 0, 0, 1, 0, 1];
        let c = super::icmp_checksum(&p);
        assert_eq!(c, 0xf7fd);
        p[2..4].copy_from_slice(&c.to_be_bytes());
        assert_eq!(super::icmp_checksum(&p), 0);
    }
}
