//! Named variants as recipes: a congestion controller, a loss-recovery policy and the options
//! they need. This is the only place that knows variant names.

use super::cc::{AnyCc, RenoCc};
use super::recovery::{AnyRecovery, NewRenoRecovery, RenoRecovery, SackRecovery, TahoeRecovery};
use super::sender::SenderParams;
use crate::config::{Scenario, Ssthresh, Variant};

#[derive(Debug, Clone)]
pub struct Recipe {
    pub cc: AnyCc,
    pub recovery: AnyRecovery,
    pub sender: SenderParams,
}

impl Recipe {
    pub fn for_scenario(s: &Scenario) -> Self {
        let t = &s.tcp;
        let cc = AnyCc::Reno(RenoCc { growth: t.cwnd_growth });
        let recovery = match t.variant {
            Variant::Tahoe => AnyRecovery::Tahoe(TahoeRecovery),
            Variant::Reno => AnyRecovery::Reno(RenoRecovery),
            Variant::Newreno => AnyRecovery::NewReno(NewRenoRecovery::default()),
            Variant::Sack => AnyRecovery::Sack(SackRecovery),
        };
        let sender = SenderParams {
            smss: s.smss(),
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
        };
        Self { cc, recovery, sender }
    }
}
