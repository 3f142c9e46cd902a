//! A sans-IO TCP endpoint that behaves like Linux's, callback for callback.
//!
//! The endpoint never reads a clock and never touches a network: the caller hands it the current
//! time and an incoming [`Segment`], and it appends the segments it wants sent to an output
//! vector and reports its next timer deadline ([`Endpoint::next_deadline`]). The structure follows
//! the kernel files it mirrors:
//! - `output.rs` — `tcp_output.c`: `tcp_write_xmit`, `tcp_transmit_skb`, `tcp_send_ack`, pacing;
//! - `input.rs`  — `tcp_input.c`: `tcp_ack`, SACK tagging, `tcp_fastretrans_alert`, PRR, undo;
//! - `recv.rs`   — `tcp_input.c` receive side: `tcp_data_queue`, delayed ACK, ECN echo;
//! - `rack.rs`   — `tcp_recovery.c`: RACK loss detection;
//! - `rtt.rs`    — `tcp_rtt_estimator`, RTO;
//! - `timer.rs`  — `tcp_timer.c`: retransmit and delayed-ACK timers;
//! - `info.rs`   — `tcp_get_info` (`struct tcp_info`).

mod config;
mod conn;
mod endpoint;
mod info;
mod input;
mod output;
mod rack;
mod recv;
mod rtt;
mod segment;
mod seq;
mod timer;
mod tlp;

pub use ccsim_cc::MinMax;
pub use config::{EcnMode, TcpConfig};
pub use endpoint::{Endpoint, QdiscDrop, TcpState, TcpStats};
pub use info::TcpInfo;
pub use segment::{Ecn, Segment, TcpFlags, TcpOptions};
pub use seq::{after, before};
