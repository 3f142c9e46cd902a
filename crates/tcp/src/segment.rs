use crate::seq::SeqNum;

/// The two ECN bits of the IP header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Ecn {
    #[default]
    NotEct,
    Ect1,
    Ect0,
    Ce,
}

impl Ecn {
    pub fn is_ect(self) -> bool {
        self != Ecn::NotEct
    }
}

/// TCP header flags, as bits of the flags byte.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TcpFlags(pub u8);

impl TcpFlags {
    pub const FIN: u8 = 0x01;
    pub const SYN: u8 = 0x02;
    pub const RST: u8 = 0x04;
    pub const PSH: u8 = 0x08;
    pub const ACK: u8 = 0x10;
    pub const URG: u8 = 0x20;
    pub const ECE: u8 = 0x40;
    pub const CWR: u8 = 0x80;
    #[inline]
    pub fn has(self, f: u8) -> bool {
        self.0 & f != 0
    }
}

/// TCP options carried by a segment. At most 4 SACK blocks (3 alongside timestamps).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpOptions {
    pub mss: Option<u16>,
    pub wscale: Option<u8>,
    pub sack_permitted: bool,
    /// (TSval, TSecr).
    pub timestamp: Option<(u32, u32)>,
    pub sack: [(u32, u32); 4],
    pub sack_len: u8,
}

impl TcpOptions {
    pub fn sack_blocks(&self) -> &[(u32, u32)] {
        &self.sack[..self.sack_len as usize]
    }
    /// The SACK blocks as sequence numbers (start, end).
    #[inline]
    pub fn sack_seqs(&self) -> impl Iterator<Item = (SeqNum, SeqNum)> + '_ {
        self.sack_blocks().iter().map(|&(s, e)| (SeqNum(s), SeqNum(e)))
    }
    /// Bytes the options take on the wire, padded to 4 as Linux lays them out.
    pub fn wire_len(&self) -> u32 {
        let mut n = 0;
        if self.mss.is_some() {
            n += 4;
        }
        if self.timestamp.is_some() {
            n += 12; // NOP NOP TS, or SACK_PERM TS on a SYN
        } else if self.sack_permitted {
            n += 4;
        }
        if self.wscale.is_some() {
            n += 4;
        }
        if self.sack_len > 0 {
            n += 4 + 8 * self.sack_len as u32;
        }
        n
    }
}

/// A segment with every field zero, which `push_segment` copies and fills in (a `static`, not a
/// `const`: a constant is rebuilt on the stack at each use).
pub(crate) static BLANK_SEGMENT: Segment = Segment {
    seq: 0,
    ack: 0,
    len: 0,
    flags: TcpFlags(0),
    win: 0,
    ecn: Ecn::NotEct,
    opts: TcpOptions {
        mss: None,
        wscale: None,
        sack_permitted: false,
        timestamp: None,
        sack: [(0, 0); 4],
        sack_len: 0,
    },
    tstamp_ns: 0,
    skb_more: false,
};

/// A TCP segment as the endpoint sees it: header fields, options and the IP ECN field. There is
/// no payload, only its length: ccsim moves sequence numbers, not bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Segment {
    pub seq: u32,
    pub ack: u32,
    /// Payload length in bytes (SYN and FIN are not counted here).
    pub len: u32,
    pub flags: TcpFlags,
    /// Raw (unscaled) window field.
    pub win: u16,
    pub ecn: Ecn,
    pub opts: TcpOptions,
    /// The skb's earliest departure time (`skb->tstamp` under the EDT model: `tp->tcp_wstamp_ns`
    /// when TCP sent it), in ns; an fq qdisc holds the packet until then, other qdiscs ignore it.
    pub tstamp_ns: u64,
    /// More segments of the same TSO skb follow this one (a qdisc that sees skbs, fq, keeps
    /// them together).
    pub skb_more: bool,
}

impl Segment {
    /// The sequence number (`th->seq`).
    #[inline]
    pub fn seq_num(&self) -> SeqNum {
        SeqNum(self.seq)
    }
    /// The acknowledgment number (`th->ack_seq`).
    #[inline]
    pub fn ack_num(&self) -> SeqNum {
        SeqNum(self.ack)
    }
    /// `end_seq`: seq + len + SYN + FIN.
    pub fn end_seq(&self) -> u32 {
        self.seq
            .wrapping_add(self.len)
            .wrapping_add(self.flags.has(TcpFlags::SYN) as u32)
            .wrapping_add(self.flags.has(TcpFlags::FIN) as u32)
    }
    /// IPv4 (20) + TCP (20) + options, without payload.
    pub fn header_len(&self) -> u32 {
        40 + self.opts.wire_len()
    }
}
