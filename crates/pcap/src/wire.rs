//! A simulated packet as the bytes on the wire: an IPv4 header, then TCP with its options laid
//! out as Linux writes them (`tcp_options_write`), or an ICMP echo; checksums computed. The
//! simulator carries no payload bytes: the payload is zeros (which leave checksums unchanged,
//! so a checksum over the headers is the checksum of the whole packet).

use ccsim_net::{CapturedPacket, CapturedPayload};
use ccsim_tcp::{Ecn, Segment};

pub const IPV4_HEADER: usize = 20;
const TCP_HEADER: usize = 20;
const ICMP_HEADER: usize = 8;
const PROTO_ICMP: u8 = 1;
const PROTO_TCP: u8 = 6;
/// IP TTL of a packet leaving its host (`net.ipv4.ip_default_ttl`).
const DEFAULT_TTL: u8 = 64;
/// IPv4 "don't fragment": Linux sets it on TCP (path MTU discovery), not on ping's echoes.
const IP_DF: u16 = 0x4000;

// TCP option kinds (RFC 793, 7323, 2018).
const TCPOPT_NOP: u8 = 1;
const TCPOPT_MSS: u8 = 2;
const TCPOPT_WINDOW: u8 = 3;
const TCPOPT_SACK_PERM: u8 = 4;
const TCPOPT_SACK: u8 = 5;
const TCPOPT_TIMESTAMP: u8 = 8;

/// The IP ECN field's two bits.
pub fn ecn_bits(e: Ecn) -> u8 {
    match e {
        Ecn::NotEct => 0b00,
        Ecn::Ect1 => 0b01,
        Ecn::Ect0 => 0b10,
        Ecn::Ce => 0b11,
    }
}

/// The packet's headers — IPv4, then TCP with options or ICMP echo, no payload — into `out`
/// (cleared first), between addresses `src` and `dst`.
pub fn headers(p: &CapturedPacket, src: u32, dst: u32, out: &mut Vec<u8>) {
    out.clear();
    let (proto, flags) = match p.payload {
        CapturedPayload::Tcp { .. } => (PROTO_TCP, IP_DF),
        CapturedPayload::Echo { .. } => (PROTO_ICMP, 0),
    };
    let total = p.size.min(u16::MAX as u32) as u16;
    out.push(0x45); // version 4, 5 words
    out.push((p.dscp << 2) | ecn_bits(p.ecn));
    out.extend_from_slice(&total.to_be_bytes());
    out.extend_from_slice(&0u16.to_be_bytes()); // identification
    out.extend_from_slice(&flags.to_be_bytes());
    out.push(DEFAULT_TTL);
    out.push(proto);
    out.extend_from_slice(&[0, 0]); // checksum, below
    out.extend_from_slice(&src.to_be_bytes());
    out.extend_from_slice(&dst.to_be_bytes());
    let c = checksum(&[&out[..IPV4_HEADER]], 0);
    out[10..12].copy_from_slice(&c.to_be_bytes());
    let l4_len = (total as usize).saturating_sub(IPV4_HEADER);
    match p.payload {
        CapturedPayload::Tcp { src_port, dst_port, seg } => {
            tcp(&seg, src_port, dst_port, out);
            let tcp = &out[IPV4_HEADER..];
            let pseudo = pseudo_header_sum(src, dst, PROTO_TCP, l4_len as u32);
            let c = checksum(&[tcp], pseudo);
            out[IPV4_HEADER + 16..IPV4_HEADER + 18].copy_from_slice(&c.to_be_bytes());
        }
        CapturedPayload::Echo { reply, probe, seq } => {
            out.push(if reply { 0 } else { 8 }); // echo reply / echo request
            out.push(0);
            out.extend_from_slice(&[0, 0]);
            out.extend_from_slice(&(probe as u16).to_be_bytes());
            out.extend_from_slice(&(seq as u16).to_be_bytes());
            let c = checksum(&[&out[IPV4_HEADER..IPV4_HEADER + ICMP_HEADER]], 0);
            out[IPV4_HEADER + 2..IPV4_HEADER + 4].copy_from_slice(&c.to_be_bytes());
        }
    }
}

/// The TCP header with its options, as `tcp_options_write` orders them: MSS; timestamps (after
/// SACK-permitted on a SYN, else after two NOPs), or SACK-permitted alone; window scale; SACK
/// blocks.
fn tcp(seg: &Segment, src_port: u16, dst_port: u16, out: &mut Vec<u8>) {
    let o = &seg.opts;
    let opt_len = o.wire_len() as usize;
    out.extend_from_slice(&src_port.to_be_bytes());
    out.extend_from_slice(&dst_port.to_be_bytes());
    out.extend_from_slice(&seg.seq.to_be_bytes());
    out.extend_from_slice(&seg.ack.to_be_bytes());
    out.push((((TCP_HEADER + opt_len) / 4) as u8) << 4);
    out.push(seg.flags.0); // FIN .. CWR are byte 13's bits as they stand
    out.extend_from_slice(&seg.win.to_be_bytes());
    out.extend_from_slice(&[0, 0, 0, 0]); // checksum (filled by the caller), urgent pointer
    let start = out.len();
    if let Some(mss) = o.mss {
        out.extend_from_slice(&[TCPOPT_MSS, 4]);
        out.extend_from_slice(&mss.to_be_bytes());
    }
    if let Some((tsval, tsecr)) = o.timestamp {
        if o.sack_permitted {
            out.extend_from_slice(&[TCPOPT_SACK_PERM, 2]);
        } else {
            out.extend_from_slice(&[TCPOPT_NOP, TCPOPT_NOP]);
        }
        out.extend_from_slice(&[TCPOPT_TIMESTAMP, 10]);
        out.extend_from_slice(&tsval.to_be_bytes());
        out.extend_from_slice(&tsecr.to_be_bytes());
    } else if o.sack_permitted {
        out.extend_from_slice(&[TCPOPT_NOP, TCPOPT_NOP, TCPOPT_SACK_PERM, 2]);
    }
    if let Some(ws) = o.wscale {
        out.extend_from_slice(&[TCPOPT_NOP, TCPOPT_WINDOW, 3, ws]);
    }
    let blocks = o.sack_blocks();
    if !blocks.is_empty() {
        out.extend_from_slice(&[TCPOPT_NOP, TCPOPT_NOP, TCPOPT_SACK, (2 + 8 * blocks.len()) as u8]);
        for &(s, e) in blocks {
            out.extend_from_slice(&s.to_be_bytes());
            out.extend_from_slice(&e.to_be_bytes());
        }
    }
    debug_assert_eq!(out.len() - start, opt_len, "TcpOptions::wire_len agrees with the layout");
}

/// The pseudo-header's part of the TCP checksum (RFC 793): addresses, protocol, length.
fn pseudo_header_sum(src: u32, dst: u32, proto: u8, len: u32) -> u32 {
    (src >> 16) + (src & 0xffff) + (dst >> 16) + (dst & 0xffff) + proto as u32 + len
}

/// The Internet checksum (RFC 1071) of `parts` laid end to end, starting from `sum`.
fn checksum(parts: &[&[u8]], mut sum: u32) -> u16 {
    for part in parts {
        let mut chunks = part.chunks_exact(2);
        for c in &mut chunks {
            sum += u16::from_be_bytes([c[0], c[1]]) as u32;
        }
        if let [b] = chunks.remainder() {
            sum += (*b as u32) << 8;
        }
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ccsim_engine::SimTime;
    use ccsim_net::NodeId;
    use ccsim_tcp::{TcpFlags, TcpOptions};

    fn seg() -> Segment {
        Segment {
            seq: 1000,
            ack: 2000,
            len: 0,
            flags: TcpFlags(TcpFlags::ACK),
            win: 500,
            ecn: Ecn::Ect0,
            opts: TcpOptions::default(),
            tstamp_ns: 0,
            skb_more: false,
        }
    }

    fn packet(seg: Segment, ecn: Ecn) -> CapturedPacket {
        CapturedPacket {
            capture: 0,
            t: SimTime::ZERO,
            src: NodeId(0),
            dst: NodeId(1),
            size: 40 + seg.opts.wire_len() + seg.len,
            dscp: 10,
            ecn,
            payload: CapturedPayload::Tcp { src_port: 40000, dst_port: 5001, seg },
        }
    }

    /// A correct Internet checksum makes the sum over the covered bytes 0xffff.
    fn verifies(parts: &[&[u8]], sum: u32) -> bool {
        checksum(parts, sum) == 0
    }

    #[test]
    fn the_ip_header_carries_dscp_ecn_and_a_valid_checksum() {
        let mut out = Vec::new();
        headers(&packet(seg(), Ecn::Ce), 0x0a000001, 0x0a000002, &mut out);
        assert_eq!(out[1], (10 << 2) | 0b11);
        assert_eq!(u16::from_be_bytes([out[2], out[3]]), 40);
        assert_eq!(&out[12..20], &[10, 0, 0, 1, 10, 0, 0, 2]);
        assert!(verifies(&[&out[..20]], 0));
        let pseudo = pseudo_header_sum(0x0a000001, 0x0a000002, PROTO_TCP, 20);
        assert!(verifies(&[&out[20..]], pseudo));
    }

    #[test]
    fn syn_options_are_laid_out_as_linux_writes_them() {
        let mut s = seg();
        s.flags = TcpFlags(TcpFlags::SYN | TcpFlags::ECE | TcpFlags::CWR);
        s.opts.mss = Some(1460);
        s.opts.sack_permitted = true;
        s.opts.timestamp = Some((7, 0));
        s.opts.wscale = Some(7);
        let mut out = Vec::new();
        headers(&packet(s, Ecn::NotEct), 1, 2, &mut out);
        let tcp = &out[20..];
        assert_eq!(tcp[12] >> 4, 10, "20 + 20 option bytes");
        assert_eq!(tcp[13], 0x02 | 0x40 | 0x80);
        assert_eq!(&tcp[20..], &[2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 7, 0, 0, 0, 0, 1, 3, 3, 7]);
    }

    #[test]
    fn sack_blocks_follow_the_timestamps_and_the_checksum_covers_a_zero_payload() {
        let mut s = seg();
        s.len = 1000;
        s.opts.timestamp = Some((1, 2));
        s.opts.sack = [(3000, 4000), (5000, 6000), (0, 0), (0, 0)];
        s.opts.sack_len = 2;
        let p = packet(s, Ecn::Ect0);
        let mut out = Vec::new();
        headers(&p, 1, 2, &mut out);
        let tcp = &out[20..];
        assert_eq!(&tcp[20..24], &[1, 1, 8, 10]);
        assert_eq!(&tcp[32..36], &[1, 1, 5, 18]);
        assert_eq!(&tcp[36..40], &3000u32.to_be_bytes());
        let zeros = vec![0u8; 1000];
        let pseudo = pseudo_header_sum(1, 2, PROTO_TCP, p.size - 20);
        assert!(verifies(&[tcp, &zeros], pseudo));
    }

    #[test]
    fn an_echo_request_is_icmp_type_8_with_its_probe_and_sequence() {
        let p = CapturedPacket {
            capture: 0,
            t: SimTime::ZERO,
            src: NodeId(0),
            dst: NodeId(1),
            size: 84,
            dscp: 0,
            ecn: Ecn::NotEct,
            payload: CapturedPayload::Echo { reply: false, probe: 3, seq: 9 },
        };
        let mut out = Vec::new();
        headers(&p, 1, 2, &mut out);
        assert_eq!(out[9], PROTO_ICMP);
        assert_eq!(&out[20..22], &[8, 0]);
        assert_eq!(&out[24..28], &[0, 3, 0, 9]);
        assert!(verifies(&[&out[20..28]], 0));
    }
}
