//! The congestion state shared by the sender, its congestion controller and its loss-recovery
//! policy: the only fields those modules may touch (RFC 5681 / RFC 6582 / RFC 6675 vocabulary).

/// Congestion-avoidance state of the sender.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaState {
    /// Normal operation: slow start or congestion avoidance.
    Open,
    /// Fast recovery after a fast retransmit (RFC 5681 §3.2, RFC 6582, RFC 6675).
    Recovery,
    /// After a retransmission timeout until the data outstanding at the timeout is acknowledged.
    Loss,
    /// The Linux stack only: duplicate ACKs or SACKs seen, nothing deemed lost yet.
    Disorder,
    /// The Linux stack only: a window reduction without retransmission (ECN, a repaired tail loss).
    Cwr,
}

impl CaState {
    pub fn name(self) -> &'static str {
        match self {
            CaState::Open => "open",
            CaState::Recovery => "recovery",
            CaState::Loss => "loss",
            CaState::Disorder => "disorder",
            CaState::Cwr => "cwr",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Tcb {
    /// Sender maximum segment size (bytes of payload per full segment).
    pub smss: u64,
    /// Congestion window (bytes).
    pub cwnd: u64,
    /// Slow-start threshold (bytes).
    pub ssthresh: u64,
    pub ca_state: CaState,
    /// RFC 6582 `recover` / RFC 6675 RecoveryPoint: snd_max when recovery (or a timeout) began.
    pub recover: u64,
    /// Consecutive duplicate ACKs.
    pub dupacks: u32,
    /// Oldest unacknowledged sequence number.
    pub snd_una: u64,
    /// Next sequence number to send (moves back to snd_una for go-back-N after a timeout).
    pub snd_nxt: u64,
    /// Highest sequence number sent so far, plus one ("HighData" + 1).
    pub snd_max: u64,
    /// A segment (by starting sequence) to retransmit immediately, outside the window check.
    pub pending_rexmit: Option<u64>,
    /// Bytes acknowledged since the last congestion-avoidance increase (RFC 3465).
    pub bytes_acked: u64,
}

impl Tcb {
    /// RFC 5681 FlightSize: data sent but not yet cumulatively acknowledged.
    pub fn flight_size(&self) -> u64 {
        self.snd_max - self.snd_una
    }
}
