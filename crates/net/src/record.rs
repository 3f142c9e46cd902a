//! Sampling and records: monitored ports and flows sampled at the recording interval, and the
//! counters and records read at the end of a run.

use crate::capture::CaptureCount;
use crate::conn::Conn;
use crate::core::Core;
use crate::event_loop::Ev;
use crate::flows::{FlowDone, FlowRecord, FlowSpec, Lifecycle, PingRecord};
use crate::queue::QueueStats;
use crate::sim::{EventList, RunStats};
use crate::switch::BufferRecord;
use crate::topology::{PortId, Topology};
use ccsim_engine::{EventQueue, SimTime};
use ccsim_tcp::{SenderSample, TcpInfo, TcpStats};

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
            if self.ports[pi].lazy {
                self.settle(pi, now);
            }
        }
        for (k, p) in self.cfg.monitor.iter().enumerate() {
            let port = &self.ports[p.0 as usize];
            let packets = port.queue.len_packets() as u32;
            if now >= self.cfg.stats_from {
                self.queue_occupancy[k].record(packets);
            }
            if self.cfg.series {
                let bytes = port.queue.len_bytes();
                self.queue_series[k].push(PortSample { t: now, packets, bytes });
            }
        }
        if !self.buffers.is_empty() {
            self.sample_buffers(now);
        }
        if self.cfg.series {
            for (i, c) in self.conns[..self.static_flows].iter().enumerate() {
                let bytes_acked = c.client.stats().bytes_acked;
                self.flow_series[i].push(FlowSample { t: now, sender: c.client.sender_sample(), bytes_acked });
            }
        }
        if let Some(iv) = self.cfg.sample_interval {
            self.q.schedule(now + iv, Ev::Sample);
        }
    }

    // ---- records ----

    /// The flow's record as it stands (`FlowRecord`).
    pub(crate) fn flow_record(&self, c: &Conn) -> FlowRecord {
        let st = c.client.stats();
        FlowRecord {
            name: c.spec.name.clone(),
            cc: c.client.cc_name().to_string(),
            src: c.spec.src,
            dst: c.spec.dst,
            kind: c.spec.kind.clone(),
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
            sockets: Sockets { client: *c.client.stats(), server: *c.server.stats() },
        }
    }

    pub(crate) fn flow_specs(&self) -> Vec<&FlowSpec> {
        self.conns[..self.static_flows].iter().map(|c| &c.spec).collect()
    }

    /// `tcp_info` of a flow's client and server sockets, the times in it counted up to `at`.
    pub(crate) fn tcp_info_at(&self, flow: usize, at: SimTime) -> Sockets<TcpInfo> {
        let c = &self.conns[flow];
        Sockets { client: c.client.tcp_info_at(at), server: c.server.tcp_info_at(at) }
    }

    /// The counters of a flow's client and server sockets.
    pub(crate) fn tcp_stats(&self, flow: usize) -> Sockets<TcpStats> {
        let c = &self.conns[flow];
        Sockets { client: *c.client.stats(), server: *c.server.stats() }
    }

    pub(crate) fn port_counters(&self, p: PortId) -> PortCounters {
        let port = &self.ports[p.0 as usize];
        PortCounters {
            tx_packets: port.tx_packets(),
            tx_bytes: port.tx_bytes(self.cfg.l2_overhead),
            link_drops: port.link_drops,
        }
    }

    /// Fraction of `over` the port spent transmitting.
    fn port_utilisation(&self, p: PortId, over: SimTime) -> f64 {
        if over.ns() == 0 {
            return 0.0;
        }
        let port = &self.ports[p.0 as usize];
        // Time booked beyond the end: the rest of the transmission under way, and a lazy port's
        // backlog (whose transmissions it booked when it queued them).
        let booked_beyond = port.busy_until.saturating_sub(over).ns();
        port.busy_ns.saturating_sub(booked_beyond) as f64 / over.ns() as f64
    }

    /// Hand over what the run recorded; the network itself is dropped.
    pub(crate) fn into_records(mut self, event_list: EventList) -> Records {
        // An interrupted run is recorded up to where it stopped.
        let duration = self.stopped_at.unwrap_or(self.cfg.duration);
        let captures = self.capture.take().map(|c| c.finish(duration)).unwrap_or_default();
        let monitor = std::mem::take(&mut self.cfg.monitor);
        let samples = std::mem::take(&mut self.queue_occupancy);
        let series = std::mem::take(&mut self.queue_series);
        let ports = monitor
            .iter()
            .zip(samples.into_iter().zip(series))
            .map(|(&p, (occupancy, series))| {
                let port = &self.ports[p.0 as usize];
                PortRecord {
                    port: p,
                    occupancy,
                    series,
                    classes: port.class_stats().into_iter().map(|(name, stats)| ClassRecord { name, stats }).collect(),
                    tx: self.port_counters(p),
                    utilisation: self.port_utilisation(p, duration),
                }
            })
            .collect();
        let flows = self.conns[..self.static_flows].iter().map(|c| self.flow_record(c)).collect();
        // Flows traffic opened that are still open: handed over as they stand, completed or not.
        for ci in self.static_flows..self.conns.len() {
            let c = &self.conns[ci];
            if c.spec.lifecycle == Lifecycle::Pooled {
                if c.msg.is_some() {
                    let done = self.exchange_done(ci, None);
                    self.hand_over(done);
                }
            } else if !c.released {
                let done = self.flow_done(ci);
                self.hand_over(done);
            }
        }
        // The sink is dropped here, with the network: a writer it holds is flushed.
        self.sink = None;
        Records {
            stats: self.stats,
            event_list,
            duration,
            sample_interval: self.cfg.sample_interval,
            ports,
            flows,
            flow_series: std::mem::take(&mut self.flow_series),
            pings: std::mem::take(&mut self.pings).into_iter().map(|(_, r, _)| r).collect(),
            done: std::mem::take(&mut self.done),
            buffers: std::mem::take(&mut self.buffers)
                .into_iter()
                .map(|b| BufferRecord {
                    switch: b.node,
                    // Every drop at its queues, less the buffer's own refusals.
                    queue_drops: b
                        .ports
                        .iter()
                        .map(|&p| self.ports[p as usize].queue.classes.iter().map(|c| c.stats.drops).sum::<u64>())
                        .sum::<u64>()
                        - b.buf.drops.full
                        - b.buf.drops.threshold,
                    spec: b.spec,
                    samples: b.samples,
                    series: b.series,
                    drops: b.buf.drops,
                })
                .collect(),
            captures,
            topology: self.topo,
        }
    }
}

/// A client socket's and a server socket's view of one connection.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sockets<T> {
    pub client: T,
    pub server: T,
}

/// One sample of a flow's sender (series on).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlowSample {
    pub t: SimTime,
    /// cwnd, ssthresh, srtt, packets in flight, pacing and delivery rate, the CC's state.
    pub sender: SenderSample,
    pub bytes_acked: u64,
}

/// A port's transmit counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortCounters {
    pub tx_packets: u64,
    /// Bytes on the wire, link-layer overhead included.
    pub tx_bytes: u64,
    /// Packets the link lost (random loss).
    pub link_drops: u64,
}

/// A class of a port's queue and its counters.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassRecord {
    pub name: String,
    pub stats: QueueStats,
}

/// A port's occupancy samples (packets) as counts per value: the statistics of a run of any
/// length in memory that follows the longest queue, not the number of samples.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Occupancy {
    /// `counts[v]`: samples that found `v` packets queued.
    counts: Vec<u64>,
    total: u64,
}

impl Occupancy {
    pub fn record(&mut self, packets: u32) {
        let v = packets as usize;
        if v >= self.counts.len() {
            self.counts.resize(v + 1, 0);
        }
        self.counts[v] += 1;
        self.total += 1;
    }
    /// The number of samples.
    pub fn samples(&self) -> u64 {
        self.total
    }
    /// `(packets, samples)` for every value sampled at least once, in increasing order.
    pub fn counts(&self) -> impl Iterator<Item = (u32, u64)> + '_ {
        self.counts.iter().enumerate().filter(|&(_, &c)| c > 0).map(|(v, &c)| (v as u32, c))
    }
}

/// What a monitored port recorded.
#[derive(Clone, Debug, PartialEq)]
pub struct PortRecord {
    pub port: PortId,
    /// Occupancy in packets, sampled every recording interval from `SimConfig::stats_from` on.
    pub occupancy: Occupancy,
    /// The occupancy series, when series are kept.
    pub series: Vec<PortSample>,
    pub classes: Vec<ClassRecord>,
    pub tx: PortCounters,
    /// Fraction of the run the port spent transmitting.
    pub utilisation: f64,
}

/// What a run hands over when it ends (`Sim::into_records`): everything results are written
/// from. Holding it keeps no part of the simulation alive.
#[derive(Clone, Debug)]
pub struct Records {
    pub topology: Topology,
    pub stats: RunStats,
    pub event_list: EventList,
    pub duration: SimTime,
    /// The recording interval (None: nothing was sampled).
    pub sample_interval: Option<SimTime>,
    /// Per monitored port, in `SimConfig::monitor` order.
    pub ports: Vec<PortRecord>,
    /// Per flow, in the order the flows were given.
    pub flows: Vec<FlowRecord>,
    /// Per flow: its sender sampled at each interval, when series are kept.
    pub flow_series: Vec<Vec<FlowSample>>,
    pub pings: Vec<PingRecord>,
    /// Flows opened by traffic, in the order they were released (those still open at the end
    /// last), unless a `FlowSink` took them.
    pub done: Vec<FlowDone>,
    /// Per switch with a shared buffer, in `SimConfig::shared_buffers` order.
    pub buffers: Vec<BufferRecord>,
    /// Per packet capture, in `Sim::set_capture` order: what it took.
    pub captures: Vec<CaptureCount>,
}

/// The warm-up cut, the one place it is computed: the index of the first sample taken at or
/// after `warmup`, samples being taken every `interval` from t = 0.
pub fn first_sample_after(warmup: SimTime, interval: SimTime) -> usize {
    warmup.ns().div_ceil(interval.ns().max(1)) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_warmup_cut_keeps_exactly_the_samples_at_or_after_the_warmup() {
        let ms = SimTime::from_ms;
        assert_eq!(first_sample_after(ms(1000), ms(1)), 1000, "sample 1000 is taken at 1 s itself");
        assert_eq!(first_sample_after(SimTime::from_us(1_000_500), ms(1)), 1001);
        assert_eq!(first_sample_after(SimTime::ZERO, ms(1)), 0);
        // In floating point 0.3 s / 100 µs is 2999.9999999999995: a cut computed so would keep
        // the sample at 0.2999 s.
        assert_eq!(first_sample_after(ms(300), SimTime::from_us(100)), 3000);
    }

    #[test]
    fn occupancy_counts_each_value_in_order() {
        let mut o = Occupancy::default();
        for v in [3, 0, 3, 7, 3] {
            o.record(v);
        }
        assert_eq!(o.samples(), 5);
        assert_eq!(o.counts().collect::<Vec<_>>(), vec![(0, 1), (3, 3), (7, 1)]);
    }
}
