//! The host stack between a NIC and its sockets: TCP Small Queues budget returned at TX
//! completion, the fq qdisc's room, the receive path (interrupt coalescing, GRO), delivery to
//! endpoints and ping replies, and segments dropped by the host's own qdisc.

use crate::conn::Side;
use crate::core::Core;
use crate::event_loop::Ev;
use crate::flows::PingReplyRecord;
use crate::gro::{gro_poll, GroIn, GroOut, NAPI_POLL_WEIGHT};
use crate::packet::{Packet, Payload};
use ccsim_engine::{EventQueue, PoolId, SimTime};
use ccsim_tcp::{QdiscDrop, Segment, TcpFlags};

/// A lazy host NIC's transmission that will return TCP Small Queues budget to its socket when
/// it ends (`tcp_wfree`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct TsqEntry {
    pub(crate) end: SimTime,
    pub(crate) conn: u32,
    pub(crate) side: Side,
    pub(crate) bytes: u64,
}

/// A data segment its own host's qdisc dropped, waiting to go back to its socket.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LocalDrop {
    pub(crate) conn: u32,
    pub(crate) side: Side,
    pub(crate) seg: Segment,
    pub(crate) cause: LocalDropCause,
}

/// What `__tcp_transmit_skb` got back from the qdisc.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LocalDropCause {
    /// NET_XMIT_DROP: the qdisc was full.
    Tail,
    /// NET_XMIT_CN: RED dropped it (counted as sent).
    Congestion,
}

impl<Q: EventQueue<Ev>> Core<Q> {
    pub(crate) fn send_from_host(&mut self, pkt: Packet, now: SimTime) {
        let host = pkt.src;
        let id = self.pool.alloc(pkt);
        self.forward(host, id, now);
    }

    /// Lazy host NIC: return the TSQ budget of every transmission that ended by `now` to its
    /// socket (`tcp_wfree`); a socket that TSQ had stopped sends again (`tcp_tsq_handler`).
    pub(crate) fn settle_tsq(&mut self, pi: usize, now: SimTime) {
        while let Some(TsqEntry { conn: ci, side, bytes, .. }) = self.ports[pi].pop_tsq_due(now) {
            let c = &mut self.conns[ci as usize];
            let ep = c.ep_mut(side);
            let throttled = ep.tsq_throttled();
            ep.tsq_release(now, bytes, &mut self.out);
            if throttled {
                self.after_endpoint(ci as usize, side, now);
            }
        }
    }

    /// Keep a `TsqWake` pending at the next transmission end of a lazy host NIC while a socket
    /// of the host is throttled.
    pub(crate) fn ensure_tsq_wake(&mut self, pi: usize) {
        let port = &mut self.ports[pi];
        if let Some(&TsqEntry { end, .. }) = port.tsq.front() {
            if port.wake.is_none_or(|w| end < w) {
                port.wake = Some(end);
                self.q.schedule(end, Ev::TsqWake(pi as u32));
            }
        }
    }

    pub(crate) fn tsq_wake(&mut self, pi: usize, now: SimTime) {
        if self.ports[pi].wake != Some(now) {
            return; // superseded
        }
        self.ports[pi].wake = None;
        self.settle_tsq(pi, now);
        let any_throttled = self.ports[pi].tsq.iter().any(|&TsqEntry { conn: ci, side, .. }| {
            let c = &self.conns[ci as usize];
            c.ep(side).tsq_throttled()
        });
        if any_throttled {
            self.ensure_tsq_wake(pi);
        }
    }

    /// The NIC port of a flow's end, when it is a lazy host NIC.
    pub(crate) fn lazy_nic(&self, ci: usize, side: Side) -> Option<usize> {
        let pi = self.conns[ci].lazy_nic[side.index()];
        (pi != u32::MAX).then_some(pi as usize)
    }

    /// Before a socket runs: its host NIC's finished transmissions return their TSQ budget, and
    /// a socket behind fq learns how many skbs fq would take from it.
    #[inline]
    pub(crate) fn settle_nic(&mut self, ci: usize, side: Side, now: SimTime) {
        if let Some(pi) = self.lazy_nic(ci, side) {
            if self.ports[pi].tsq_due <= now {
                self.settle_tsq(pi, now);
            }
        }
        self.set_qdisc_room(ci, side);
    }

    #[inline]
    pub(crate) fn set_qdisc_room(&mut self, ci: usize, side: Side) {
        if !self.fq_nic.is_empty() {
            self.set_qdisc_room_fq(ci, side);
        }
    }

    #[inline(never)]
    pub(crate) fn set_qdisc_room_fq(&mut self, ci: usize, side: Side) {
        let c = &self.conns[ci];
        let (host, _) = c.hosts(side);
        let pi = self.fq_nic[host.0 as usize];
        if pi == u32::MAX {
            return;
        }
        let room =
            self.ports[pi as usize].queue.fq.as_ref().map(|fq| fq.room_for_socket(ci as u32, side.sends_to_server()));
        let c = &mut self.conns[ci];
        let ep = c.ep_mut(side);
        ep.set_qdisc_room(room);
    }

    /// The NIC's receive interrupt (`napi_schedule` after rx-usecs): polls of up to 64 packets
    /// (`NAPI_POLL_WEIGHT`), each through GRO if on, whose end flushes what GRO holds.
    pub(crate) fn rx_flush(&mut self, node: usize, now: SimTime) {
        let batch = std::mem::take(&mut self.rx_batch[node]);
        for poll in batch.chunks(NAPI_POLL_WEIGHT) {
            if !self.cfg.gro {
                for &id in poll {
                    self.deliver(id, now);
                }
                continue;
            }
            let pool = &self.pool;
            gro_poll(&mut self.gro, poll.len(), |i| {
                let id = poll[i];
                let p = pool.get(id);
                match &p.payload {
                    Payload::Tcp { conn, to_server, seg } => {
                        GroIn { id, tcp: Some(((*conn, *to_server), seg)), ecn: p.ecn }
                    }
                    _ => GroIn { id, tcp: None, ecn: p.ecn },
                }
            });
            // Hand the skbs up with the buffers taken out of `self` (delivering borrows all of
            // it), then put them back for the next poll.
            let gro = std::mem::take(&mut self.gro);
            for skb in &gro.done {
                let ids = gro.ids_of(skb);
                if ids.len() == 1 {
                    self.deliver(ids[0], now);
                } else {
                    self.deliver_gro(skb, ids, now);
                }
            }
            self.gro = gro;
        }
        // Keep the buffer: nothing reaches this host while its batch is handed up (every
        // arrival is an event of its own).
        let mut batch = batch;
        batch.clear();
        debug_assert!(self.rx_batch[node].is_empty());
        self.rx_batch[node] = batch;
    }

    /// Hand a GRO skb of several segments to its endpoint as one segment.
    pub(crate) fn deliver_gro(&mut self, skb: &GroOut, ids: &[PoolId], now: SimTime) {
        let first = self.pool.get(ids[0]);
        let Payload::Tcp { conn, to_server, seg } = first.payload else { unreachable!("GRO merges TCP only") };
        let (ci, side) = (conn as usize, Side::receiver(to_server));
        let mut seg = seg;
        seg.ecn = first.ecn;
        seg.len = skb.len;
        seg.flags = TcpFlags(seg.flags.0 | skb.extra_flags);
        let n = ids.len() as u64;
        self.stats.packets_delivered += n;
        self.stats.data_packets_delivered += n;
        for &id in ids {
            self.pool.free(id);
        }
        self.conns[ci].in_flight -= ids.len() as u32;
        self.settle_nic(ci, side, now);
        let c = &mut self.conns[ci];
        let ep = c.ep_mut(side);
        ep.on_segment_gro(now, &seg, skb.gso_size, ids.len() as u32, &mut self.out);
        self.after_endpoint(ci, side, now);
    }

    pub(crate) fn deliver(&mut self, id: PoolId, now: SimTime) {
        self.stats.packets_delivered += 1;
        let pkt = self.pool.get_mut(id);
        match &mut pkt.payload {
            Payload::Tcp { conn, to_server, seg } => {
                let (ci, side) = (*conn as usize, Side::receiver(*to_server));
                if seg.len > 0 {
                    self.stats.data_packets_delivered += 1;
                }
                seg.ecn = pkt.ecn;
                self.settle_nic(ci, side, now);
                // The segment is read in place (no copy of the packet).
                let Payload::Tcp { seg, .. } = &self.pool.get(id).payload else { unreachable!() };
                let c = &mut self.conns[ci];
                let ep = c.ep_mut(side);
                ep.on_segment(now, seg, &mut self.out);
                c.in_flight -= 1;
                self.pool.free(id);
                self.after_endpoint(ci, side, now);
            }
            Payload::PingRequest { probe, seq, sent } => {
                let (probe, seq, sent) = (*probe, *seq, *sent);
                let pkt = *self.pool.get(id);
                self.pool.free(id);
                let reply = Packet {
                    src: pkt.dst,
                    dst: pkt.src,
                    hop: 0,
                    payload: Payload::PingReply { probe, seq, sent },
                    ..pkt
                };
                let reply = Packet { ecn: self.pings[probe as usize].0.ecn, ..reply };
                self.send_from_host(reply, now);
            }
            Payload::PingReply { probe, seq, sent } => {
                let (probe, seq, sent) = (*probe, *seq, *sent);
                self.pool.free(id);
                let rec = &mut self.pings[probe as usize].1;
                rec.rtts.push((now - sent).secs_f64());
                rec.replies.push(PingReplyRecord { seq, sent, rtt: now - sent });
            }
        }
    }

    /// Hand the data segments a host's qdisc dropped back to their sockets (after the sending
    /// socket's segments are all queued, so an skb reaches its qdisc whole).
    pub(crate) fn return_local_drops(&mut self, now: SimTime) {
        if self.local_drops.is_empty() {
            return;
        }
        // Last first: a socket undoes what it sent from the tail. Only a socket's first drop was
        // really attempted (Linux stops there). RED's drops (NET_XMIT_CN) count as sent, and
        // sending goes on after them.
        let drops = std::mem::take(&mut self.local_drops);
        for (i, &LocalDrop { conn: ci, side, seg, cause }) in drops.iter().enumerate().rev() {
            let c = &mut self.conns[ci as usize];
            let ep = c.ep_mut(side);
            let how = match cause {
                LocalDropCause::Congestion => QdiscDrop::Congestion,
                LocalDropCause::Tail => {
                    let earlier = drops[..i]
                        .iter()
                        .any(|d| (d.conn, d.side) == (ci, side) && d.cause == LocalDropCause::Tail && d.seg.len > 0);
                    QdiscDrop::Tail { attempted: !earlier }
                }
            };
            ep.on_local_drop(now, &seg, how);
            self.after_endpoint(ci as usize, side, now);
        }
    }

    /// A port dropped packet `id` on arrival: a segment at its sender's own NIC goes back to its
    /// socket (see `Endpoint::on_local_drop`).
    pub(crate) fn dropped_on_enqueue(&mut self, pi: usize, id: PoolId) {
        let port = &self.ports[pi];
        if port.from_host {
            if let Payload::Tcp { conn, to_server, seg } = self.pool.get(id).payload {
                let cause = if port.queue.fq.is_none() && port.queue.congestion_drop {
                    LocalDropCause::Congestion
                } else {
                    LocalDropCause::Tail
                };
                self.local_drops.push(LocalDrop { conn, side: Side::sender(to_server), seg, cause });
            }
        }
        self.drop_packet(id);
    }
}
