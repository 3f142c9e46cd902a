//! Ports and links: a port's queue, the link it feeds, and how packets cross them. Lazy ports
//! compute each transmission when the packet is queued; express ports take a packet when it
//! leaves the one link that feeds them (see docs/architecture.md).

use crate::conn::{Conn, Side};
use crate::core::Core;
use crate::event_loop::Ev;
use crate::host::TsqEntry;
use crate::packet::{LinkNext, Payload};
use crate::queue::{Dequeued, EnqueueResult, PortQueue, QueueStats};
use crate::route::{next_hop, route_next};
use crate::switch::Gate;
use crate::topology::{NodeId, NodeKind, PortId};
use ccsim_engine::{ByteTime, EventQueue, PoolId, Rng, SimTime};
use std::collections::VecDeque;

/// The far end of a port's link and the last packet put on it: all an arrival reads of the
/// port, kept in a dense array beside the ports (12 bytes a link, so it stays in the cache)
/// rather than in the port's lines, which queueing reads.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LinkEnd {
    /// The last packet put on the link (`LinkNext::NONE.id` when the link is empty); the packets
    /// on it are a list through their `link_next` fields, the head's arrival the port's pending
    /// `Arrive` event.
    pub(crate) tail: PoolId,
    pub(crate) to: NodeId,
    /// The link leads to a switch (which forwards what is not for it), not a host.
    pub(crate) to_switch: bool,
}

/// A port: a queue and the link it feeds. Laid out by use (`repr(C)`, cache-line aligned):
/// line 0 holds all a lazy port reads and counts for a packet it queues (its kind, the
/// departure times, the link's delay and byte time, the time busy, the packets and bytes
/// admitted), line 1 what a host's NIC adds (its timing noise, when its next TSQ budget
/// returns) and what ports run with transmission events count, line 2 the ring of waiting
/// sizes (read only while two or more packets wait) and the queue's flags (read only on a
/// drop), lines 3 and 4 the queue's first class (its count, limit and AQM; its counters,
/// which a lazy port writes only on a mark or a drop); the rest after. A fat tree's thousand
/// ports do not stay in the first-level cache, and each line touched is a miss; these have
/// their addresses known at once, none behind a pointer. What an arrival reads is in `LinkEnd`.
#[repr(C, align(64))]
pub(crate) struct Port {
    pub(crate) head_size: u32,
    /// Lazy port: how many entries `sizes` holds, kept here so that a port with none waiting
    /// behind its head does not read the line `sizes` is in.
    pub(crate) behind: u32,
    /// Lazy port (`lazy`: one class with arrival-time AQM): each packet's transmission
    /// start and end are computed when it is queued, so the port needs no `TxDone` events;
    /// (`head_start`, `head_size`) are the start and size of the first packet still waiting,
    /// `sizes` the sizes of those behind it, `busy_until` the end of the last transmission.
    /// The first waits in the port itself (`head_start` = `SimTime::MAX` when none): a port that
    /// rarely holds more than one packet, as most of a fat tree's do, then never reads its ring.
    /// A packet queued behind another starts when the one before it ends, so the ring needs
    /// only the sizes (four bytes a packet: a line holds sixteen). A port run with transmission
    /// events keeps `busy_until` too: the end of its current transmission.
    pub(crate) head_start: SimTime,
    pub(crate) busy_until: SimTime,
    pub(crate) delay: SimTime,
    /// Time spent transmitting.
    pub(crate) busy_ns: u64,
    /// Lazy port: the packets its class admitted and their bytes (`Packet::size`), so far. Every
    /// one is transmitted; the class's own counters of them follow (`Port::class_stats`).
    pub(crate) admitted: u64,
    pub(crate) admitted_bytes: u64,
    /// The link's byte time in whole picoseconds (`ByteTime::whole_ps`), 0 when it is not one
    /// (`byte_time` then times a packet).
    pub(crate) byte_ps: u32,
    /// The port is a host's NIC: transmissions complete TCP Small Queues accounting.
    pub(crate) from_host: bool,
    /// Lazy port (the queue `supports_lazy`): packets are counted, not kept, and each one's
    /// transmission is computed when it is queued.
    pub(crate) lazy: bool,
    /// The link drops packets at random (`loss` > 0).
    pub(crate) lossy: bool,
    /// The link's rate, as the time of a byte on it.
    pub(crate) byte_time: ByteTime,
    /// Host NIC: the bound of its timing noise in ns (`HostJitter`); 0 at switches (read only
    /// at a host, `from_host`).
    pub(crate) jitter_ns: u64,
    /// With timing noise: arrival time of the last packet put on the link (the link stays FIFO).
    pub(crate) last_at: SimTime,
    /// Lazy host NIC: when the first of `tsq` ends (`SimTime::MAX`: none), so that a segment
    /// delivered to the host checks for budget to return without reading the ring.
    pub(crate) tsq_due: SimTime,
    /// A port run with transmission events: packets and bytes whose transmission began (headers
    /// and link-layer overhead included). A lazy port's follow from `admitted` and what waits
    /// (`Port::tx_packets`, `tx_bytes`).
    pub(crate) tx_packets: u64,
    pub(crate) tx_bytes: u64,
    pub(crate) link_drops: u64,
    pub(crate) sizes: VecDeque<u32>,
    pub(crate) queue: PortQueue,
    /// Where the link leads (as `LinkEnd::to`, for what is not an arrival).
    pub(crate) to: NodeId,
    /// The probability that the link drops a packet (read only when `lossy`).
    pub(crate) loss: f64,
    /// Lazy host NIC: the transmissions that will return TCP Small Queues budget, in order
    /// (`push_tsq`, `pop_tsq_due`); `wake` is the pending `TsqWake`, scheduled only while a
    /// socket of this host is throttled.
    pub(crate) tsq: VecDeque<TsqEntry>,
    pub(crate) wake: Option<SimTime>,
    pub(crate) tx: Option<PoolId>,
    pub(crate) rng: Rng,
    /// fq ports: the pending watchdog.
    pub(crate) watchdog: Option<SimTime>,
}

/// What a lazy port has sent: packets whose transmission began, and their bytes.
struct Sent {
    packets: u64,
    bytes: u64,
}

impl Port {
    /// Time to serialise `bytes` on the link.
    #[inline(always)]
    fn tx_time(&self, bytes: u32) -> SimTime {
        if self.byte_ps != 0 {
            ByteTime::time_in_ps(self.byte_ps, bytes)
        } else {
            self.byte_time.time(bytes)
        }
    }

    /// Lazy port: the packets, and their bytes (`Packet::size`), whose transmission has begun.
    /// A lazy port books a packet's transmission when it queues it; those still waiting
    /// (settled to the time the run stands at) have not begun, as at a port run with
    /// transmission events. Each admitted packet leaves once, by `retire_head`, so these are
    /// exactly what the class would count as dequeued.
    fn lazy_sent(&self) -> Sent {
        let c = &self.queue.classes.first;
        Sent { packets: self.admitted - c.packets, bytes: self.admitted_bytes - c.bytes }
    }

    /// Packets whose transmission has begun.
    pub(crate) fn tx_packets(&self) -> u64 {
        if self.lazy {
            self.lazy_sent().packets
        } else {
            self.tx_packets
        }
    }

    /// Bytes of the packets whose transmission has begun (`tx_packets`), each with
    /// `l2_overhead` bytes of link-layer framing.
    pub(crate) fn tx_bytes(&self, l2_overhead: u32) -> u64 {
        if self.lazy {
            let sent = self.lazy_sent();
            sent.bytes + l2_overhead as u64 * sent.packets
        } else {
            self.tx_bytes
        }
    }

    /// Each class's name and counters. A lazy port's class counts only its marks and drops;
    /// the packets it took and those that left follow from what the port admitted and what
    /// still waits (`lazy_sent`).
    pub(crate) fn class_stats(&self) -> Vec<(String, QueueStats)> {
        let mut all = self.queue.class_stats();
        if self.lazy {
            let sent = self.lazy_sent();
            let stats = &mut all[0].1;
            stats.enqueued = self.admitted;
            stats.dequeued = sent.packets;
            stats.bytes_dequeued = sent.bytes;
        }
        all
    }

    /// Lazy host NIC: a transmission ending at `e.end` (no earlier than those before it) will
    /// return TSQ budget.
    #[inline(always)]
    fn push_tsq(&mut self, e: TsqEntry) {
        if self.tsq_due == SimTime::MAX {
            self.tsq_due = e.end;
        }
        self.tsq.push_back(e);
    }

    /// Lazy host NIC: the first TSQ return, if its transmission ended by `now`.
    #[inline(always)]
    pub(crate) fn pop_tsq_due(&mut self, now: SimTime) -> Option<TsqEntry> {
        if self.tsq_due > now {
            return None;
        }
        let e = self.tsq.pop_front();
        self.tsq_due = self.tsq.front().map_or(SimTime::MAX, |t| t.end);
        e
    }

    /// Lazy host NIC: forget the TSQ returns of connection `conn` (released).
    pub(crate) fn drop_tsq_of(&mut self, conn: u32) {
        self.tsq.retain(|e| e.conn != conn);
        self.tsq_due = self.tsq.front().map_or(SimTime::MAX, |t| t.end);
    }

    /// Lazy port: the head began its transmission; the next packet waiting becomes the head,
    /// starting when the head's transmission ends (the link-layer overhead `l2_overhead` on top
    /// of each packet's size, as when it was queued).
    #[inline(always)]
    fn next_head(&mut self, l2_overhead: u32) {
        debug_assert_eq!(self.behind as usize, self.sizes.len());
        (self.head_start, self.head_size) = if self.behind == 0 {
            (SimTime::MAX, 0)
        } else {
            self.behind -= 1;
            let size = self.sizes.pop_front().expect("`behind` counts `sizes`");
            (self.head_start + self.tx_time(self.head_size + l2_overhead), size)
        };
    }
}

impl<Q: EventQueue<Ev>> Core<Q> {
    /// Put packet `id` (its `link_next` already cleared by the caller, which holds it) on port
    /// `pi`'s link, to reach its far end at `at` (no earlier than the packet before it): behind
    /// the link's tail, or, on an empty link, as its head with the arrival scheduled.
    #[inline(always)]
    fn put_on_link(&mut self, pi: usize, id: PoolId, at: SimTime) {
        let tail = std::mem::replace(&mut self.links[pi].tail, id);
        if tail == LinkNext::NONE.id {
            self.q.schedule(at, Ev::Arrive(pi as u32, id));
        } else {
            self.pool.get_mut(tail).link_next = LinkNext { id, at };
        }
    }

    /// Pick the output port at `node` for packet `id` and queue it there: the next hop of its
    /// source route, or the route table's choice.
    pub(crate) fn forward(&mut self, node: NodeId, id: PoolId, now: SimTime) {
        let p = self.pool.get_mut(id);
        if let Some(port) = route_next(&self.paths, p) {
            p.hop += 1;
            return self.enqueue(port, id, now);
        }
        let (dst, hash) = (p.dst, p.flow_hash);
        match next_hop(&self.routes, node, dst, hash) {
            Some(port) => self.enqueue(port.0 as usize, id, now),
            None => self.drop_packet(id),
        }
    }

    pub(crate) fn enqueue(&mut self, pi: usize, id: PoolId, now: SimTime) {
        if self.ports[pi].lazy {
            // A network without shared buffers runs a copy of the lazy path without their checks.
            return if self.port_buffer.is_empty() {
                self.enqueue_lazy::<false>(pi, id, now)
            } else {
                self.enqueue_lazy::<true>(pi, id, now)
            };
        }
        let mut gate = Gate::NoBuffer;
        if !self.port_buffer.is_empty() {
            gate = self.buffer_gate(pi, id, now);
            if gate == Gate::Refused {
                return self.dropped_on_enqueue(pi, id);
            }
        }
        let port = &mut self.ports[pi];
        let pkt = self.pool.get_mut(id);
        // fq at a host takes a TSO skb whole (TCP hands its segments over back to back, the last
        // without `skb_more`): the wire starts once the skb is in. A switch sees single packets.
        let mut skb_open = false;
        let queued = match &mut port.queue.fq {
            Some(fq) => {
                skb_open = port.from_host && matches!(pkt.payload, Payload::Tcp { seg, .. } if seg.skb_more);
                fq.enqueue(id, pkt, now, port.from_host)
            }
            None => port.queue.enqueue(id, pkt, now, port.byte_time.bps(), &mut port.rng) == EnqueueResult::Queued,
        };
        if !queued {
            return self.dropped_on_enqueue(pi, id);
        }
        if let Gate::Admitted { b, q } = gate {
            let size = self.pool.get(id).size;
            self.buffers[b as usize].buf.add(q as usize, size);
        }
        let port = &mut self.ports[pi];
        if port.tx.is_none() && !skb_open {
            self.start_tx(pi, now);
        }
    }

    /// Lazy ports: retire the queued packets whose transmission has begun by `now`.
    #[inline(always)]
    pub(crate) fn settle(&mut self, pi: usize, now: SimTime) {
        if self.ports[pi].head_start > now {
            return; // nothing began since (the usual case)
        }
        if !self.port_buffer.is_empty() && self.port_buffer[pi].buffer != u32::MAX {
            return self.settle_shared(pi, now);
        }
        let l2_overhead = self.cfg.l2_overhead;
        let port = &mut self.ports[pi];
        while port.head_start <= now {
            port.queue.retire_head(port.head_start, port.head_size);
            port.next_head(l2_overhead);
        }
    }

    /// `settle` for a port whose queue is in a shared buffer: departed packets give their cells
    /// back.
    #[inline(never)]
    fn settle_shared(&mut self, pi: usize, now: SimTime) {
        let pb = self.port_buffer[pi];
        let l2_overhead = self.cfg.l2_overhead;
        let port = &mut self.ports[pi];
        let buf = &mut self.buffers[pb.buffer as usize].buf;
        while port.head_start <= now {
            if port.queue.len_packets() > 0 {
                buf.remove(pb.first_queue as usize, port.head_size);
            }
            port.queue.retire_head(port.head_start, port.head_size);
            port.next_head(l2_overhead);
        }
    }

    /// A packet left a queue run with transmission events: its cells go back to the buffer.
    #[inline]
    fn release_dequeued(&mut self, pi: usize, id: PoolId) {
        if !self.port_buffer.is_empty() {
            let p = self.pool.get(id);
            let (dscp, size) = (p.dscp, p.size);
            self.buffer_release(pi, dscp, size);
        }
    }

    /// Queue a packet at a lazy port: decide marking or dropping with the queue as it is at
    /// `now`, then compute when its transmission starts and ends and put it on the link.
    #[inline(always)]
    pub(crate) fn enqueue_lazy<const SHARED_BUFFERS: bool>(&mut self, mut pi: usize, id: PoolId, mut now: SimTime) {
        // A loop, not a call, for the express hop: the function stays inlinable.
        loop {
            self.settle(pi, now);
            let mut gate = Gate::NoBuffer;
            if SHARED_BUFFERS {
                gate = self.buffer_gate(pi, id, now);
                if gate == Gate::Refused {
                    return self.dropped_on_enqueue(pi, id);
                }
            }
            // The port and the packet are borrowed once for the whole booking (each look-up
            // again would test its index again).
            let l2_overhead = self.cfg.l2_overhead;
            let port = &mut self.ports[pi];
            let pkt = self.pool.get_mut(id);
            let rate_bps = || port.byte_time.bps();
            if port.queue.enqueue_counted(pkt, now, rate_bps, &mut port.rng) == EnqueueResult::Dropped {
                return self.dropped_on_enqueue(pi, id);
            }
            let size = pkt.size;
            if SHARED_BUFFERS {
                if let Gate::Admitted { b, q } = gate {
                    self.buffers[b as usize].buf.add(q as usize, size);
                }
            }
            let t = port.tx_time(size + l2_overhead);
            let busy_before = port.busy_until;
            let start = now.max(busy_before);
            let end = start + t;
            port.busy_until = end;
            if port.head_start == SimTime::MAX {
                (port.head_start, port.head_size) = (start, size);
            } else {
                // (It starts when the packet before it ends: `next_head` computes it again.)
                debug_assert_eq!(start, busy_before);
                port.sizes.push_back(size);
                port.behind += 1;
            }
            port.busy_ns += t.ns();
            port.admitted += 1;
            port.admitted_bytes += size as u64;
            if let Some(cap) = self.capture.as_deref_mut() {
                cap.egress(pi, start, pkt, &self.conns, self.q.now());
            }
            // A host's data segment returns its TSQ budget when its transmission ends (at a switch
            // the segment is not read: it sits in another cache line than the header).
            if port.from_host {
                if let Payload::Tcp { conn, to_server, ref seg } = pkt.payload {
                    if seg.len > 0 {
                        let bytes = (seg.len + seg.header_len()) as u64;
                        port.push_tsq(TsqEntry { end, conn, side: Side::sender(to_server), bytes });
                    }
                }
            }
            if port.lossy && port.rng.chance(port.loss) {
                port.link_drops += 1;
                self.drop_packet(id);
                return;
            }
            let mut at = end + port.delay;
            if port.jitter_ns > 0 {
                // Host timing noise (a host's NIC only), drawn per packet; the link stays FIFO.
                at += SimTime::from_ns(port.rng.next_u64() % port.jitter_ns);
                at = at.max(port.last_at);
                port.last_at = at;
            }
            if !self.express.is_empty() && at <= self.horizon && self.links[pi].to != pkt.dst {
                // The next port is fed by this link alone: queue the packet there now, as its
                // arrival would at `at` (see `express_ports`).
                if let Some(next) = route_next(&self.paths, pkt).filter(|&n| self.express[n] == pi as u32) {
                    pkt.hop += 1;
                    pi = next;
                    now = at;
                    continue;
                }
            }
            pkt.link_next = LinkNext::NONE;
            return self.put_on_link(pi, id, at);
        }
    }

    pub(crate) fn start_tx(&mut self, pi: usize, now: SimTime) {
        let port = &mut self.ports[pi];
        if let Some(fq) = &mut port.queue.fq {
            match fq.dequeue(now, &mut self.pool) {
                Some(id) => self.begin_tx(pi, id, now),
                None => {
                    // Every flow with packets waits for its departure time: arm the watchdog.
                    if let Some(t) = fq.next_wakeup() {
                        if port.watchdog.is_none_or(|w| t < w || w < now) {
                            port.watchdog = Some(t);
                            self.q.schedule(t, Ev::Watchdog(pi as u32));
                        }
                    }
                }
            }
            return;
        }
        while let Some(d) = self.ports[pi].queue.dequeue(now, &mut self.pool) {
            match d {
                Dequeued::Dropped(id) => {
                    self.release_dequeued(pi, id);
                    self.drop_packet(id)
                }
                Dequeued::Send(id) => {
                    self.release_dequeued(pi, id);
                    return self.begin_tx(pi, id, now);
                }
            }
        }
    }

    /// Put packet `id` on port `pi`'s wire.
    pub(crate) fn begin_tx(&mut self, pi: usize, id: PoolId, now: SimTime) {
        let port = &mut self.ports[pi];
        let size = self.pool.get(id).size + self.cfg.l2_overhead;
        let t = port.tx_time(size);
        port.tx = Some(id);
        port.busy_until = now + t;
        port.busy_ns += t.ns();
        port.tx_bytes += size as u64;
        port.tx_packets += 1;
        if let Some(cap) = self.capture.as_deref_mut() {
            cap.egress(pi, now, self.pool.get(id), &self.conns, now);
        }
        self.q.schedule(now + t, Ev::TxDone(pi as u32));
    }

    /// The fq watchdog fired: dequeue if the wire is idle.
    pub(crate) fn watchdog(&mut self, pi: usize, now: SimTime) {
        let port = &mut self.ports[pi];
        if port.watchdog != Some(now) {
            return; // superseded
        }
        port.watchdog = None;
        if port.tx.is_none() {
            self.start_tx(pi, now);
        }
    }

    pub(crate) fn tx_done(&mut self, pi: usize, now: SimTime) {
        let port = &mut self.ports[pi];
        let id = port.tx.take().expect("TxDone without a packet in transmission");
        // TX completion of a host's data segment returns the sender's TSQ budget, once this
        // port has moved on (the socket may send at once, into this very port).
        let pkt = self.pool.get_mut(id);
        pkt.link_next = LinkNext::NONE;
        let tsq = match pkt.payload {
            Payload::Tcp { conn, to_server, seg } if port.from_host && seg.len > 0 => {
                Some((conn as usize, Side::sender(to_server), (seg.len + seg.header_len()) as u64))
            }
            _ => None,
        };
        if port.lossy && port.rng.chance(port.loss) {
            port.link_drops += 1;
            self.drop_packet(id);
        } else {
            let mut at = now + port.delay;
            let j = port.jitter_ns;
            if j > 0 {
                // Host timing noise, drawn per packet; the link stays FIFO.
                at += SimTime::from_ns(port.rng.next_u64() % j);
                // (An empty link's last packet arrived by now, before `at`.)
                at = at.max(port.last_at);
                port.last_at = at;
            }
            self.put_on_link(pi, id, at);
        }
        if !self.ports[pi].queue.is_empty() {
            self.start_tx(pi, now);
        }
        // (A connection whose last packet this was may have been released.)
        if let Some((ci, side, bytes)) = tsq.filter(|&(ci, ..)| !self.conns[ci].released) {
            self.set_qdisc_room(ci, side);
            let c = &mut self.conns[ci];
            let ep = c.ep_mut(side);
            ep.tsq_release(now, bytes, &mut self.out);
            self.after_endpoint(ci, side, now);
        }
    }

    pub(crate) fn arrive(&mut self, pi: usize, id: PoolId, now: SimTime) {
        // The packet names the one behind it on the link: its arrival is the link's next event.
        let pkt = self.pool.get(id);
        let (next, dst) = (pkt.link_next, pkt.dst);
        let end = &mut self.links[pi];
        if next.id == LinkNext::NONE.id {
            debug_assert_eq!(end.tail, id, "Arrive names the link's head packet");
            end.tail = LinkNext::NONE.id;
        } else {
            self.q.schedule(next.at, Ev::Arrive(pi as u32, next.id));
        }
        let (node, port_to_switch) = (end.to, end.to_switch);
        if let Some(cap) = self.capture.as_deref_mut() {
            cap.ingress(pi, self.pool.get(id), &self.conns, now);
        }
        if node == dst {
            if self.cfg.gro || self.cfg.rx_coalesce > SimTime::ZERO {
                let batch = &mut self.rx_batch[node.0 as usize];
                if batch.is_empty() {
                    self.q.schedule(now + self.cfg.rx_coalesce, Ev::RxFlush(node.0));
                }
                batch.push(id);
                return;
            }
            self.deliver(id, now);
        } else if port_to_switch {
            self.forward(node, id, now); // a switch sends it on by the port its route names
        } else {
            self.drop_packet(id); // a host never forwards
        }
    }
}

/// The switch ports a packet may reach without an arrival event at their switch: per port, the
/// one lazy port feeding it, or `u32::MAX`. A lazy switch port that every source route enters
/// from the same link sees its packets in that link's order, so queueing each when it leaves
/// the link's sender, stamped with its arrival time, decides drops, marks and departures
/// exactly as the arrival would (a star's port towards a sender takes only the receiver's
/// ACKs). Only ports facing a host: the next arrival's event is scheduled earlier than it
/// would be, and at a switch two arrivals on the same nanosecond could then swap order; at a
/// host only the host's own timers can share its nanosecond. Not for monitored ports, whose
/// sampled occupancy must not run ahead of the clock, nor when a packet may go without a source
/// route (pings, unrouted flows).
pub(crate) fn express_ports(
    ports: &[Port],
    kinds: &[NodeKind],
    conns: &[Conn],
    paths: &[u32],
    monitor: &[PortId],
) -> Vec<u32> {
    const NONE: u32 = u32::MAX;
    const MANY: u32 = u32::MAX - 1;
    let mut feeder = vec![NONE; ports.len()];
    for c in conns {
        for (side, &start) in c.path.iter().enumerate() {
            // A path runs from the sender's NIC to the port into the receiving host.
            let dst = if side == 0 { c.spec.dst } else { c.spec.src };
            let mut k = start as usize;
            while ports[paths[k] as usize].to != dst {
                let (from, to) = (paths[k], paths[k + 1] as usize);
                feeder[to] = match feeder[to] {
                    NONE => from,
                    f if f == from => f,
                    _ => MANY,
                };
                k += 1;
            }
        }
    }
    let mut any = false;
    for (p, f) in feeder.iter_mut().enumerate() {
        let ok = *f < MANY
            && ports[p].lazy
            && !ports[p].from_host
            && kinds[ports[p].to.0 as usize] == NodeKind::Host
            && ports[*f as usize].lazy
            && !monitor.contains(&PortId(p as u32));
        if ok {
            any = true;
        } else {
            *f = NONE;
        }
    }
    if any {
        feeder
    } else {
        Vec::new()
    }
}

#[cfg(test)]
mod layout_tests {
    use super::*;
    use crate::queue::Classes;
    use std::mem::offset_of;

    /// The lines of a port as its doc comment lays them out.
    #[test]
    fn a_port_is_laid_out_by_use() {
        crate::assert_cache_lines(&[
            ("head_size", offset_of!(Port, head_size), 4, 0),
            ("behind", offset_of!(Port, behind), 4, 0),
            ("head_start", offset_of!(Port, head_start), 8, 0),
            ("busy_until", offset_of!(Port, busy_until), 8, 0),
            ("delay", offset_of!(Port, delay), 8, 0),
            ("busy_ns", offset_of!(Port, busy_ns), 8, 0),
            ("admitted", offset_of!(Port, admitted), 8, 0),
            ("admitted_bytes", offset_of!(Port, admitted_bytes), 8, 0),
            ("byte_ps", offset_of!(Port, byte_ps), 4, 0),
            ("from_host", offset_of!(Port, from_host), 1, 0),
            ("lazy", offset_of!(Port, lazy), 1, 0),
            ("lossy", offset_of!(Port, lossy), 1, 0),
            ("byte_time", offset_of!(Port, byte_time), 16, 1),
            ("jitter_ns", offset_of!(Port, jitter_ns), 8, 1),
            ("last_at", offset_of!(Port, last_at), 8, 1),
            ("tsq_due", offset_of!(Port, tsq_due), 8, 1),
            ("sizes", offset_of!(Port, sizes), 32, 2),
            ("queue", offset_of!(Port, queue), 32, 2),
        ]);
        // The first class, as `a_class_is_laid_out_by_use` lays it out, from the start of line 3.
        let class = offset_of!(Port, queue) + offset_of!(PortQueue, classes) + offset_of!(Classes, first);
        assert_eq!(class, 3 * 64, "the first class starts line 3");
        assert_eq!(std::mem::align_of::<Port>(), 64);
    }
}
