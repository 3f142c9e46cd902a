//! (in progress: placeholder API until the BPF programs land)
use std::collections::BTreeMap;
pub const DCTCP_NAME: &str = "ccsim_dctcp";
pub const NV_NAME: &str = "ccsim_nv";
pub fn available() -> Result<(), String> {
    Err("not built yet".into())
}
pub enum MarkUnit {
    Packets,
    Bytes,
}
pub struct Marker {
    pub netns: String,
    pub dev: String,
    pub k: u64,
    pub unit: MarkUnit,
    pub drop_non_ect: bool,
}
pub struct BpfSetup {
    pub dctcp: bool,
    pub nv: bool,
    pub cgroup: Option<std::path::PathBuf>,
    pub base_rtt: Vec<(std::net::Ipv4Addr, std::net::Ipv4Addr, u32)>,
    pub markers: Vec<Marker>,
}
pub struct Loaded;
pub fn load(_setup: &BpfSetup, _workdir: &std::path::Path) -> Result<Loaded, String> {
    available().map(|_| Loaded)
}
impl Loaded {
    pub fn finish(self) -> Result<BpfCounters, String> {
        Ok(BpfCounters::default())
    }
}
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct BpfCounters {
    pub cc: BTreeMap<String, BTreeMap<String, u64>>,
    pub markers: Vec<MarkerCounters>,
    pub base_rtt_set: u64,
}
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct MarkerCounters {
    pub dev: String,
    pub marks: u64,
    pub drops_non_ect: u64,
    pub over_k_ce: u64,
}
pub fn cleanup_loaders() -> Vec<String> {
    Vec::new()
}
