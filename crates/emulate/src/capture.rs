//! Dequeue-time capture: an AF_PACKET socket that sees the frames an interface TRANSMITS.
//!
//! A packet socket bound to a device is called from `dev_queue_xmit_nit()` inside
//! `dev_hard_start_xmit()`, i.e. after the qdisc (HTB, pfifo, ...) has dequeued the frame and just
//! before the driver (veth) takes it. With `SO_TIMESTAMPNS` enabled the kernel stamps that clone
//! with `ktime_get_real()` at that moment, so [`Frame::t_ns`] is the frame's DEQUEUE time, in
//! `CLOCK_REALTIME` nanoseconds (compare with [`crate::sys::realtime_ns`], not `clock_ns`).
//!
//! Incoming frames are rejected in the kernel by a 4-instruction classic BPF filter on the
//! packet type, so they cost no receive-buffer space; only the first [`SNAP`] bytes of each frame
//! are copied to userspace.

use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::io;
use std::mem;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

use crate::sys::{ctx, last_err, realtime_ns, set_int_opt};

/// Bytes of each frame copied to userspace: Ethernet (+ VLAN) + IPv4/IPv6 + most of TCP.
pub const SNAP: usize = 64;

/// Default receive buffer: 8 MiB (set with SO_RCVBUFFORCE, so above `rmem_max`).
pub const DEFAULT_RCVBUF: c_int = 8 << 20;

/// Default timeout of [`DequeueCapture::next`].
pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(100);

// include/uapi/linux/if_packet.h, filter.h, if_ether.h
const PACKET_OUTGOING: u8 = 4;
const PACKET_STATISTICS: c_int = 6;
const ETH_P_ALL: u16 = 0x0003;
const ETH_P_IP: u16 = 0x0800;
const ETH_P_IPV6: u16 = 0x86DD;
const ETH_P_8021Q: u16 = 0x8100;
const ETH_P_8021AD: u16 = 0x88A8;
const SKF_AD_OFF: u32 = 0xFFFF_F000;
const SKF_AD_PKTTYPE: u32 = 4;
const SO_TIMESTAMPNS: c_int = 35; // SO_TIMESTAMPNS_OLD: struct timespec with 64-bit time_t on LP64
const SCM_TIMESTAMPNS: c_int = SO_TIMESTAMPNS;

/// One transmitted frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Frame {
    /// Kernel timestamp (CLOCK_REALTIME ns) taken when the frame left the qdisc.
    pub t_ns: u64,
    /// The frame's full length on the wire, Ethernet header included (without FCS).
    pub len: u32,
    /// IPv4 total length (IPv6: payload length + 40); 0 for non-IP frames such as ARP.
    pub ip_total_len: u16,
    /// ECN field of the IP header: 0 not-ECT, 1 ECT(1), 2 ECT(0), 3 CE.
    pub ecn: u8,
    /// IP protocol (6 TCP, 17 UDP, 1 ICMP; IPv6: next header); 0 for non-IP frames.
    pub proto: u8,
}

/// Parses the first bytes of an Ethernet frame (`head`, possibly truncated) of total length `len`.
fn parse_frame(head: &[u8], len: u32, t_ns: u64) -> Frame {
    let mut f = Frame { t_ns, len, ..Default::default() };
    let mut off = 12;
    if head.len() < off + 2 {
        return f;
    }
    let mut ethertype = u16::from_be_bytes([head[off], head[off + 1]]);
    while (ethertype == ETH_P_8021Q || ethertype == ETH_P_8021AD) && head.len() >= off + 6 {
        off += 4;
        ethertype = u16::from_be_bytes([head[off], head[off + 1]]);
    }
    let ip = &head[(off + 2).min(head.len())..];
    match ethertype {
        ETH_P_IP if ip.len() >= 10 && ip[0] >> 4 == 4 => {
            f.ecn = ip[1] & 3;
            f.ip_total_len = u16::from_be_bytes([ip[2], ip[3]]);
            f.proto = ip[9];
        }
        ETH_P_IPV6 if ip.len() >= 8 && ip[0] >> 4 == 6 => {
            let tclass = ((ip[0] & 0x0f) << 4) | (ip[1] >> 4);
            f.ecn = tclass & 3;
            f.ip_total_len = u16::from_be_bytes([ip[4], ip[5]]).saturating_add(40);
            f.proto = ip[6];
        }
        _ => {}
    }
    f
}

/// An AF_PACKET socket on one interface that returns the frames it transmits, stamped at
/// dequeue. Created in the calling thread's network namespace (see [`crate::sys::with_netns`]).
pub struct DequeueCapture {
    fd: OwnedFd,
    ifindex: u32,
    buf: [u8; SNAP],
    drops: Cell<u32>,
}

impl DequeueCapture {
    /// Opens a capture of the frames `dev` transmits, with an 8 MiB receive buffer and a 100 ms
    /// [`next`](Self::next) timeout. Needs CAP_NET_RAW (SO_RCVBUFFORCE needs CAP_NET_ADMIN; without
    /// it the buffer falls back to SO_RCVBUF, capped by `net.core.rmem_max`).
    pub fn open(dev: &str) -> io::Result<Self> {
        let ifindex = crate::qpoll::ifindex(dev)?;
        Self::open_ifindex(ifindex).map_err(|e| ctx(e, format_args!("capture on {dev}")))
    }

    /// As [`open`](Self::open), by interface index.
    pub fn open_ifindex(ifindex: u32) -> io::Result<Self> {
        // Protocol 0: the socket receives nothing until bind() below gives it a protocol and a
        // device, so no frame of another interface can slip in first.
        // SAFETY: plain socket(2) call; the fd is owned right below.
        let raw = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
        if raw < 0 {
            return Err(last_err("socket(AF_PACKET, SOCK_RAW)"));
        }
        // SAFETY: raw is a fresh, valid fd that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let s = fd.as_raw_fd();

        // Keep only outgoing frames: A = skb->pkt_type; A == PACKET_OUTGOING ? whole frame : drop.
        let prog = [
            libc::sock_filter { code: 0x20, jt: 0, jf: 0, k: SKF_AD_OFF + SKF_AD_PKTTYPE }, // ld [pkttype]
            libc::sock_filter { code: 0x15, jt: 0, jf: 1, k: PACKET_OUTGOING as u32 },      // jeq #4
            libc::sock_filter { code: 0x06, jt: 0, jf: 0, k: 0x0004_0000 },                 // ret #262144
            libc::sock_filter { code: 0x06, jt: 0, jf: 0, k: 0 },                           // ret #0
        ];
        let fprog = libc::sock_fprog { len: prog.len() as u16, filter: prog.as_ptr() as *mut libc::sock_filter };
        // SAFETY: the kernel copies the program (fprog.len instructions at fprog.filter) during
        // the call; `prog` outlives it.
        let r = unsafe {
            libc::setsockopt(
                s,
                libc::SOL_SOCKET,
                libc::SO_ATTACH_FILTER,
                &fprog as *const _ as *const c_void,
                mem::size_of::<libc::sock_fprog>() as libc::socklen_t,
            )
        };
        if r != 0 {
            return Err(last_err("attach the outgoing-only BPF filter (SO_ATTACH_FILTER)"));
        }
        if set_int_opt(s, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, DEFAULT_RCVBUF).is_err() {
            set_int_opt(s, libc::SOL_SOCKET, libc::SO_RCVBUF, DEFAULT_RCVBUF).map_err(|e| ctx(e, "SO_RCVBUF"))?;
        }
        set_int_opt(s, libc::SOL_SOCKET, SO_TIMESTAMPNS, 1).map_err(|e| ctx(e, "enable SO_TIMESTAMPNS"))?;

        let mut c = DequeueCapture { fd, ifindex, buf: [0u8; SNAP], drops: Cell::new(0) };
        c.set_timeout(DEFAULT_TIMEOUT)?;

        // SAFETY: sockaddr_ll is plain data; all-zero is valid.
        let mut sll: libc::sockaddr_ll = unsafe { mem::zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = ETH_P_ALL.to_be();
        sll.sll_ifindex = ifindex as c_int;
        // SAFETY: sll is a valid sockaddr_ll of the given size.
        let r = unsafe {
            libc::bind(
                s,
                &sll as *const _ as *const libc::sockaddr,
                mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        };
        if r != 0 {
            return Err(last_err(format_args!("bind AF_PACKET socket to ifindex {ifindex}")));
        }
        // PACKET_STATISTICS counters start at bind; read once to reset anything odd.
        c.kernel_drops()?;
        c.drops.set(0);
        Ok(c)
    }

    /// The interface index the capture is bound to.
    pub fn ifindex(&self) -> u32 {
        self.ifindex
    }

    /// Sets how long [`next`](Self::next) waits for a frame before returning `Ok(None)`
    /// (`Duration::ZERO` = wait forever).
    pub fn set_timeout(&mut self, d: Duration) -> io::Result<()> {
        let tv = libc::timeval { tv_sec: d.as_secs() as libc::time_t, tv_usec: d.subsec_micros() as libc::suseconds_t };
        // SAFETY: the kernel reads one timeval from &tv.
        let r = unsafe {
            libc::setsockopt(
                self.fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVTIMEO,
                &tv as *const _ as *const c_void,
                mem::size_of::<libc::timeval>() as libc::socklen_t,
            )
        };
        if r != 0 {
            return Err(last_err("setsockopt(SO_RCVTIMEO) on the capture socket"));
        }
        Ok(())
    }

    /// The next transmitted frame, or `None` when none arrived within the timeout.
    #[allow(clippy::should_implement_trait)] // fallible with a timeout, not an Iterator
    pub fn next(&mut self) -> io::Result<Option<Frame>> {
        loop {
            let mut iov = libc::iovec { iov_base: self.buf.as_mut_ptr() as *mut c_void, iov_len: SNAP };
            // SAFETY: plain data, all-zero is valid.
            let mut sll: libc::sockaddr_ll = unsafe { mem::zeroed() };
            let mut cbuf = [0u64; 8]; // 64 bytes, 8-aligned: room for one SCM_TIMESTAMPNS cmsg
                                      // SAFETY: msghdr is plain data; the fields that matter are set below.
            let mut msg: libc::msghdr = unsafe { mem::zeroed() };
            msg.msg_name = &mut sll as *mut _ as *mut c_void;
            msg.msg_namelen = mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            msg.msg_control = cbuf.as_mut_ptr() as *mut c_void;
            msg.msg_controllen = mem::size_of_val(&cbuf) as _;
            // MSG_TRUNC: copy only SNAP bytes but return the frame's full length.
            // SAFETY: every pointer in msg refers to a live local buffer of the stated length.
            let n = unsafe { libc::recvmsg(self.fd.as_raw_fd(), &mut msg, libc::MSG_TRUNC) };
            if n < 0 {
                let e = io::Error::last_os_error();
                match e.kind() {
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => return Ok(None),
                    io::ErrorKind::Interrupted => continue,
                    _ => return Err(ctx(e, format_args!("recvmsg on the capture of ifindex {}", self.ifindex))),
                }
            }
            if sll.sll_pkttype != PACKET_OUTGOING {
                continue; // the BPF filter already drops these; belt and braces
            }
            let mut t_ns = None;
            // SAFETY: msg was filled by recvmsg; CMSG_* walk only within msg_control/msg_controllen.
            unsafe {
                let mut c = libc::CMSG_FIRSTHDR(&msg);
                while !c.is_null() {
                    if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == SCM_TIMESTAMPNS {
                        let ts = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::timespec);
                        t_ns = Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64);
                    }
                    c = libc::CMSG_NXTHDR(&msg, c);
                }
            }
            // The timestamp is always there with SO_TIMESTAMPNS; fall back to "now" rather than fail.
            let t_ns = t_ns.unwrap_or_else(realtime_ns);
            let n = n as usize;
            return Ok(Some(parse_frame(&self.buf[..n.min(SNAP)], n as u32, t_ns)));
        }
    }

    /// Frames the kernel dropped because the receive buffer was full, since `open`.
    ///
    /// `PACKET_STATISTICS` resets the kernel's counters on every read; this accumulates them.
    pub fn kernel_drops(&self) -> io::Result<u32> {
        let mut st = libc::tpacket_stats { tp_packets: 0, tp_drops: 0 };
        let mut len = mem::size_of::<libc::tpacket_stats>() as libc::socklen_t;
        // SAFETY: the kernel writes at most `len` bytes into `st`.
        let r = unsafe {
            libc::getsockopt(
                self.fd.as_raw_fd(),
                libc::SOL_PACKET,
                PACKET_STATISTICS,
                &mut st as *mut _ as *mut c_void,
                &mut len,
            )
        };
        if r != 0 {
            return Err(last_err("getsockopt(PACKET_STATISTICS)"));
        }
        self.drops.set(self.drops.get().saturating_add(st.tp_drops));
        Ok(self.drops.get())
    }
}

impl AsRawFd for DequeueCapture {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eth(ethertype: u16) -> Vec<u8> {
        let mut f = vec![0xaa; 12];
        f.extend_from_slice(&ethertype.to_be_bytes());
        f
    }

    #[test]
    fn capture_parse_ipv4() {
        let mut f = eth(ETH_P_IP);
        // version 4 IHL 5, TOS 0x03 (CE), total length 1500, ..., proto 6
        f.extend_from_slice(&[0x45, 0x03, 0x05, 0xdc, 0, 0, 0x40, 0, 64, 6, 0, 0]);
        f.resize(SNAP, 0);
        let p = parse_frame(&f, 1514, 77);
        assert_eq!(p, Frame { t_ns: 77, len: 1514, ip_total_len: 1500, ecn: 3, proto: 6 });
    }

    #[test]
    fn capture_parse_vlan_ipv6_and_other() {
        let mut f = eth(ETH_P_8021Q);
        f.extend_from_slice(&[0x00, 0x05]);
        f.extend_from_slice(&ETH_P_IPV6.to_be_bytes());
        // version 6, traffic class 0x02 (ECT(0)), payload length 100, next header 17
        f.extend_from_slice(&[0x60, 0x20, 0, 0, 0, 100, 17, 64]);
        let p = parse_frame(&f, 158, 1);
        assert_eq!((p.ip_total_len, p.ecn, p.proto), (140, 2, 17));

        let mut arp = eth(0x0806);
        arp.extend_from_slice(&[0u8; 28]);
        assert_eq!(parse_frame(&arp, 42, 5), Frame { t_ns: 5, len: 42, ..Default::default() });
        // Truncated / garbage input must not panic.
        assert_eq!(parse_frame(&[1, 2, 3], 3, 0).proto, 0);
        let mut short = eth(ETH_P_IP);
        short.extend_from_slice(&[0x45, 0x01]);
        assert_eq!(parse_frame(&short, 16, 0).ip_total_len, 0);
    }

    #[test]
    fn capture_missing_device_is_an_error() {
        let e = DequeueCapture::open("ccsim-nodev0").err().unwrap();
        assert!(e.to_string().contains("ccsim-nodev0"), "{e}");
    }

    #[test]
    fn capture_sees_dequeue_times_in_netns() {
        use crate::sys::testutil::*;
        use crate::sys::{set_tos, with_netns};
        if !is_root("capture_sees_dequeue_times_in_netns") {
            return;
        }
        let ns = veth_htb("cap", "10mbit");
        let a = ns.name(0).to_string();
        let (mut cap, sock) = with_netns(&a, || {
            let c = DequeueCapture::open("va")?;
            let s = std::net::UdpSocket::bind("10.99.0.1:0")?;
            Ok((c, s))
        })
        .unwrap();
        // Warm up ARP (its request and the first datagram are captured too; skipped below).
        sock.send_to(&[0u8; 10], "10.99.0.2:9").unwrap();
        std::thread::sleep(Duration::from_millis(50));
        while cap.next().unwrap().is_some() {}

        set_tos(sock.as_raw_fd(), 0x02).unwrap(); // ECT(0)
        const N: usize = 60;
        let t_send0 = realtime_ns();
        for _ in 0..N {
            sock.send_to(&[0u8; 1000], "10.99.0.2:9").unwrap();
        }
        let t_send1 = realtime_ns();
        let mut frames = Vec::new();
        while let Some(f) = cap.next().unwrap() {
            if f.proto == 17 {
                frames.push(f);
            }
            if frames.len() == N {
                break;
            }
        }
        assert_eq!(frames.len(), N, "all datagrams seen leaving va");
        for f in &frames {
            assert_eq!((f.len, f.ip_total_len, f.ecn, f.proto), (1042, 1028, 2, 17), "{f:?}");
        }
        assert!(frames.windows(2).all(|w| w[1].t_ns >= w[0].t_ns), "timestamps increase");
        let first = frames[0].t_ns;
        let last = frames[N - 1].t_ns;
        let gaps: Vec<u64> = frames.windows(2).map(|w| w[1].t_ns - w[0].t_ns).collect();
        let mut sorted = gaps.clone();
        sorted.sort_unstable();
        eprintln!(
            "sendto burst took {:.3} ms; capture span {:.3} ms; median gap {:.1} us (1042 B at 10 Mbit/s = 833.6 us); \
             first frame {:.3} ms after the first sendto",
            (t_send1 - t_send0) as f64 / 1e6,
            (last - first) as f64 / 1e6,
            sorted[sorted.len() / 2] as f64 / 1e3,
            (first as f64 - t_send0 as f64) / 1e6
        );
        assert!(first + 1_000_000 >= t_send0, "stamped after sending started");
        // Enqueue times would all fall inside the sendto burst; dequeue times are paced by HTB.
        let ideal = (N as u64 - 1) * 833_600;
        assert!(
            last - first > ideal / 2,
            "span {} ns, ideal {ideal} ns: timestamps are not dequeue times",
            last - first
        );
        assert!(last - first < ideal * 2, "span {} ns, ideal {ideal} ns", last - first);
        assert_eq!(cap.kernel_drops().unwrap(), 0);
        while let Some(f) = cap.next().unwrap() {
            assert_ne!(f.proto, 17, "only {N} datagrams were sent: {f:?}");
        }

        // TCP (BBR paces with EDT: skb->tstamp carries a CLOCK_MONOTONIC departure time on the
        // way down). The tap clone is re-stamped with CLOCK_REALTIME at transmit, so TCP frames
        // must carry wall-clock dequeue times too.
        let b = ns.name(1).to_string();
        let listener = with_netns(&b, || std::net::TcpListener::bind("10.99.0.2:0")).unwrap();
        let port = listener.local_addr().unwrap().port();
        let t0 = realtime_ns();
        let client = with_netns(&a, || {
            let c = std::net::TcpStream::connect(("10.99.0.2", port))?;
            let _ = crate::sys::set_tcp_congestion(c.as_raw_fd(), "bbr"); // EDT pacing if available
            Ok(c)
        })
        .unwrap();
        let (server, _) = listener.accept().unwrap();
        let reader = std::thread::spawn(move || {
            use std::io::Read;
            let mut buf = vec![0u8; 65536];
            let mut got = 0;
            let mut s = &server;
            while got < 200_000 {
                got += s.read(&mut buf).unwrap();
            }
        });
        {
            use std::io::Write;
            (&client).write_all(&[7u8; 200_000]).unwrap();
        }
        reader.join().unwrap();
        let t1 = realtime_ns();
        let mut tcp = Vec::new();
        while let Some(f) = cap.next().unwrap() {
            if f.proto == 6 {
                tcp.push(f);
            }
        }
        assert!(tcp.len() >= 200_000 / 1448, "{} TCP frames", tcp.len());
        let t2 = realtime_ns();
        assert!(tcp.iter().all(|f| f.t_ns >= t0 && f.t_ns <= t2), "TCP frame stamps outside [{t0}, {t2}]");
        // All data had arrived by t1, so every data frame left the qdisc before it.
        assert!(tcp.iter().filter(|f| f.len > 1000).all(|f| f.t_ns <= t1), "data frame stamped after t1");
        assert!(tcp.windows(2).all(|w| w[1].t_ns >= w[0].t_ns));
        let data = tcp.iter().filter(|f| f.len > 1000).count();
        eprintln!(
            "TCP ({}): {} frames ({} full-size) in {:.1} ms, all stamped inside the wall-clock window",
            crate::sys::tcp_congestion(client.as_raw_fd()).unwrap(),
            tcp.len(),
            data,
            (t1 - t0) as f64 / 1e6
        );
        assert_eq!(cap.kernel_drops().unwrap(), 0);
        drop(ns);
    }
}
