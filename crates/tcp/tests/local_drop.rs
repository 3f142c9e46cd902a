//! A segment dropped by the sending host's own qdisc (`__tcp_transmit_skb` sees NET_XMIT_DROP):
//! TCP enters CWR, the skb's TSQ budget returns, and the transmission does not count. New data
//! stays unsent and goes out again, as new data, at the next ACK.

use ccsim_cc::{CaState, CcKind};
use ccsim_engine::SimTime;
use ccsim_tcp::{Endpoint, QdiscDrop, Segment, TcpConfig, TcpFlags};

mod common;
use common::{sack_sender, PEER_ISS};

/// An established client with `bytes` to send: returns it, the time and its first flight.
fn sender(bytes: u64) -> (Endpoint, SimTime, Vec<Segment>) {
    sack_sender(TcpConfig { cc: CcKind::Cubic, ..TcpConfig::default() }, bytes)
}

fn ack_of(ack: u32) -> Segment {
    Segment { seq: PEER_ISS + 1, ack, flags: TcpFlags(TcpFlags::ACK), win: 65535, ..Segment::default() }
}

#[test]
fn new_data_dropped_at_the_own_nic_stays_unsent_and_goes_out_again() {
    let (mut ep, t, flight) = sender(100_000);
    assert_eq!(flight.len(), 10, "the initial window");
    let (cwnd0, data_out0) = (ep.sock().snd_cwnd, ep.stats().data_segs_out);
    // The NIC takes the first seven and drops the last three; they come back last first, and
    // Linux would only have tried the first of them.
    for (i, seg) in flight.iter().enumerate().skip(7).rev() {
        ep.on_local_drop(t, seg, QdiscDrop::Tail { attempted: i == 7 });
    }
    let s = ep.sock();
    assert_eq!(s.snd_nxt, flight[7].seq, "snd_nxt back at the first dropped segment");
    assert_eq!(s.packets_out, 7);
    assert_eq!(s.ca_state, CaState::Cwr, "tcp_enter_cwr on NET_XMIT_DROP");
    assert!(s.snd_ssthresh < cwnd0);
    let st = ep.stats();
    assert_eq!((st.local_drops, st.cwr_events), (1, 1));
    assert_eq!(st.data_segs_out, data_out0 - 2, "the untried two are not counted");
    assert_eq!(st.total_retrans, 0);
    // The next ACK sends the dropped data again as new data, from where it stopped.
    let mut out = Vec::new();
    ep.on_segment(t + SimTime::from_us(200), &ack_of(flight[2].seq), &mut out);
    let data: Vec<&Segment> = out.iter().filter(|s| s.len > 0).collect();
    assert!(!data.is_empty(), "the ACK opens the window: {out:?}");
    assert_eq!(data[0].seq, flight[7].seq);
    assert_eq!(ep.stats().total_retrans, 0, "not a retransmission");
}

#[test]
fn a_whole_flight_dropped_leaves_a_probe_timer_not_an_rto() {
    let (mut ep, t, flight) = sender(100_000);
    for (i, seg) in flight.iter().enumerate().rev() {
        ep.on_local_drop(t, seg, QdiscDrop::Tail { attempted: i == 0 });
    }
    assert_eq!(ep.sock().packets_out, 0);
    assert_eq!(ep.sock().snd_nxt, flight[0].seq);
    // tcp_check_probe_timer: nothing in flight, data unsent; the probe goes at max(RTO, 200 ms)
    // and sends new data.
    let at = ep.next_deadline().expect("a timer for the unsent data");
    let rto = SimTime::from_us(ep.tcp_info().rto_us);
    assert!(rto >= SimTime::from_ms(200));
    assert_eq!(at, t + rto, "tcp_probe0_base: max(RTO, rto_min)");
    let mut out = Vec::new();
    ep.on_timer(at, &mut out);
    assert_eq!(out.first().map(|s| (s.seq, s.len > 0)), Some((flight[0].seq, true)));
    assert_eq!(ep.stats().total_retrans, 0);
}

#[test]
fn a_full_qdisc_refuses_the_skb_before_it_is_sent() {
    // fq told the socket it takes three more skbs: the fourth attempt gets NET_XMIT_DROP and
    // tcp_write_xmit stops there, with nothing of it sent.
    let (mut ep, t, flight) = sender(0);
    assert!(flight.is_empty());
    ep.set_qdisc_room(Some(3));
    let mut out = Vec::new();
    ep.write(t, 100_000, &mut out);
    assert_eq!(out.len(), 3, "{out:?}");
    let st = ep.stats();
    assert_eq!((st.local_drops, st.cwr_events, st.data_segs_out), (1, 1, 3));
    assert_eq!(ep.sock().packets_out, 3);
    assert_eq!(ep.sock().snd_nxt, out[2].seq + out[2].len);
    assert_eq!(ep.sock().ca_state, CaState::Cwr);
    // Room again (fq sent some): the next ACK goes on from there.
    ep.set_qdisc_room(None);
    out.clear();
    let next = ep.sock().snd_nxt;
    ep.on_segment(t + SimTime::from_us(200), &ack_of(next), &mut out);
    assert_eq!(out.iter().find(|s| s.len > 0).map(|s| s.seq), Some(next));
}
