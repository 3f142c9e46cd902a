//! Queue observation: an rtnetlink `RTM_GETQDISC` dump poller written directly on a netlink socket.
//!
//! One [`QdiscPoller::dump`] is one `send` of a 36-byte request and usually two `recv`s into a
//! reused 64 KiB buffer; it reports every qdisc of one interface with its `TCA_STATS2` counters.
//! For an HTB bottleneck, the root `htb` row (parent [`TC_H_ROOT`]) carries the whole tree's
//! qlen/backlog while the leaf `pfifo` row carries its own; both are returned.

use std::ffi::{c_void, CString};
use std::io;
use std::mem;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use crate::sys::{ctx, last_err};

/// `parent` of a root qdisc.
pub const TC_H_ROOT: u32 = 0xFFFF_FFFF;
/// `parent` of an ingress/clsact qdisc.
pub const TC_H_INGRESS: u32 = 0xFFFF_FFF1;

// include/uapi/linux/netlink.h, rtnetlink.h, pkt_sched.h, gen_stats.h
const NLMSG_HDRLEN: usize = 16;
const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;
const NLM_F_REQUEST: u16 = 1;
const NLM_F_DUMP: u16 = 0x300; // NLM_F_ROOT | NLM_F_MATCH
const RTM_NEWQDISC: u16 = 36;
const RTM_GETQDISC: u16 = 38;
const TCMSG_LEN: usize = 20; // family u8, pad u8, pad u16, ifindex i32, handle u32, parent u32, info u32
const NLA_HDRLEN: usize = 4;
const NLA_TYPE_MASK: u16 = 0x3FFF; // clears NLA_F_NESTED and NLA_F_NET_BYTEORDER
const TCA_KIND: u16 = 1;
const TCA_STATS2: u16 = 7;
const TCA_STATS_BASIC: u16 = 1;
const TCA_STATS_QUEUE: u16 = 3;
const TCA_STATS_PKT64: u16 = 8;

const RECV_BUF: usize = 64 * 1024;

/// NLMSG_ALIGN / NLA_ALIGN: round up to 4 bytes.
fn align4(n: usize) -> usize {
    (n + 3) & !3
}

/// Counters of one qdisc, from `TCA_STATS2`. Counters are cumulative since the qdisc was created;
/// `qlen` (packets) and `backlog` (bytes) are instantaneous.
#[derive(Clone, Debug, Default)]
pub struct QdiscStats {
    pub ifindex: u32,
    /// e.g. 0x00010000 for `1:`.
    pub handle: u32,
    /// [`TC_H_ROOT`] for the root qdisc, else the parent class (e.g. 0x00010010 for class `1:10`; tc handles are hex).
    pub parent: u32,
    /// "htb", "pfifo", "noqueue", "clsact", ...
    pub kind: String,
    pub bytes: u64,
    pub packets: u64,
    pub qlen: u32,
    pub backlog: u32,
    pub drops: u32,
    pub requeues: u32,
    pub overlimits: u32,
}

impl QdiscStats {
    /// True for the interface's root (egress) qdisc.
    pub fn is_root(&self) -> bool {
        self.parent == TC_H_ROOT
    }
}

/// A NETLINK_ROUTE socket that dumps qdisc statistics. It belongs to the network namespace of the
/// thread that created it (see [`crate::sys::with_netns`]) and can then be used from any thread.
pub struct QdiscPoller {
    fd: OwnedFd,
    seq: u32,
    buf: Vec<u8>,
}

impl QdiscPoller {
    /// Opens a NETLINK_ROUTE socket in the calling thread's network namespace.
    pub fn new() -> io::Result<Self> {
        // SAFETY: plain socket(2) call; the returned fd is owned below.
        let raw = unsafe { libc::socket(libc::AF_NETLINK, libc::SOCK_RAW | libc::SOCK_CLOEXEC, libc::NETLINK_ROUTE) };
        if raw < 0 {
            return Err(last_err("socket(AF_NETLINK, NETLINK_ROUTE)"));
        }
        // SAFETY: raw is a fresh, valid fd that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        // SAFETY: sockaddr_nl is plain data, all-zero is a valid value.
        let mut sa: libc::sockaddr_nl = unsafe { mem::zeroed() };
        sa.nl_family = libc::AF_NETLINK as libc::sa_family_t;
        // nl_pid 0: the kernel assigns our port id on bind; connect() to pid 0 = the kernel.
        let sa_len = mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t;
        // SAFETY: sa is a valid sockaddr_nl of the given length.
        if unsafe { libc::bind(fd.as_raw_fd(), &sa as *const _ as *const libc::sockaddr, sa_len) } != 0 {
            return Err(last_err("bind(netlink)"));
        }
        // SAFETY: as above.
        if unsafe { libc::connect(fd.as_raw_fd(), &sa as *const _ as *const libc::sockaddr, sa_len) } != 0 {
            return Err(last_err("connect(netlink, kernel)"));
        }
        // A dump must never block forever.
        let tv = libc::timeval { tv_sec: 1, tv_usec: 0 };
        // SAFETY: the kernel reads one timeval from &tv.
        let r = unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVTIMEO,
                &tv as *const _ as *const c_void,
                mem::size_of::<libc::timeval>() as libc::socklen_t,
            )
        };
        if r != 0 {
            return Err(last_err("setsockopt(netlink, SO_RCVTIMEO)"));
        }
        Ok(QdiscPoller { fd, seq: 0, buf: vec![0u8; RECV_BUF] })
    }

    /// All qdiscs of interface `ifindex` (0 = every interface of the namespace) with their stats.
    pub fn dump(&mut self, ifindex: u32) -> io::Result<Vec<QdiscStats>> {
        let mut out = Vec::with_capacity(4);
        self.dump_into(ifindex, &mut out)?;
        Ok(out)
    }

    /// Like [`dump`](Self::dump) but clears and fills `out`, reusing its allocation.
    pub fn dump_into(&mut self, ifindex: u32, out: &mut Vec<QdiscStats>) -> io::Result<()> {
        out.clear();
        self.seq = self.seq.wrapping_add(1);
        let seq = self.seq;
        let req = build_request(seq, ifindex);
        // SAFETY: sends req.len() bytes from req on our own socket.
        let n = unsafe { libc::send(self.fd.as_raw_fd(), req.as_ptr() as *const c_void, req.len(), 0) };
        if n != req.len() as isize {
            return Err(last_err(format_args!("send RTM_GETQDISC dump request (ifindex {ifindex})")));
        }
        loop {
            // MSG_TRUNC makes recv return the datagram's real length, so truncation is detected.
            // SAFETY: the kernel writes at most buf.len() bytes into buf.
            let n = unsafe {
                libc::recv(self.fd.as_raw_fd(), self.buf.as_mut_ptr() as *mut c_void, self.buf.len(), libc::MSG_TRUNC)
            };
            if n < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(ctx(e, format_args!("recv RTM_GETQDISC dump reply (ifindex {ifindex})")));
            }
            let n = n as usize;
            if n > self.buf.len() {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("RTM_GETQDISC reply of {n} bytes truncated to {} bytes", self.buf.len()),
                ));
            }
            if parse_messages(&self.buf[..n], seq, ifindex, out)? {
                return Ok(());
            }
        }
    }
}

impl AsRawFd for QdiscPoller {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// nlmsghdr + tcmsg asking for a dump of the qdiscs of `ifindex`.
fn build_request(seq: u32, ifindex: u32) -> [u8; NLMSG_HDRLEN + TCMSG_LEN] {
    let mut m = [0u8; NLMSG_HDRLEN + TCMSG_LEN];
    m[0..4].copy_from_slice(&((NLMSG_HDRLEN + TCMSG_LEN) as u32).to_ne_bytes());
    m[4..6].copy_from_slice(&RTM_GETQDISC.to_ne_bytes());
    m[6..8].copy_from_slice(&(NLM_F_REQUEST | NLM_F_DUMP).to_ne_bytes());
    m[8..12].copy_from_slice(&seq.to_ne_bytes());
    // nlmsg_pid 0; tcm_family AF_UNSPEC; tcm_ifindex selects the device (the kernel may or may
    // not filter on it, parse_messages filters again).
    m[NLMSG_HDRLEN + 4..NLMSG_HDRLEN + 8].copy_from_slice(&(ifindex as i32).to_ne_bytes());
    m
}

fn rd_u16(b: &[u8], at: usize) -> u16 {
    u16::from_ne_bytes([b[at], b[at + 1]])
}
fn rd_u32(b: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes(b[at..at + 4].try_into().unwrap())
}
fn rd_u64(b: &[u8], at: usize) -> u64 {
    u64::from_ne_bytes(b[at..at + 8].try_into().unwrap())
}

fn bad(what: impl std::fmt::Display) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("malformed rtnetlink qdisc reply: {what}"))
}

/// Parses one datagram of a dump reply, appending qdiscs of `ifindex` (all if 0) to `out`.
/// Returns true once NLMSG_DONE of dump `seq` was seen. Messages of other sequence numbers
/// (left over from an aborted earlier dump) are skipped.
fn parse_messages(buf: &[u8], seq: u32, ifindex: u32, out: &mut Vec<QdiscStats>) -> io::Result<bool> {
    let mut off = 0;
    while off + NLMSG_HDRLEN <= buf.len() {
        let len = rd_u32(buf, off) as usize;
        let ty = rd_u16(buf, off + 4);
        let mseq = rd_u32(buf, off + 8);
        if len < NLMSG_HDRLEN || off + len > buf.len() {
            return Err(bad(format_args!("nlmsg_len {len} at offset {off} of {}", buf.len())));
        }
        let payload = &buf[off + NLMSG_HDRLEN..off + len];
        off += align4(len);
        if mseq != seq {
            continue;
        }
        match ty {
            NLMSG_DONE => return Ok(true),
            NLMSG_ERROR => {
                if payload.len() < 4 {
                    return Err(bad("short NLMSG_ERROR"));
                }
                let err = rd_u32(payload, 0) as i32;
                if err != 0 {
                    return Err(ctx(io::Error::from_raw_os_error(-err), "RTM_GETQDISC dump"));
                }
                // error 0 is an ACK; a dump ends with NLMSG_DONE, keep reading.
            }
            RTM_NEWQDISC => {
                let q = parse_qdisc(payload)?;
                if ifindex == 0 || q.ifindex == ifindex {
                    out.push(q);
                }
            }
            _ => {}
        }
    }
    Ok(false)
}

/// Iterates the netlink attributes in `b`: (type without flag bits, payload).
fn attrs(b: &[u8]) -> impl Iterator<Item = io::Result<(u16, &[u8])>> {
    let mut off = 0;
    std::iter::from_fn(move || {
        if off + NLA_HDRLEN > b.len() {
            return None;
        }
        let len = rd_u16(b, off) as usize;
        let ty = rd_u16(b, off + 2) & NLA_TYPE_MASK;
        if len < NLA_HDRLEN || off + len > b.len() {
            off = b.len();
            return Some(Err(bad(format_args!("nla_len {len} at offset {off}"))));
        }
        let payload = &b[off + NLA_HDRLEN..off + len];
        off += align4(len);
        Some(Ok((ty, payload)))
    })
}

/// One RTM_NEWQDISC payload (tcmsg + attributes).
fn parse_qdisc(p: &[u8]) -> io::Result<QdiscStats> {
    if p.len() < TCMSG_LEN {
        return Err(bad("RTM_NEWQDISC shorter than struct tcmsg"));
    }
    let mut q = QdiscStats { ifindex: rd_u32(p, 4), handle: rd_u32(p, 8), parent: rd_u32(p, 12), ..Default::default() };
    let mut pkt64 = None;
    for a in attrs(&p[align4(TCMSG_LEN)..]) {
        let (ty, v) = a?;
        match ty {
            TCA_KIND => {
                let end = v.iter().position(|&c| c == 0).unwrap_or(v.len());
                q.kind = String::from_utf8_lossy(&v[..end]).into_owned();
            }
            TCA_STATS2 => {
                for s in attrs(v) {
                    let (sty, sv) = s?;
                    match sty {
                        // struct gnet_stats_basic { __u64 bytes; __u32 packets; } (16 bytes, padded)
                        TCA_STATS_BASIC if sv.len() >= 12 => {
                            q.bytes = rd_u64(sv, 0);
                            q.packets = rd_u32(sv, 8) as u64;
                        }
                        // struct gnet_stats_queue { qlen, backlog, drops, requeues, overlimits }
                        TCA_STATS_QUEUE if sv.len() >= 20 => {
                            q.qlen = rd_u32(sv, 0);
                            q.backlog = rd_u32(sv, 4);
                            q.drops = rd_u32(sv, 8);
                            q.requeues = rd_u32(sv, 12);
                            q.overlimits = rd_u32(sv, 16);
                        }
                        // Full 64-bit packet count, sent when it exceeds 32 bits.
                        TCA_STATS_PKT64 if sv.len() >= 8 => pkt64 = Some(rd_u64(sv, 0)),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    if let Some(p) = pkt64 {
        q.packets = p;
    }
    Ok(q)
}

/// `if_nametoindex(name)` in the calling thread's network namespace.
pub fn ifindex(name: &str) -> io::Result<u32> {
    let c = CString::new(name)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, format!("interface name {name:?} contains NUL")))?;
    // SAFETY: c is a valid NUL-terminated string for the duration of the call.
    let i = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if i == 0 {
        return Err(last_err(format_args!("if_nametoindex({name:?})")));
    }
    Ok(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Appends a netlink attribute (header, payload, padding to 4).
    fn nla(buf: &mut Vec<u8>, ty: u16, payload: &[u8]) {
        buf.extend_from_slice(&((NLA_HDRLEN + payload.len()) as u16).to_ne_bytes());
        buf.extend_from_slice(&ty.to_ne_bytes());
        buf.extend_from_slice(payload);
        buf.resize(align4(buf.len()), 0);
    }

    /// Appends a netlink message with the given type, seq and payload.
    fn nlmsg(buf: &mut Vec<u8>, ty: u16, seq: u32, payload: &[u8]) {
        buf.extend_from_slice(&((NLMSG_HDRLEN + payload.len()) as u32).to_ne_bytes());
        buf.extend_from_slice(&ty.to_ne_bytes());
        buf.extend_from_slice(&2u16.to_ne_bytes()); // NLM_F_MULTI
        buf.extend_from_slice(&seq.to_ne_bytes());
        buf.extend_from_slice(&1234u32.to_ne_bytes());
        buf.extend_from_slice(payload);
        buf.resize(align4(buf.len()), 0);
    }

    #[allow(clippy::too_many_arguments)]
    fn qdisc_msg(
        ifindex: u32,
        handle: u32,
        parent: u32,
        kind: &str,
        bytes: u64,
        pkts: u32,
        queue: [u32; 5],
    ) -> Vec<u8> {
        let mut p = Vec::new();
        p.extend_from_slice(&[0u8, 0, 0, 0]);
        p.extend_from_slice(&(ifindex as i32).to_ne_bytes());
        p.extend_from_slice(&handle.to_ne_bytes());
        p.extend_from_slice(&parent.to_ne_bytes());
        p.extend_from_slice(&2u32.to_ne_bytes()); // tcm_info (refcnt)
        let mut k = kind.as_bytes().to_vec();
        k.push(0);
        nla(&mut p, TCA_KIND, &k);
        nla(&mut p, 2 /* TCA_OPTIONS */ | 0x8000, &[1, 2, 3, 4, 5]); // odd length, NLA_F_NESTED
        let mut st = Vec::new();
        let mut basic = bytes.to_ne_bytes().to_vec();
        basic.extend_from_slice(&pkts.to_ne_bytes());
        basic.extend_from_slice(&[0u8; 4]);
        nla(&mut st, 5 /* TCA_STATS_RATE_EST */, &[9u8; 7]);
        nla(&mut st, TCA_STATS_BASIC, &basic);
        let qb: Vec<u8> = queue.iter().flat_map(|v| v.to_ne_bytes()).collect();
        nla(&mut st, TCA_STATS_QUEUE, &qb);
        nla(&mut p, TCA_STATS2 | 0x8000, &st);
        nla(&mut p, 3 /* TCA_STATS */, &[0u8; 36]);
        p
    }

    #[test]
    fn qpoll_request_layout() {
        let r = build_request(7, 5);
        assert_eq!(r.len(), 36);
        assert_eq!(rd_u32(&r, 0), 36);
        assert_eq!(rd_u16(&r, 4), RTM_GETQDISC);
        assert_eq!(rd_u16(&r, 6), 0x301);
        assert_eq!(rd_u32(&r, 8), 7);
        assert_eq!(rd_u32(&r, 16 + 4), 5);
    }

    #[test]
    fn qpoll_parses_multipart_dump() {
        let mut d1 = Vec::new();
        nlmsg(&mut d1, RTM_NEWQDISC, 9, &qdisc_msg(3, 0x10000, TC_H_ROOT, "htb", 150_000, 100, [7, 10_500, 2, 1, 40]));
        nlmsg(&mut d1, RTM_NEWQDISC, 9, &qdisc_msg(3, 0x100000, 0x10010, "pfifo", 149_000, 99, [6, 9_000, 2, 0, 0]));
        nlmsg(&mut d1, RTM_NEWQDISC, 9, &qdisc_msg(4, 0, TC_H_ROOT, "noqueue", 0, 0, [0; 5]));
        // A message of an older dump is ignored, even an error.
        nlmsg(&mut d1, NLMSG_ERROR, 8, &(-(libc::EBUSY)).to_ne_bytes());
        let mut out = Vec::new();
        assert!(!parse_messages(&d1, 9, 3, &mut out).unwrap());
        assert_eq!(out.len(), 2);
        let (h, f) = (&out[0], &out[1]);
        assert_eq!((h.kind.as_str(), h.handle, h.parent, h.ifindex), ("htb", 0x10000, TC_H_ROOT, 3));
        assert!(h.is_root() && !f.is_root());
        assert_eq!(
            (h.bytes, h.packets, h.qlen, h.backlog, h.drops, h.requeues, h.overlimits),
            (150_000, 100, 7, 10_500, 2, 1, 40)
        );
        assert_eq!(
            (f.kind.as_str(), f.handle, f.parent, f.packets, f.qlen, f.backlog),
            ("pfifo", 0x100000, 0x10010, 99, 6, 9_000)
        );

        let mut d2 = Vec::new();
        nlmsg(&mut d2, NLMSG_DONE, 9, &0i32.to_ne_bytes());
        assert!(parse_messages(&d2, 9, 3, &mut out).unwrap());
        assert_eq!(out.len(), 2);

        // ifindex 0 keeps every interface.
        let mut all = Vec::new();
        parse_messages(&d1, 9, 0, &mut all).unwrap();
        assert_eq!(all.len(), 3);
        assert_eq!(all[2].kind, "noqueue");
    }

    #[test]
    fn qpoll_error_and_malformed() {
        let mut e = Vec::new();
        let mut p = (-(libc::EPERM)).to_ne_bytes().to_vec();
        p.extend_from_slice(&[0u8; 16]);
        nlmsg(&mut e, NLMSG_ERROR, 4, &p);
        let err = parse_messages(&e, 4, 0, &mut Vec::new()).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::PermissionDenied, "{err}");
        assert!(err.to_string().contains("RTM_GETQDISC"));

        // nlmsg_len past the end of the datagram.
        let mut m = Vec::new();
        nlmsg(&mut m, RTM_NEWQDISC, 4, &qdisc_msg(1, 0, TC_H_ROOT, "htb", 0, 0, [0; 5]));
        let too_long = m.len() as u32 + 8;
        m[0..4].copy_from_slice(&too_long.to_ne_bytes());
        assert_eq!(parse_messages(&m, 4, 0, &mut Vec::new()).unwrap_err().kind(), io::ErrorKind::InvalidData);

        // An attribute whose nla_len overruns the message.
        let mut q = qdisc_msg(1, 0, TC_H_ROOT, "htb", 0, 0, [0; 5]);
        q[20..22].copy_from_slice(&200u16.to_ne_bytes());
        let mut m = Vec::new();
        nlmsg(&mut m, RTM_NEWQDISC, 4, &q);
        assert!(parse_messages(&m, 4, 0, &mut Vec::new()).is_err());
    }

    #[test]
    fn qpoll_attribute_alignment() {
        let mut b = Vec::new();
        nla(&mut b, TCA_KIND, b"pfifo\0"); // 10 bytes -> padded to 12
        nla(&mut b, 0x8000 | 9, &[]); // empty, nested flag masked off
        nla(&mut b, 4, &[1]);
        let v: Vec<(u16, Vec<u8>)> = attrs(&b).map(|a| a.map(|(t, p)| (t, p.to_vec())).unwrap()).collect();
        assert_eq!(v, vec![(TCA_KIND, b"pfifo\0".to_vec()), (9, vec![]), (4, vec![1])]);
        assert_eq!(align4(10), 12);
        assert_eq!(align4(12), 12);
    }

    #[test]
    fn qpoll_ifindex_lo_and_missing() {
        assert_eq!(ifindex("lo").unwrap(), 1);
        let e = ifindex("ccsim-nodev0").unwrap_err();
        assert!(e.to_string().contains("ccsim-nodev0"), "{e}");
    }

    #[test]
    fn qpoll_root_namespace_dump_works_unprivileged() {
        // Dumping qdiscs needs no privilege; lo is there in any namespace.
        let mut p = QdiscPoller::new().unwrap();
        let rows = p.dump(1).unwrap();
        assert!(rows.iter().all(|q| q.ifindex == 1), "{rows:?}");
        assert!(!rows.is_empty(), "lo has a (noqueue) root qdisc");
    }

    #[test]
    fn qpoll_htb_tree_in_netns() {
        use crate::sys::testutil::*;
        use crate::sys::{clock_ns, with_netns};
        if !is_root("qpoll_htb_tree_in_netns") {
            return;
        }
        let ns = veth_htb("qp", "10mbit");
        let a = ns.name(0).to_string();
        let (mut poller, va, sock) = with_netns(&a, || {
            let p = QdiscPoller::new()?;
            let va = ifindex("va")?;
            let s = std::net::UdpSocket::bind("10.99.0.1:0")?;
            Ok((p, va, s))
        })
        .unwrap();
        // Warm up ARP so the burst below goes straight into HTB.
        sock.send_to(&[0u8; 10], "10.99.0.2:9").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(50));

        let before = poller.dump(va).unwrap();
        assert!(before.iter().all(|q| q.ifindex == va));
        let all = poller.dump(0).unwrap();
        assert!(all.iter().any(|q| q.ifindex == 1) && all.iter().filter(|q| q.ifindex == va).count() == before.len());
        let root = before.iter().find(|q| q.is_root()).expect("root qdisc");
        assert_eq!(root.kind, "htb");
        assert_eq!(root.handle, 0x0001_0000);
        let leaf = before.iter().find(|q| q.handle == 0x0010_0000).expect("leaf 10:");
        assert_eq!((leaf.kind.as_str(), leaf.parent), ("pfifo", 0x0001_0010));

        // 100 x 1000 B at 10 Mbit/s: ~86 ms to drain, so a queue must build up.
        for _ in 0..100 {
            sock.send_to(&[0u8; 1000], "10.99.0.2:9").unwrap();
        }
        let during = poller.dump(va).unwrap();
        let root_d = during.iter().find(|q| q.is_root()).unwrap();
        let leaf_d = during.iter().find(|q| q.handle == 0x0010_0000).unwrap();
        eprintln!("during burst: root {root_d:?}\n              leaf {leaf_d:?}");
        assert!(leaf_d.qlen > 10, "leaf qlen {}", leaf_d.qlen);
        // The root counts the whole tree. Rows are not one atomic snapshot: the other CPU keeps
        // dequeueing between the root's and the leaf's row, so allow a little skew.
        assert!(root_d.qlen + 3 >= leaf_d.qlen, "root counts the whole tree");
        assert_eq!(leaf_d.backlog, leaf_d.qlen * 1042, "1000 B payload + 42 B headers per frame");

        // Latency of one dump, measured while the queue drains and after.
        let mut out = Vec::new();
        let mut lat = Vec::with_capacity(5000);
        for _ in 0..5000 {
            let t0 = clock_ns();
            poller.dump_into(va, &mut out).unwrap();
            lat.push(clock_ns() - t0);
        }
        lat.sort_unstable();
        let pct = |p: f64| lat[((lat.len() - 1) as f64 * p) as usize] as f64 / 1000.0;
        eprintln!(
            "dump latency over {} dumps ({} rows each): min {:.1} us, median {:.1} us, p90 {:.1} us, p99 {:.1} us, max {:.1} us",
            lat.len(),
            out.len(),
            pct(0.0),
            pct(0.5),
            pct(0.9),
            pct(0.99),
            pct(1.0)
        );
        assert!(pct(0.5) < 500.0, "median dump latency {} us", pct(0.5));

        std::thread::sleep(std::time::Duration::from_millis(150));
        let after = poller.dump(va).unwrap();
        let root_a = after.iter().find(|q| q.is_root()).unwrap();
        let leaf_a = after.iter().find(|q| q.handle == 0x0010_0000).unwrap();
        assert_eq!((root_a.qlen, leaf_a.qlen, leaf_a.backlog), (0, 0, 0));
        assert!(leaf_a.packets >= 101 && root_a.packets >= 101, "{root_a:?} {leaf_a:?}");
        assert!(leaf_a.bytes >= 100 * 1042);
        assert_eq!(leaf_a.drops, 0);
        assert!(root_a.overlimits > 0, "HTB throttled the burst");
        drop(ns);
    }
}
