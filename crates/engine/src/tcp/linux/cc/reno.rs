//! Reno as Linux runs it (net/ipv4/tcp_cong.c `tcp_reno_*`): slow start counting packets
//! acknowledged, one packet per window in congestion avoidance, only while the window limits
//! the sending; ssthresh half of cwnd, at least 2.

use super::{CcState, LinuxCongestion};

#[derive(Debug, Clone, Default)]
pub struct Reno;

impl LinuxCongestion for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }

    /// `tcp_reno_ssthresh`.
    fn ssthresh(&mut self, tp: &CcState) -> u32 {
        (tp.cwnd >> 1).max(2)
    }

    /// `tcp_reno_cong_avoid`.
    fn cong_avoid(&mut self, tp: &mut CcState, acked: u32) {
        if let Some(acked) = tp.slow_start_first(acked) {
            let w = tp.cwnd;
            tp.cong_avoid_ai(w, acked);
        }
    }

    /// `tcp_reno_undo_cwnd`.
    fn undo_cwnd(&mut self, tp: &CcState) -> u32 {
        tp.cwnd.max(tp.prior_cwnd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reno_halves_cwnd_but_keeps_two_packets_tcp_reno_ssthresh() {
        let mut tp = CcState::new(10, 1448, 10_000);
        assert_eq!(Reno.ssthresh(&tp), 5);
        tp.cwnd = 3;
        assert_eq!(Reno.ssthresh(&tp), 2);
    }

    #[test]
    fn reno_does_not_grow_a_window_that_did_not_limit_the_sending_tcp_is_cwnd_limited() {
        let mut tp = CcState::new(10, 1448, 10_000);
        Reno.cong_avoid(&mut tp, 5);
        assert_eq!(tp.cwnd, 10);
        tp.cwnd_limited = true;
        Reno.cong_avoid(&mut tp, 5);
        assert_eq!(tp.cwnd, 15);
    }
}
