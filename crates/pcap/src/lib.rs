//! Packet captures of a ccsim run as pcap files that tcpdump, tshark and Wireshark read.
//!
//! The network (`ccsim_net::Sim::set_capture`) copies the packets crossing each capture's
//! points and hands them over in time order; `CaptureFiles` writes each as a pcap record:
//! link type RAW (an IPv4 packet with no link-layer header), nanosecond timestamps counting
//! simulated time from the epoch, little-endian, the packet's headers as `wire` lays them out
//! followed by zeros up to the snap length.
//!
//! - `wire.rs` — a simulated packet's IPv4/TCP/ICMP header bytes, with checksums.

pub mod wire;

use ccsim_net::{CapturedPacket, PacketSink};
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{DataLink, Endianness, TsResolution};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The smallest snap length: an IPv4 header and a TCP header without options.
pub const MIN_SNAPLEN: u32 = 40;
/// The largest, as tcpdump's (`MAXIMUM_SNAPLEN`).
pub const MAX_SNAPLEN: u32 = 262_144;

/// The pcap files of a run's captures, being written.
pub struct CaptureFiles {
    inner: Arc<Mutex<Writers>>,
}

struct Writers {
    files: Vec<(PathBuf, PcapWriter<BufWriter<File>>)>,
    /// Per node: its IPv4 address (hosts), or None (switches).
    addresses: Vec<Option<u32>>,
    snaplen: u32,
    buf: Vec<u8>,
    /// The first write error, reported by `finish`.
    error: Option<String>,
}

impl CaptureFiles {
    /// Create `paths` (one per capture, in capture order) with their pcap headers.
    pub fn create(paths: &[PathBuf], addresses: Vec<Option<u32>>, snaplen: u32) -> Result<CaptureFiles, String> {
        assert!((MIN_SNAPLEN..=MAX_SNAPLEN).contains(&snaplen), "the scenario checks the snap length");
        let header = PcapHeader {
            version_major: 2,
            version_minor: 4,
            ts_correction: 0,
            ts_accuracy: 0,
            snaplen,
            datalink: DataLink::RAW,
            ts_resolution: TsResolution::NanoSecond,
            endianness: Endianness::Little,
        };
        let mut files = Vec::with_capacity(paths.len());
        for p in paths {
            let f = File::create(p).map_err(|e| format!("{}: cannot create: {e}", p.display()))?;
            let w = PcapWriter::with_header(BufWriter::new(f), header)
                .map_err(|e| format!("{}: cannot write: {e}", p.display()))?;
            files.push((p.clone(), w));
        }
        let w = Writers { files, addresses, snaplen, buf: Vec::with_capacity(snaplen as usize), error: None };
        Ok(CaptureFiles { inner: Arc::new(Mutex::new(w)) })
    }

    /// The sink the simulation hands its captured packets to.
    pub fn sink(&self) -> Box<dyn PacketSink> {
        Box::new(Sink(Arc::clone(&self.inner)))
    }

    /// Flush every file, once the simulation (and with it the sink) is gone.
    pub fn finish(self) -> Result<(), String> {
        let w = Arc::try_unwrap(self.inner)
            .ok()
            .expect("the simulation and its sink are dropped")
            .into_inner()
            .expect("not poisoned");
        if let Some(e) = w.error {
            return Err(e);
        }
        for (p, f) in w.files {
            f.into_writer().flush().map_err(|e| format!("{}: cannot write: {e}", p.display()))?;
        }
        Ok(())
    }
}

struct Sink(Arc<Mutex<Writers>>);

impl PacketSink for Sink {
    fn packet(&mut self, p: &CapturedPacket) {
        let mut w = self.0.lock().expect("not poisoned");
        if w.error.is_none() {
            if let Err(e) = w.write(p) {
                w.error = Some(e);
            }
        }
    }
}

impl Writers {
    fn write(&mut self, p: &CapturedPacket) -> Result<(), String> {
        let addr = |n: ccsim_net::NodeId| self.addresses.get(n.0 as usize).copied().flatten().unwrap_or(0);
        let (src, dst) = (addr(p.src), addr(p.dst));
        let mut buf = std::mem::take(&mut self.buf);
        wire::headers(p, src, dst, &mut buf);
        // The headers, then the payload's zeros, cut at the snap length.
        buf.resize(p.size.min(self.snaplen) as usize, 0);
        let (path, file) = &mut self.files[p.capture as usize];
        let rec = PcapPacket::new(Duration::from_nanos(p.t.ns()), p.size, &buf);
        let r = file.write_packet(&rec).map(|_| ()).map_err(|e| format!("{}: cannot write: {e}", path.display()));
        self.buf = buf;
        r
    }
}
