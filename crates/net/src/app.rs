//! Applications: what drives each connection's writes (bulk, fixed-size transfers, RPCs), and
//! ping probes.

use crate::conn::Side;
use crate::core::Core;
use crate::event_loop::Ev;
use crate::flows::{FlowKind, Lifecycle};
use crate::lifecycle::Origin;
use crate::packet::{LinkNext, Packet, Payload};
use ccsim_engine::{EventQueue, SimTime};

/// What an application did when its socket had run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AppStep {
    /// Nothing more to send now.
    Idle,
    /// It wrote more: the socket's output must be handled again.
    Wrote,
}

impl<Q: EventQueue<Ev>> Core<Q> {
    /// The application's turn after one side of its connection ran (`after_endpoint`): a
    /// transfer completes when all of it is acknowledged; an RPC flow writes the next RPC.
    #[inline]
    pub(crate) fn app_after_socket(&mut self, ci: usize, side: Side, now: SimTime) -> AppStep {
        let c = &mut self.conns[ci];
        match c.spec.kind {
            FlowKind::Transfer { .. } => {
                // Only the client's own steps can complete the transfer (its data acknowledged):
                // the receiver's steps do not read the sender's state.
                if side == Side::Client && c.completion.is_none() && c.started && c.client.all_acked() {
                    c.completion = Some(now);
                    c.end = Some(now);
                    if let Origin::Traffic(t) = c.origin {
                        let done = self.flow_done(ci);
                        self.traffic_completed(t as usize, &done, now);
                    }
                }
                if self.conns[ci].spec.lifecycle == Lifecycle::CloseWhenDone && self.close_on_eof(ci, side, now) {
                    return AppStep::Wrote;
                }
            }
            FlowKind::Rpc { bytes, .. } => {
                // The next RPC starts as soon as the previous one is acknowledged, until stopped.
                if c.started && c.end.is_none() && side == Side::Client && c.client.all_acked() {
                    c.rpc_latencies.push(now - c.rpc_start);
                    c.rpc_start = now;
                    self.set_qdisc_room(ci, Side::Client);
                    let c = &mut self.conns[ci];
                    c.client.write(now, bytes, &mut self.out);
                    return AppStep::Wrote;
                }
            }
            FlowKind::Exchange { .. } => {
                if self.exchange_step(ci, side, now) {
                    return AppStep::Wrote;
                }
            }
            FlowKind::Bulk { .. } => {}
        }
        AppStep::Idle
    }

    /// The application stops (`FlowSpec::kind`'s stop time): no more data is written.
    pub(crate) fn flow_stop(&mut self, ci: usize, now: SimTime) {
        let conn = &mut self.conns[ci];
        conn.client.stop_sending();
        conn.end.get_or_insert(now);
    }

    pub(crate) fn flow_start(&mut self, ci: usize, now: SimTime) {
        self.settle_nic(ci, Side::Client, now);
        let c = &mut self.conns[ci];
        c.started = true;
        match c.spec.kind {
            FlowKind::Bulk { .. } => c.client.write_forever(now, &mut self.out),
            FlowKind::Transfer { bytes } => {
                c.client.write(now, bytes, &mut self.out);
                if c.spec.lifecycle == Lifecycle::CloseWhenDone {
                    c.client.close(now, &mut self.out);
                }
            }
            FlowKind::Rpc { bytes, .. } => {
                c.rpc_start = now;
                c.client.write(now, bytes, &mut self.out)
            }
            FlowKind::Exchange { request, .. } => c.client.write(now, request, &mut self.out),
        }
        if c.spec.connect.is_none() {
            c.client.connect(now, &mut self.out);
        }
        self.after_endpoint(ci, Side::Client, now);
    }

    /// A connection opened ahead of its flow's first write.
    pub(crate) fn flow_connect(&mut self, ci: usize, now: SimTime) {
        self.settle_nic(ci, Side::Client, now);
        self.conns[ci].client.connect(now, &mut self.out);
        self.after_endpoint(ci, Side::Client, now);
    }

    pub(crate) fn ping(&mut self, i: usize, now: SimTime) {
        let (spec, rec, seq) = &mut self.pings[i];
        if spec.stop.is_some_and(|s| now >= s) {
            return;
        }
        *seq += 1;
        rec.sent += 1;
        let pkt = Packet {
            src: spec.src,
            dst: spec.dst,
            size: spec.size,
            dscp: spec.dscp,
            ecn: spec.ecn,
            flow_hash: 0x5a5a_0000 ^ i as u32,
            path: Packet::NO_PATH,
            hop: 0,
            link_next: LinkNext::NONE,
            payload: Payload::PingRequest { probe: i as u32, seq: *seq, sent: now },
        };
        let next = now + spec.interval;
        self.q.schedule(next, Ev::Ping(i as u32));
        self.send_from_host(pkt, now);
    }
}
