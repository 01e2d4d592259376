//! Named variants as recipes: a congestion controller, a loss-recovery policy and the options
//! they need. This is the only place that knows variant names.

use super::cc::{AimdCc, AnyCc, CubicCc};
use super::recovery::{AnyRecovery, EcnElfnRecovery, NewRenoRecovery, RenoRecovery, SackRecovery, TahoeRecovery};
use super::sender::SenderParams;
use crate::config::{Scenario, Ssthresh, Variant};
use crate::units::SimDuration;

#[derive(Debug, Clone)]
pub struct Recipe {
    pub cc: AnyCc,
    pub recovery: AnyRecovery,
    pub sender: SenderParams,
}

/// TCP(α, β) presets of seed 004: (α, β, fixed timeout).
fn aimd_preset(v: Variant) -> (f64, f64, Option<SimDuration>) {
    match v {
        Variant::Responsive => (1.24, 0.25, None),
        Variant::Smooth => (0.31, 0.875, None),
        Variant::Aggressive => (1.2, 1.0, Some(SimDuration::from_millis(50))),
        Variant::Conservative => (0.3, 0.2, Some(SimDuration::from_secs(1))),
        _ => (1.0, 0.5, None),
    }
}

impl Recipe {
    pub fn for_scenario(s: &Scenario) -> Self {
        Self::for_tcp(&s.tcp, s.smss())
    }

    /// The recipe of TCP settings `t` with sender maximum segment size `smss`.
    pub fn for_tcp(t: &crate::config::TcpConfig, smss: u32) -> Self {
        let (alpha, beta, preset_rto) = aimd_preset(t.variant);
        let cc = match t.variant {
            Variant::Cubic => AnyCc::Cubic(CubicCc::new(t.cwnd_growth)),
            _ => AnyCc::Aimd(AimdCc { growth: t.cwnd_growth, alpha: t.alpha.unwrap_or(alpha), beta: t.beta.unwrap_or(beta) }),
        };
        let recovery = match t.variant {
            Variant::Tahoe => AnyRecovery::Tahoe(TahoeRecovery),
            Variant::Reno => AnyRecovery::Reno(RenoRecovery),
            // E2TCP has its own sender (tcp::e2tcp); the recipe's recovery goes unused.
            Variant::Sack | Variant::Cubic | Variant::Ecn | Variant::E2tcp => AnyRecovery::Sack(SackRecovery),
            Variant::EcnElfn => AnyRecovery::EcnElfn(EcnElfnRecovery::new(t.dupack_threshold)),
            Variant::Newreno
            | Variant::Elfn
            | Variant::Gaimd
            | Variant::Responsive
            | Variant::Smooth
            | Variant::Aggressive
            | Variant::Conservative => AnyRecovery::NewReno(NewRenoRecovery::default()),
        };
        let sender = SenderParams {
            smss,
            initial_window: t.initial_window,
            initial_ssthresh: match t.initial_ssthresh {
                Ssthresh::Bytes(b) => b,
                Ssthresh::Infinite => u64::MAX / 4,
            },
            dupthresh: t.dupack_threshold,
            limited_transmit: t.limited_transmit,
            sack: t.sack_enabled(),
            timestamps: t.timestamps,
            initial_rto: t.initial_rto,
            min_rto: t.min_rto,
            max_rto: t.max_rto,
            clock_granularity: t.clock_granularity,
            timer_tick: t.timer_tick,
            fixed_rto: t.fixed_rto.or(preset_rto),
            rtt_sampling: t.rtt_sampling,
            ecn: t.ecn_enabled(),
            elfn: t.elfn_enabled(),
            predict_first: t.header_prediction == crate::config::HeaderPrediction::PredictFirst,
            elfn_probe_interval: t.elfn_probe_interval,
            max_cwnd: t.max_window(),
            send_buffer: t.send_buffer.unwrap_or(u64::MAX / 4),
        };
        Self { cc, recovery, sender }
    }
}
