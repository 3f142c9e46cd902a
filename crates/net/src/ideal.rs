//! The ideal flow completion time: the flow alone in the network, its sender unlimited by any
//! window. The slowdown `fct / ideal` of every flow is then at least 1, since nothing a real
//! run adds (windows, queueing, host noise, delayed ACKs, losses) makes a flow faster.
//!
//! With the flow's path as hops of (rate, propagation delay), serialisation `tx(b)` of a
//! packet of `b` wire bytes (link-layer overhead included, rounded up to the nanosecond as
//! the ports round it):
//!
//! ```text
//! ideal = handshake                                 (if the flow opened its connection)
//!       + last data byte's arrival                  (store and forward of every data packet)
//!       + its ACK's return                          (sum over the return path of d + tx(ack))
//! handshake = sum over the path of (d + tx(syn)) + sum over the return path of (d + tx(synack))
//! ```
//!
//! The data's `n = ceil(size / mss)` packets, `n - 1` of `mss + header` bytes and the last of
//! the rest, all ready at the start: packet k ends its transmission at hop i at
//! `sum_{j<=i} tx_j(P) + sum_{j<i} d_j + (k-1) max_{j<=i} tx_j(P)` (identical packets through
//! FIFO hops), and the last packet leaves each hop once it has arrived and the packet before
//! it is gone. For one packet on one hop this is `tx + d`; for many packets it approaches
//! `size / bottleneck rate` plus the path's one-way delay — the usual "base RTT + size over the
//! bottleneck" with the headers counted.

use ccsim_engine::SimTime;

/// One hop of a path: the port's link rate and its propagation delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hop {
    pub rate_bps: u64,
    pub delay: SimTime,
}

/// Wire sizes of a flow's packets (headers and link-layer overhead included), bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WireSizes {
    /// Payload per full data packet (the sender's MSS).
    pub mss: u32,
    /// IP + TCP header of a data segment or an ACK, options included.
    pub header: u32,
    /// The SYN's and the SYN-ACK's headers.
    pub syn: u32,
    pub synack: u32,
    /// Link-layer overhead every packet adds on every link.
    pub l2: u32,
}

fn tx(bytes: u64, h: &Hop) -> SimTime {
    SimTime::tx_time(bytes, h.rate_bps)
}

/// One packet of `bytes` across `hops`, store and forward.
fn one_way(hops: &[Hop], bytes: u64) -> SimTime {
    hops.iter().fold(SimTime::ZERO, |t, h| t + tx(bytes, h) + h.delay)
}

/// When the last of `size` bytes, sent back to back from time 0, has crossed `fwd`.
fn data_arrival(fwd: &[Hop], size: u64, w: &WireSizes) -> SimTime {
    let mss = w.mss.max(1) as u64;
    let n = size.div_ceil(mss).max(1);
    let full = mss + (w.header + w.l2) as u64;
    let last = size - (n - 1) * mss + (w.header + w.l2) as u64;
    // `prev_end[i]`: when packet n-1 ends its transmission at hop i (no packet before: 0).
    let mut sum_tx = SimTime::ZERO;
    let mut sum_d = SimTime::ZERO;
    let mut max_tx = SimTime::ZERO;
    let mut t = SimTime::ZERO; // the last packet's arrival at the current hop
    for h in fwd {
        let txp = tx(full, h);
        sum_tx += txp;
        max_tx = max_tx.max(txp);
        let prev_end = if n > 1 { sum_tx + sum_d + SimTime::from_ns((n - 2) * max_tx.ns()) } else { SimTime::ZERO };
        let end = t.max(prev_end) + tx(last, h);
        sum_d += h.delay;
        t = end + h.delay;
    }
    t
}

/// The ideal completion time of a flow of `size` bytes over `fwd` (its ACKs over `rev`), with
/// the handshake when it opened its connection.
pub fn ideal_fct(fwd: &[Hop], rev: &[Hop], size: u64, w: &WireSizes, handshake: bool) -> SimTime {
    let shake = if handshake {
        one_way(fwd, (w.syn + w.l2) as u64) + one_way(rev, (w.synack + w.l2) as u64)
    } else {
        SimTime::ZERO
    };
    shake + data_arrival(fwd, size, w) + one_way(rev, (w.header + w.l2) as u64)
}

/// The ideal completion time of an exchange: the request's `request` bytes over `fwd`, then the
/// response's `response` bytes over `rev`, complete when the response's last byte arrives (with
/// the handshake when the exchange opened its connection).
pub fn ideal_exchange(
    fwd: &[Hop],
    rev: &[Hop],
    request: u64,
    response: u64,
    w: &WireSizes,
    handshake: bool,
) -> SimTime {
    let shake = if handshake {
        one_way(fwd, (w.syn + w.l2) as u64) + one_way(rev, (w.synack + w.l2) as u64)
    } else {
        SimTime::ZERO
    };
    shake + data_arrival(fwd, request, w) + data_arrival(rev, response, w)
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: WireSizes = WireSizes { mss: 1000, header: 50, syn: 60, synack: 60, l2: 0 };

    fn hop(gbps: u64, us: u64) -> Hop {
        Hop { rate_bps: gbps * 1_000_000_000, delay: SimTime::from_us(us) }
    }

    #[test]
    fn one_packet_over_one_hop_is_its_serialisation_and_delay_each_way() {
        // 1000 + 50 bytes at 1 Gb/s: 8 400 ns; the ACK's 50 bytes: 400 ns; 10 us each way.
        let h = [hop(1, 10)];
        assert_eq!(ideal_fct(&h, &h, 1000, &W, false), SimTime::from_ns(8_400 + 10_000 + 400 + 10_000));
        // The handshake: 60 bytes each way, 480 ns, plus the delays.
        assert_eq!(
            ideal_fct(&h, &h, 1000, &W, true),
            SimTime::from_ns(2 * (480 + 10_000) + 8_400 + 10_000 + 400 + 10_000)
        );
    }

    #[test]
    fn many_packets_pipeline_behind_the_bottleneck() {
        // 10 Gb/s, 1 Gb/s, 10 Gb/s; no delays; 5 full packets of 1050 wire bytes.
        let fwd = [hop(10, 0), hop(1, 0), hop(10, 0)];
        let d = data_arrival(&fwd, 5000, &W);
        // First packet: 840 + 8400 + 840; each later one 8400 behind at the bottleneck.
        assert_eq!(d, SimTime::from_ns(840 + 8_400 + 840 + 4 * 8_400));
        // A short last packet: 4 full and 100 bytes (150 on the wire: 120 ns at 1 Gb/s... 1200).
        let d = data_arrival(&fwd, 4100, &W);
        // Packet 4 leaves the bottleneck at 840 + 4 * 8400; the last starts there and takes
        // 1200 ns, then 120 ns at the last hop (which packet 4 has left by then).
        assert_eq!(d, SimTime::from_ns(840 + 4 * 8_400 + 1_200 + 120));
    }

    #[test]
    fn an_exchange_is_the_request_one_way_then_the_response_back() {
        let h = [hop(1, 10)];
        // 1000 bytes each way: 8 400 + 10 000 ns twice, no ACK to wait for.
        assert_eq!(ideal_exchange(&h, &h, 1000, 1000, &W, false), SimTime::from_ns(2 * 18_400));
    }

    #[test]
    fn a_bound_no_slower_than_any_packet_alone() {
        let fwd = [hop(10, 1), hop(40, 2), hop(10, 1)];
        for size in [1, 999, 1000, 1001, 14_480, 1_000_000] {
            let d = data_arrival(&fwd, size, &W);
            let bytes = size.div_ceil(1000) * 50 + size;
            // At least the whole flow through the slowest hop, plus the path's delays.
            let floor = SimTime::tx_time(bytes, 10_000_000_000) + SimTime::from_us(4);
            assert!(d >= floor, "{size}: {d:?} < {floor:?}");
        }
    }
}
