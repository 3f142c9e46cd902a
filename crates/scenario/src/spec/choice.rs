//! The closed sets of the scenario format: every field that takes one of a fixed list of words
//! is one of these enums, parsed once when the file is read. A word outside the list is an error
//! naming the field and the words allowed (see [`crate::parse`]).

use ccsim_cc::CcKind;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serializer};

/// A value spelled as one of a fixed list of words in scenario files.
pub trait Choice: Copy + 'static {
    /// Every value, in the order errors list them.
    fn all() -> &'static [Self];
    /// The word for this value in scenario files (and in `config.resolved.toml`).
    fn name(self) -> &'static str;
    fn from_name(word: &str) -> Option<Self> {
        Self::all().iter().copied().find(|v| v.name() == word)
    }
    /// The error message for a word not in the list.
    fn unknown(word: &str) -> String {
        format!("\"{word}\" is not allowed; expected one of {}", quoted_names::<Self>())
    }
}

/// The allowed words, quoted and separated by commas: `"a", "b", "c"`.
pub fn quoted_names<T: Choice>() -> String {
    T::all().iter().map(|v| format!("\"{}\"", v.name())).collect::<Vec<_>>().join(", ")
}

/// Serde by word, for `#[serde(with = "choice")]` on fields of a [`Choice`] type defined
/// elsewhere ([`CcKind`]); the enums of this module implement serde themselves.
pub mod by_name {
    use super::*;

    pub fn serialize<T: Choice, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(v.name())
    }

    pub fn deserialize<'de, T: Choice, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
        let word = String::deserialize(d)?;
        T::from_name(&word).ok_or_else(|| D::Error::custom(T::unknown(&word)))
    }

    /// The same for an optional field.
    pub mod option {
        use super::*;

        pub fn serialize<T: Choice, S: Serializer>(v: &Option<T>, s: S) -> Result<S::Ok, S::Error> {
            match v {
                Some(v) => s.serialize_some(v.name()),
                None => s.serialize_none(),
            }
        }

        pub fn deserialize<'de, T: Choice, D: Deserializer<'de>>(d: D) -> Result<Option<T>, D::Error> {
            match Option::<String>::deserialize(d)? {
                Some(word) => T::from_name(&word).map(Some).ok_or_else(|| D::Error::custom(T::unknown(&word))),
                None => Ok(None),
            }
        }
    }
}

impl Choice for CcKind {
    fn all() -> &'static [Self] {
        &CcKind::ALL
    }
    fn name(self) -> &'static str {
        CcKind::name(self)
    }
    fn unknown(word: &str) -> String {
        format!("unknown congestion control \"{word}\"; expected one of {}", quoted_names::<Self>())
    }
}

/// An enum of the scenario format: each variant with its word.
macro_rules! choice {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $variant:ident = $word:literal,)+ }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum $name {
            $($(#[$vm])* $variant,)+
        }

        impl Choice for $name {
            fn all() -> &'static [Self] {
                &[$($name::$variant,)+]
            }
            fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $word,)+
                }
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                by_name::serialize(self, s)
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                by_name::deserialize(d)
            }
        }
    };
}

choice! {
    /// `net.ipv4.tcp_ecn` (`tcp.ecn`, a flow's `ecn` and `server_ecn`).
    TcpEcn {
        /// 0: never request or accept ECN (unless the CC needs ECN).
        Off = "off",
        /// 1: request ECN on outgoing connections and accept it on incoming ones.
        On = "on",
        /// 2 (Linux's default): accept ECN when the peer requests it, do not request it.
        Passive = "passive",
    }
}

choice! {
    /// When a receiver ACKs an event (`tcp.cwr_ack`, `tcp.dctcp.ce_ack`): at once, or like any
    /// other data under delayed ACKs.
    AckTiming {
        Now = "now",
        Delayed = "delayed",
    }
}

impl AckTiming {
    /// `Now` when `now`, as the simulator's `*_ack_now` flags have it.
    pub fn now_if(now: bool) -> Self {
        if now {
            AckTiming::Now
        } else {
            AckTiming::Delayed
        }
    }
}

choice! {
    /// How a queue picks between its classes (`queues.<name>.scheduler`).
    SchedulerKind {
        /// Strict priority, classes in order.
        Prio = "prio",
        /// Round robin, one packet per class in turn.
        Rr = "rr",
        /// Linux's fq qdisc: a queue per socket, no classes.
        Fq = "fq",
    }
}

choice! {
    /// Unit of a class's `limit`, `k`, `min` and `max`.
    QueueUnit {
        Packets = "packets",
        Bytes = "bytes",
    }
}

choice! {
    /// A class's active queue management (`aqm`).
    AqmKind {
        Droptail = "droptail",
        /// ECN mark above the threshold K.
        Step = "step",
        /// tc-red.
        Red = "red",
    }
}

choice! {
    /// Where step marking compares the queue with K (`mark_at`).
    MarkAt {
        Enqueue = "enqueue",
        Dequeue = "dequeue",
    }
}

choice! {
    /// What step marking does with a packet without ECT above K (`non_ect`).
    NonEct {
        Drop = "drop",
        Queue = "queue",
    }
}

choice! {
    /// The shape of the network (`topology.type`).
    TopologyKind {
        Star = "star",
        Dumbbell = "dumbbell",
        Fattree = "fattree",
        Custom = "custom",
    }
}

choice! {
    /// A node of a custom topology (`topology.nodes[].kind`).
    NodeKind {
        Host = "host",
        Switch = "switch",
    }
}

choice! {
    /// What a flow sends (`flows[].kind`).
    FlowKind {
        /// Until `stop` or the end of the run.
        Bulk = "bulk",
        /// `size` bytes, then close.
        Transfer = "transfer",
        /// Back-to-back requests of `size` bytes.
        Rpc = "rpc",
    }
}

choice! {
    /// Generated traffic (`traffic.pattern`).
    TrafficPattern {
        Permutation = "permutation",
    }
}

choice! {
    /// What a `[[workloads]]` entry generates (`workloads[].kind`).
    WorkloadKind {
        /// Open-loop Poisson flow arrivals per sender at a target load.
        Poisson = "poisson",
        /// Rounds of `fan_in` synchronised responses to one receiver.
        Incast = "incast",
        /// Partition/aggregate queries: every host an aggregator asking `fan_in` workers over
        /// persistent connections.
        Query = "query",
    }
}

choice! {
    /// Where a workload's flows may go (`workloads[].destinations`). A host's rack is the switch
    /// it is attached to; a pod is the racks that share an upstream switch (a fat tree's pods).
    Destinations {
        /// Any other host.
        Any = "any",
        SameRack = "same-rack",
        OtherRack = "other-rack",
        SamePod = "same-pod",
        OtherPod = "other-pod",
    }
}

choice! {
    /// The IP ECN field of ping packets (`pings[].ecn`).
    PingEcn {
        NotEct = "not-ect",
        Ect0 = "ect0",
        Ect1 = "ect1",
    }
}
