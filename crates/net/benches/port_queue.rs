//! A switch port's queue as the simulator runs it (lazy: arrival-time AQM, departures computed
//! on arrival): each operation offers one 1500-byte ECT packet to a step-marking DCTCP queue
//! (K = 65, 1000-packet limit) holding about 100 packets, and retires the head, as a saturated
//! bottleneck does.

use ccsim_engine::{microbench, Pool, Rng, SimTime};
use ccsim_net::{
    Aqm, ClassSpec, EcnMarkPoint, EnqueueResult, LinkNext, NodeId, NonEctPolicy, Packet, Payload, PortQueue,
    QueueLimit, QueueSpec, Scheduler, Unit,
};
use ccsim_tcp::{Ecn, Segment};
use std::hint::black_box;

fn main() {
    let spec = QueueSpec {
        classes: vec![ClassSpec {
            limit: QueueLimit { value: 1000, unit: Unit::Packets },
            aqm: Aqm::Step { k: 65, unit: Unit::Packets, at: EcnMarkPoint::Enqueue, non_ect: NonEctPolicy::Drop },
            name: "dctcp".into(),
            dscp: vec![],
        }],
        scheduler: Scheduler::StrictPriority,
        fq: None,
    };
    let mut q = PortQueue::new(&spec);
    assert!(q.supports_lazy());
    let mut pool: Pool<Packet> = Pool::new();
    let mut rng = Rng::new(1, 0);
    let pkt = Packet {
        dst: NodeId(1),
        size: 1500,
        path: Packet::NO_PATH,
        dscp: 0,
        ecn: Ecn::Ect0,
        hop: 0,
        link_next: LinkNext::NONE,
        flow_hash: 7,
        src: NodeId(0),
        payload: Payload::Tcp { conn: 0, to_server: true, seg: Segment { len: 1448, ..Segment::default() } },
    };
    let mut now = SimTime::ZERO;
    let offer = |q: &mut PortQueue, pool: &mut Pool<Packet>, rng: &mut Rng, now: SimTime| {
        let id = pool.alloc(pkt);
        let r = q.enqueue_counted(pool.get_mut(id), now, || 10_000_000_000, rng);
        pool.free(id);
        r
    };
    for _ in 0..100 {
        offer(&mut q, &mut pool, &mut rng, now);
    }
    microbench::run("port queue: enqueue (step marking) + retire head", 1000, || {
        for _ in 0..1000 {
            now += SimTime::from_ns(1200);
            let r = offer(&mut q, &mut pool, &mut rng, now);
            assert_eq!(black_box(r), EnqueueResult::Queued);
            q.retire_head(now, 1500);
        }
    });
}
