//! Sampling and records: monitored ports and flows sampled at the recording interval, and the
//! counters and records read at the end of a run.

use crate::core::Core;
use crate::event_loop::Ev;
use crate::flows::{FlowRecord, FlowSpec, PingRecord};
use crate::queue::QueueStats;
use crate::topology::PortId;
use ccsim_engine::{EventQueue, SimTime};
use ccsim_tcp::{TcpInfo, TcpStats};

/// One sample of a monitored port.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PortSample {
    pub t: SimTime,
    /// Packets queued (all classes), and per class for the first four classes.
    pub packets: u32,
    pub bytes: u64,
}

impl<Q: EventQueue<Ev>> Core<Q> {
    pub(crate) fn sample(&mut self, now: SimTime) {
        for k in 0..self.cfg.monitor.len() {
            let pi = self.cfg.monitor[k].0 as usize;
            if self.ports[pi].queue.lazy {
                self.settle(pi, now);
            }
        }
        for (k, p) in self.cfg.monitor.iter().enumerate() {
            let port = &self.ports[p.0 as usize];
            let packets = port.queue.len_packets() as u32;
            self.queue_samples[k].push(packets);
            if self.cfg.series {
                let bytes = port.queue.len_bytes();
                self.queue_series[k].push(PortSample { t: now, packets, bytes });
            }
        }
        if self.cfg.series {
            for (i, c) in self.conns.iter().enumerate() {
                let s = c.client.sock();
                self.flow_series[i].push((now, s.snd_cwnd, c.client.stats().bytes_acked, s.srtt_us >> 3));
            }
        }
        if let Some(iv) = self.cfg.sample_interval {
            self.q.schedule(now + iv, Ev::Sample);
        }
    }

    // ---- results ----

    pub(crate) fn flow_records(&self) -> Vec<FlowRecord> {
        self.conns
            .iter()
            .map(|c| {
                let st = c.client.stats();
                FlowRecord {
                    name: c.spec.name.clone(),
                    cc: c.client.cc_name().to_string(),
                    start: c.spec.start,
                    end: c.end,
                    established: c.established,
                    bytes_acked: st.bytes_acked,
                    bytes_received: c.server.stats().bytes_received,
                    retransmits: st.total_retrans,
                    rto_count: st.rto_count,
                    other_timeouts: st.other_timeouts,
                    fast_recoveries: st.fast_recoveries,
                    cwr_events: st.cwr_events,
                    completion: c.completion.map(|t| t - c.spec.start),
                    rpc_latencies: c.rpc_latencies.clone(),
                }
            })
            .collect()
    }

    pub(crate) fn flow_specs(&self) -> Vec<&FlowSpec> {
        self.conns.iter().map(|c| &c.spec).collect()
    }

    /// The counters of a flow's client and server sockets.
    pub(crate) fn tcp_stats(&self, flow: usize) -> (TcpStats, TcpStats) {
        let c = &self.conns[flow];
        (*c.client.stats(), *c.server.stats())
    }

    /// `tcp_info` of a flow's client and server sockets.
    pub(crate) fn tcp_info(&self, flow: usize) -> (TcpInfo, TcpInfo) {
        let c = &self.conns[flow];
        (c.client.tcp_info(), c.server.tcp_info())
    }

    pub(crate) fn ping_records(&self) -> Vec<PingRecord> {
        self.pings.iter().map(|(_, r, _)| r.clone()).collect()
    }

    /// Per class counters of a port.
    pub(crate) fn port_class_stats(&self, p: PortId) -> Vec<(String, QueueStats)> {
        self.ports[p.0 as usize].queue.class_stats()
    }

    /// Fraction of the run the port spent transmitting.
    pub(crate) fn port_utilisation(&self, p: PortId, over: SimTime) -> f64 {
        if over.ns() == 0 {
            return 0.0;
        }
        let port = &self.ports[p.0 as usize];
        // A lazy port has already booked the transmissions of its backlog beyond the end.
        let booked_beyond = if port.queue.lazy { port.busy_until.saturating_sub(over).ns() } else { 0 };
        port.busy_ns.saturating_sub(booked_beyond) as f64 / over.ns() as f64
    }

    pub(crate) fn port_tx(&self, p: PortId) -> (u64, u64, u64) {
        let port = &self.ports[p.0 as usize];
        (port.tx_packets, port.tx_bytes, port.link_drops)
    }
}
