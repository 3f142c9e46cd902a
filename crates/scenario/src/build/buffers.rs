//! `[buffers.NAME]`: switches whose egress queues share one packet buffer with dynamic
//! thresholds, and which switch has which (`topology.switch_buffer`, a custom switch's `buffer`).

use crate::error::{Error, Result};
use crate::spec::{Scenario, TopologyKind};
use crate::units::bytes;
use ccsim_net::{NodeId, NodeKind, SharedBufferSpec, Topology};

/// Named switches' buffers: (name, bytes, cell bytes, where the figure comes from). Cells are
/// given where published; elsewhere the preset counts exact bytes.
pub const BUFFER_PRESETS: [(&str, u64, u32, &str); 5] = [
    (
        "triumph",
        4_000_000,
        1,
        "Broadcom Triumph (BCM56538), 48 x 1G: 4 MB (the DCTCP paper's ToR; ABM's buffer-size table)",
    ),
    ("trident+", 46_080 * 208, 208, "Broadcom Trident+ (BCM56840): 9 MB as 46,080 cells of 208 bytes"),
    ("trident2", 12_000_000, 1, "Broadcom Trident II (BCM56850): 12 MB"),
    ("tomahawk", 16_000_000, 1, "Broadcom Tomahawk: 16 MB (ABM's buffer-size table)"),
    ("nexus3548", 18_000_000, 1, "Cisco Nexus 3548 (the FreeBSD DCTCP tests' switch): 18 MB"),
];

/// The largest packet a queue holds, bytes: a buffer must take at least one.
const MAX_PACKET: u64 = 1500;

fn spec_of(s: &Scenario, name: &str, field: &str) -> Result<SharedBufferSpec> {
    let b = s.buffers.get(name).ok_or_else(|| {
        let names: Vec<String> = s.buffers.keys().map(|k| format!("\"{k}\"")).collect();
        Error::new(field, format!("unknown buffer \"{name}\"; defined buffers are {}", names.join(", ")))
    })?;
    let f = format!("buffers.{name}");
    let preset = match &b.preset {
        Some(p) => Some(BUFFER_PRESETS.iter().find(|(n, ..)| n == p).ok_or_else(|| {
            let names: Vec<String> = BUFFER_PRESETS.iter().map(|(n, ..)| format!("\"{n}\"")).collect();
            Error::new(format!("{f}.preset"), format!("unknown switch \"{p}\"; allowed {}", names.join(", ")))
        })?),
        None => None,
    };
    let size = match (&b.size, preset) {
        (Some(q), _) => bytes(q, &format!("{f}.size"))?,
        (None, Some(p)) => p.1,
        (None, None) => {
            return Err(Error::new(format!("{f}.size"), "a buffer needs its size (e.g. \"12MB\") or a preset"))
        }
    };
    let cell = b.cell.or(preset.map(|p| p.2)).unwrap_or(1);
    let spec = SharedBufferSpec {
        size_bytes: size,
        cell_bytes: cell,
        reserved_bytes: b.reserved.as_ref().map(|q| bytes(q, &format!("{f}.reserved"))).transpose()?.unwrap_or(0),
        alpha: b.alpha,
        class_alpha: b.alphas.iter().map(|(k, v)| (k.clone(), *v)).collect(),
        mark_above_bytes: b.mark_above.as_ref().map(|q| bytes(q, &format!("{f}.mark_above"))).transpose()?,
    };
    Ok(spec)
}

/// Every switch with a shared buffer, with its settings checked against its queues.
pub(super) fn shared_buffers(s: &Scenario, topo: &Topology) -> Result<Vec<(NodeId, SharedBufferSpec)>> {
    let mut out = Vec::new();
    let custom = s.topology.kind == TopologyKind::Custom;
    for n in 0..topo.num_nodes() {
        if topo.kinds[n] != NodeKind::Switch {
            continue;
        }
        let node = NodeId(n as u32);
        let own = if custom {
            s.topology.nodes.iter().position(|x| x.name == topo.name(node)).and_then(|i| {
                s.topology.nodes[i].buffer.as_ref().map(|b| (b.clone(), format!("topology.nodes[{i}].buffer")))
            })
        } else {
            None
        };
        let Some((name, field)) =
            own.or_else(|| s.topology.switch_buffer.clone().map(|b| (b, "topology.switch_buffer".to_string())))
        else {
            continue;
        };
        let spec = spec_of(s, &name, &field)?;
        // Its queues: every class of every egress port of the switch.
        let mut queues = 0;
        for l in &topo.links {
            if l.a == node {
                queues += l.queue_ab.classes.len();
            }
            if l.b == node {
                queues += l.queue_ba.classes.len();
            }
        }
        let f = format!("buffers.{name}");
        spec.check(queues, MAX_PACKET).map_err(|e| {
            let which = match e {
                ccsim_net::BufferError::Alpha(_) => "alpha",
                ccsim_net::BufferError::Cell => "cell",
                ccsim_net::BufferError::Reserved { .. } => "reserved",
                ccsim_net::BufferError::TooSmall { .. } => "size",
            };
            Error::new(format!("{f}.{which}"), format!("{e} (switch \"{}\", {queues} queues)", topo.name(node)))
        })?;
        out.push((node, spec));
    }
    // A buffer no switch uses is still checked.
    for name in s.buffers.keys() {
        spec_of(s, name, "buffers")?;
    }
    Ok(out)
}
