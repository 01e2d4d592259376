//! From a variant's registry entry and the scenario's TCP settings to the parts an endpoint is
//! built of: the sender (with its controller and recovery policy) and the receiver's ACK policy.

use super::cc::{AimdCc, AnyCc, CubicCc};
use super::e2tcp::E2tcpSender;
use super::recovery::{AnyRecovery, EcnElfnRecovery, NewRenoRecovery, RenoRecovery, SackRecovery, TahoeRecovery};
use super::send_half::AnySender;
use super::sender::{Sender, SenderParams};
use super::linux::cc::{AnyLinuxCc, INFINITE_SSTHRESH};
use super::linux::sender::{LinuxParams, LinuxSender};
use super::variant::{Controller, LinuxModule, Recovery, SenderKind, VariantInfo};
use crate::config::{Ssthresh, Stack, TcpConfig};

/// Seed of BBR's PROBE_BW phase draw, mixed with the transfer size so flows differ.
const BBR_PHASE_SEED: u64 = 0x6262_725f_7068_6173;

/// What the variant asks of the receiving half and the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AckPolicy {
    pub sack: bool,
    /// At most this many SACK blocks per ACK (`None`: as many as the option space holds).
    pub max_sack_blocks: Option<usize>,
    pub ack_every_packet: bool,
    /// Segments carry E2TCP's compact header (seed 001 §2.3).
    pub compact_headers: bool,
}

#[derive(Debug, Clone)]
pub struct Recipe {
    pub info: &'static VariantInfo,
    pub sender: SenderParams,
    pub ack: AckPolicy,
}

impl Recipe {
    /// The recipe of TCP settings `t` with sender maximum segment size `smss`.
    pub fn for_tcp(t: &TcpConfig, smss: u32) -> Self {
        let info = t.variant.info();
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
            fixed_rto: t.fixed_rto.or(info.preset_fixed_rto),
            rtt_sampling: t.rtt_sampling,
            ecn: t.ecn_enabled(),
            elfn: t.elfn_enabled(),
            predict_first: t.header_prediction == crate::config::HeaderPrediction::PredictFirst,
            elfn_probe_interval: t.elfn_probe_interval,
            max_cwnd: t.max_window(),
            send_buffer: t.send_buffer.unwrap_or(u64::MAX / 4),
        };
        let ack = AckPolicy {
            sack: sender.sack,
            max_sack_blocks: info.max_sack_blocks,
            ack_every_packet: info.ack_every_packet,
            compact_headers: info.compact_headers && t.e2tcp.as_ref().is_none_or(|c| c.header_compression),
        };
        Self { info, sender, ack }
    }

    /// The sender of this recipe, with `app_bytes` to send.
    pub fn build_sender(&self, t: &TcpConfig, app_bytes: u64) -> AnySender {
        if let (Some(Stack::Linux6), Some(module)) = (t.stack, self.info.linux) {
            return AnySender::Linux(Box::new(self.build_linux(t, module, app_bytes)));
        }
        match self.info.sender {
            SenderKind::Tcp { cc, recovery } => {
                let cc = match cc {
                    Controller::Aimd { alpha, beta } => {
                        AnyCc::Aimd(AimdCc { growth: t.cwnd_growth, alpha: t.alpha.unwrap_or(alpha), beta: t.beta.unwrap_or(beta) })
                    }
                    Controller::Cubic => AnyCc::Cubic(CubicCc::new(t.cwnd_growth)),
                };
                let recovery = match recovery {
                    Recovery::Tahoe => AnyRecovery::Tahoe(TahoeRecovery),
                    Recovery::Reno => AnyRecovery::Reno(RenoRecovery),
                    Recovery::NewReno => AnyRecovery::NewReno(NewRenoRecovery::default()),
                    Recovery::Sack => AnyRecovery::Sack(SackRecovery),
                    Recovery::EcnElfn => AnyRecovery::EcnElfn(EcnElfnRecovery::new(t.dupack_threshold)),
                };
                AnySender::Tcp(Sender::new(self.sender.clone(), cc, recovery, app_bytes))
            }
            SenderKind::E2tcp => AnySender::E2tcp(E2tcpSender::new(t, self.sender.smss, app_bytes)),
            SenderKind::Linux => unreachable!("validation keeps Linux-only variants on the Linux stack"),
        }
    }

    /// The Linux stack's sender (`tcp::linux`) running `module`.
    fn build_linux(&self, t: &TcpConfig, module: LinuxModule, app_bytes: u64) -> LinuxSender {
        let smss = self.sender.smss;
        let params = LinuxParams {
            smss,
            initial_window: t.initial_window,
            initial_ssthresh: match t.initial_ssthresh {
                Ssthresh::Bytes(b) => ((b / smss as u64).max(2)).min(INFINITE_SSTHRESH as u64) as u32,
                Ssthresh::Infinite => INFINITE_SSTHRESH,
            },
            sack: self.sender.sack,
            timestamps: t.timestamps,
            ecn: self.sender.ecn,
            initial_rto: t.initial_rto,
            rto_min: t.min_rto,
            rto_max: t.max_rto,
            jiffy: t.timer_tick,
            reordering: t.dupack_threshold,
            cwnd_clamp: INFINITE_SSTHRESH,
            send_buffer: self.sender.send_buffer,
            slow_start_after_idle: true,
            pacing: t.pacing,
        };
        let cc = match module {
            LinuxModule::Reno => AnyLinuxCc::Reno(Default::default()),
            LinuxModule::Cubic => AnyLinuxCc::Cubic(Box::default()),
            // The kernel draws PROBE_BW's first phase at random; a fixed seed keeps runs
            // reproducible (the phase is a connection's, not the scenario's, randomness).
            LinuxModule::Bbr => AnyLinuxCc::Bbr(Box::new(super::linux::cc::Bbr::new(BBR_PHASE_SEED ^ app_bytes))),
        };
        LinuxSender::new(params, cc, app_bytes)
    }
}
