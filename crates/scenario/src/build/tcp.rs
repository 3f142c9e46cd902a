//! `[tcp]`: the socket settings of every flow's two ends.

use crate::error::{Error, Result};
use crate::spec;
use crate::units::{bytes, duration, DurationRange::Positive};
use ccsim_cc::{BbrParams, CcKind, CcParams, CubicParams, DctcpParams, FreebsdDctcpParams, NvParams};
use ccsim_tcp::{EcnMode, RcvBufSize, TcpConfig};

impl From<spec::TcpEcn> for EcnMode {
    fn from(e: spec::TcpEcn) -> Self {
        match e {
            spec::TcpEcn::Off => EcnMode::Off,
            spec::TcpEcn::On => EcnMode::On,
            spec::TcpEcn::Passive => EcnMode::Passive,
        }
    }
}

impl From<EcnMode> for spec::TcpEcn {
    fn from(e: EcnMode) -> Self {
        match e {
            EcnMode::Off => spec::TcpEcn::Off,
            EcnMode::On => spec::TcpEcn::On,
            EcnMode::Passive => spec::TcpEcn::Passive,
        }
    }
}

/// The settings of `[tcp]` for a socket using `cc`, every value checked.
pub(super) fn tcp_config(t: &spec::Tcp, cc: CcKind) -> Result<TcpConfig> {
    if !(88..=65535).contains(&t.mss) {
        return Err(Error::new("tcp.mss", format!("{} is out of range; allowed 88..=65535", t.mss)));
    }
    if !(1..=100_000).contains(&t.init_cwnd) {
        return Err(Error::new(
            "tcp.init_cwnd",
            format!("{} is out of range; allowed 1..=100000 packets", t.init_cwnd),
        ));
    }
    let ce_ack_now = t.dctcp.ce_ack == spec::AckTiming::Now;
    let dctcp = DctcpParams { shift_g: t.dctcp.shift_g, alpha_on_init: t.dctcp.alpha_on_init, ce_ack_now };
    dctcp.validate().map_err(|m| Error::new("tcp.dctcp", m))?;
    let cubic = CubicParams {
        beta: Some(t.cubic.beta),
        fast_convergence: Some(t.cubic.fast_convergence),
        tcp_friendliness: Some(t.cubic.tcp_friendliness),
        bic_scale: Some(t.cubic.bic_scale),
        hystart: Some(t.cubic.hystart),
        hystart_detect: Some(t.cubic.hystart_detect),
        hystart_low_window: Some(t.cubic.hystart_low_window),
        ..CubicParams::default()
    };
    cubic.validate().map_err(|m| Error::new("tcp.cubic", m))?;
    let f = &t.freebsd_dctcp;
    let freebsd_dctcp = FreebsdDctcpParams { alpha: f.alpha, shift_g: f.shift_g, slowstart: f.slowstart };
    freebsd_dctcp.validate().map_err(|m| Error::new("tcp.freebsd_dctcp", m))?;
    let bbr = BbrParams::from(&t.bbr);
    bbr.validate().map_err(|m| Error::new("tcp.bbr", m))?;
    let nv = NvParams::from(&t.nv);
    nv.validate().map_err(|m| Error::new("tcp.nv", m))?;
    let rcvbuf = match &t.rcvbuf {
        crate::units::Quantity::Str(s) if s == "auto" => RcvBufSize::Auto,
        q => {
            let n = bytes(q, "tcp.rcvbuf")
                .map_err(|_| Error::new("tcp.rcvbuf", "\"auto\" or a size from 1 byte to 1GiB"))?;
            if n == 0 || n > 1 << 30 {
                return Err(Error::new("tcp.rcvbuf", "\"auto\" or a size from 1 byte to 1GiB"));
            }
            RcvBufSize::Locked(n as u32)
        }
    };
    let mut rmem = [0u32; 3];
    for (i, q) in t.rmem.iter().enumerate() {
        let field = format!("tcp.rmem[{i}]");
        let n = bytes(q, &field)?;
        if n == 0 || n > i32::MAX as u64 {
            return Err(Error::new(field, "a size from 1 byte to 2GiB - 1"));
        }
        rmem[i] = n as u32;
    }
    if rmem[0] > rmem[1] || rmem[1] > rmem[2] {
        return Err(Error::new("tcp.rmem", "min <= default <= max"));
    }
    if ![100, 250, 300, 1000].contains(&t.hz) {
        return Err(Error::new("tcp.hz", "one of 100, 250, 300, 1000 (the kernel's CONFIG_HZ)"));
    }
    Ok(TcpConfig {
        cc,
        hz: t.hz,
        cwr_ack_now: t.cwr_ack == spec::AckTiming::Now,
        cc_params: CcParams { cubic, dctcp, freebsd_dctcp, bbr, nv },
        // FreeBSD never sends an ECT SYN (and a Linux receiver refuses ECN to one unless its CC
        // needs ECN).
        syn_ect: t.syn_ect && cc != CcKind::FreebsdDctcp,
        advmss: t.mss,
        init_cwnd: t.init_cwnd,
        rto_min: duration(&t.rto_min, "tcp.rto_min", Positive)?,
        rto_init: duration(&t.rto_init, "tcp.rto_init", Positive)?,
        delack_min: duration(&t.delack_min, "tcp.delack_min", Positive)?,
        delack_max: duration(&t.delack_max, "tcp.delack_max", Positive)?,
        ecn: t.ecn.into(),
        sack: t.sack,
        timestamps: t.timestamps,
        window_scaling: t.window_scaling,
        rcvbuf,
        rmem,
        slow_start_after_idle: t.slow_start_after_idle,
        pacing: t.pacing,
        nodelay: t.nodelay,
        tlp: t.tlp,
        rack: t.rack,
        ..TcpConfig::default()
    })
}
