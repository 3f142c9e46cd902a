//! `record.pcap`: packet captures, one pcap file per host or port named.

use super::named_port;
use crate::error::{Error, Result};
use crate::results::numbered_files;
use crate::spec;
use crate::units::{
    duration,
    DurationRange::{NonNegative, Positive},
};
use ccsim_engine::SimTime;
use ccsim_net::{CapturePoint, CaptureSpec, NodeKind, PortId, Topology};
use ccsim_pcap::{MAX_SNAPLEN, MIN_SNAPLEN};

/// `record.pcap_snaplen`'s default: bytes kept of each packet — every IPv4 and TCP header with
/// its options (at most 80 bytes) and some of the payload's zeros.
pub const DEFAULT_SNAPLEN: u32 = 128;
/// `record.pcap_max_packets`'s default, per capture (at the default snap length, 144 MB).
pub const DEFAULT_MAX_PACKETS: u64 = 1_000_000;
/// The most packets one capture may keep (14 GB at the default snap length).
pub(crate) const MAX_PACKETS: u64 = 100_000_000;

/// The captures a scenario asks for, resolved.
#[derive(Clone, Debug, Default)]
pub struct Captures {
    pub specs: Vec<CaptureSpec>,
    /// Per capture, its file in the results directory (`pcap_<name>.pcap`).
    pub files: Vec<String>,
    pub snaplen: u32,
}

/// Resolve `record.pcap` and its settings: a host captures what its NIC sends and receives, a
/// port "from->to" what leaves by it.
pub(super) fn captures(r: &spec::Record, topo: &Topology, run_duration: SimTime) -> Result<Captures> {
    let snaplen = r.pcap_snaplen.unwrap_or(DEFAULT_SNAPLEN);
    if !(MIN_SNAPLEN..=MAX_SNAPLEN).contains(&snaplen) {
        return Err(Error::new(
            "record.pcap_snaplen",
            format!("{snaplen} bytes; allowed {MIN_SNAPLEN} (an IPv4 and a TCP header) to {MAX_SNAPLEN}"),
        ));
    }
    let max_packets = r.pcap_max_packets.unwrap_or(DEFAULT_MAX_PACKETS);
    if !(1..=MAX_PACKETS).contains(&max_packets) {
        return Err(Error::new("record.pcap_max_packets", format!("{max_packets}; allowed 1 to {MAX_PACKETS}")));
    }
    let start = match &r.pcap_start {
        Some(q) => duration(q, "record.pcap_start", NonNegative)?,
        None => SimTime::ZERO,
    };
    let stop = match &r.pcap_stop {
        Some(q) => duration(q, "record.pcap_stop", Positive)?,
        None => run_duration,
    };
    if start >= run_duration {
        return Err(Error::new("record.pcap_start", "must be before the end of the run (run.duration)"));
    }
    if stop <= start || stop > run_duration {
        return Err(Error::new(
            "record.pcap_stop",
            "must be after record.pcap_start and at most the end of the run (run.duration)",
        ));
    }
    let mut specs: Vec<CaptureSpec> = Vec::with_capacity(r.pcap.len());
    let mut names = Vec::with_capacity(r.pcap.len());
    for (i, name) in r.pcap.iter().enumerate() {
        let field = format!("record.pcap[{i}]");
        let (points, name) = if name.contains("->") {
            let (p, name) = named_port(topo, name, &field)?;
            (vec![CapturePoint::Egress(p)], name)
        } else {
            let n = topo.node(name.trim()).map_err(|_| {
                Error::new(
                    &field,
                    format!("unknown host \"{name}\"; name a host (its NIC, both directions) or a port \"from->to\""),
                )
            })?;
            if topo.kinds[n.0 as usize] != NodeKind::Host {
                return Err(Error::new(
                    &field,
                    format!("\"{name}\" is a switch; name a host or one of the switch's ports as \"from->to\""),
                ));
            }
            let mut points = Vec::new();
            for p in 0..2 * topo.links.len() as u32 {
                let (from, to) = topo.port_ends(PortId(p));
                if from == n {
                    points.push(CapturePoint::Egress(PortId(p)));
                } else if to == n {
                    points.push(CapturePoint::Ingress(PortId(p)));
                }
            }
            (points, name.trim().to_string())
        };
        if let Some(first) = names.iter().position(|n| *n == name) {
            return Err(Error::new(field, format!("`{name}` is listed twice (also record.pcap[{first}])")));
        }
        names.push(name.clone());
        specs.push(CaptureSpec { name, points, start, stop, max_packets });
    }
    let files = numbered_files(&names, "pcap_", "pcap");
    Ok(Captures { specs, files, snaplen })
}
