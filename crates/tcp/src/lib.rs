//! A sans-IO TCP endpoint that behaves like Linux's, callback for callback.
//!
//! The endpoint never reads a clock and never touches a network: the caller hands it the current
//! time and an incoming [`Segment`], and it appends the segments it wants sent to an output
//! vector and reports its next timer deadline ([`Endpoint::next_deadline`]). The structure follows
//! the kernel files it mirrors:
//! - `endpoint.rs` — the socket (`struct tcp_sock` with its `inet_connection_sock`), the
//!   retransmit queue's skbs, the public API (`connect`, `write`, `read`, `close`);
//! - `config.rs` — `TcpConfig`: the sysctls and socket options, `CONFIG_HZ` and jiffies;
//! - `segment.rs` — the segment on the wire (`struct tcphdr`, its options, the IP ECN field);
//! - `seq.rs` — `SeqNum`, the sequence number with the kernel's `before()` / `after()`;
//! - `rcv_established.rs` — segment arrival: `tcp_rcv_state_process`, `tcp_rcv_established`
//!   (header prediction's fast path, the slow path);
//! - `conn.rs` — the three-way handshake: `tcp_conn_request`, `tcp_rcv_synsent_state_process`,
//!   option and ECN negotiation, `tcp_init_transfer`;
//! - `input.rs` — `tcp_input.c`: `tcp_ack`, SACK tagging, `tcp_fastretrans_alert`, PRR, undo;
//! - `recv.rs` — `tcp_input.c` receive side: `tcp_data_queue`, delayed ACK, SACK compression,
//!   ECN echo;
//! - `output.rs` — `tcp_output.c`: `tcp_write_xmit`, `tcp_transmit_skb`, `tcp_send_ack`, pacing,
//!   TCP Small Queues;
//! - `rack.rs` — `tcp_recovery.c`: RACK loss detection;
//! - `tlp.rs` — tail loss probes (`tcp_schedule_loss_probe`, `tcp_send_loss_probe`,
//!   `tcp_process_tlp_ack`) and zero-window probes (`tcp_probe_timer`);
//! - `rtt.rs` — `tcp_rtt_estimator`, `tcp_set_rto`, `tcp_update_rtt_min`;
//! - `timer.rs` — `tcp_timer.c`: retransmit, delayed-ACK and pacing timers, `tcp_enter_loss`;
//! - `info.rs` — `tcp_get_info` (`struct tcp_info`).

mod config;
mod conn;
mod endpoint;
mod info;
mod input;
mod output;
mod rack;
mod rcv_buf;
mod rcv_established;
mod recv;
mod rtt;
mod segment;
mod seq;
mod timer;
mod tlp;

pub use ccsim_cc::MinMax;
pub use config::{EcnMode, RcvBufSize, RcvWindowRules, TcpConfig};
pub use endpoint::{Endpoint, QdiscDrop, TcpState, TcpStats, RCV_SHUTDOWN, SEND_SHUTDOWN};
pub use info::{DiagTimer, DiagTimerKind, SenderSample, TcpInfo};
pub use segment::{Ecn, Segment, TcpFlags, TcpOptions};
pub use seq::SeqNum;
