//! The application's side of a sending connection, shared by every sender: how far the
//! application has written, whether it has closed, the peer's window and the socket send buffer,
//! and when the last written byte was acknowledged. Senders keep their own sequence state and ask
//! this what they may send.
//!
//! Sequence space: the SYN takes sequence number ISS = 0, application bytes follow, and the FIN
//! takes the number after the last byte.

use crate::units::SimTime;

/// Initial send sequence number.
pub const ISS: u64 = 0;

#[derive(Debug, Clone)]
pub struct SendStream {
    /// The sender may transmit (the active side at once, the passive side once a SYN arrived).
    open: bool,
    /// Sequence number just past the last application byte.
    data_end: u64,
    /// The application has closed: a FIN follows the data.
    closing: bool,
    /// Our FIN was acknowledged.
    pub fin_acked: bool,
    /// Peer's advertised receive window (bytes).
    pub rwnd: u64,
    /// Socket send buffer: what is sent and unacknowledged stays within it.
    send_buffer: u64,
    /// When the last application byte was acknowledged.
    data_acked_at: Option<SimTime>,
}

impl SendStream {
    /// A stream with `app_bytes` written up front; the peer's window is one segment of `smss`
    /// until it advertises one.
    pub fn new(app_bytes: u64, smss: u64, send_buffer: u64) -> Self {
        Self {
            open: false,
            data_end: ISS + 1 + app_bytes,
            closing: false,
            fin_acked: false,
            rwnd: smss,
            send_buffer,
            data_acked_at: if app_bytes == 0 { Some(SimTime::ZERO) } else { None },
        }
    }

    /// Allow transmission: the active opener at start, the passive one on the peer's SYN.
    pub fn open(&mut self, peer_window: u64) {
        self.open = true;
        self.rwnd = peer_window.max(1);
    }
    pub fn is_open(&self) -> bool {
        self.open
    }

    /// The application is done: send a FIN after the data.
    pub fn close(&mut self) {
        self.closing = true;
    }
    pub fn is_closing(&self) -> bool {
        self.closing
    }

    /// The application writes `bytes` more (before it closes).
    pub fn write(&mut self, bytes: u64) {
        debug_assert!(!self.closing, "write after close");
        if bytes > 0 {
            self.data_end += bytes;
            self.data_acked_at = None;
        }
    }

    /// The application stops supplying data: what was already sent (up to `snd_max`) is the
    /// whole stream, and a FIN follows it.
    pub fn stop_writing(&mut self, now: SimTime, snd_una: u64, snd_max: u64) {
        self.data_end = self.data_end.min(snd_max.max(ISS + 1));
        if self.data_acked_at.is_none() && snd_una >= self.data_end {
            self.data_acked_at = Some(now);
        }
        self.closing = true;
    }

    pub fn data_end(&self) -> u64 {
        self.data_end
    }

    /// Application bytes written and not yet acknowledged (below `snd_una`): what the send
    /// buffer holds.
    pub fn unacked_data(&self, snd_una: u64) -> u64 {
        let written = self.data_end - (ISS + 1);
        written - snd_una.saturating_sub(ISS + 1).min(written)
    }

    /// A cumulative acknowledgment up to `ack` arrived at `now`.
    pub fn on_cumulative_ack(&mut self, ack: u64, now: SimTime) {
        if self.data_acked_at.is_none() && ack >= self.data_end {
            self.data_acked_at = Some(now);
        }
    }
    pub fn data_acked_at(&self) -> Option<SimTime> {
        self.data_acked_at
    }

    /// Something remains to be sent from `next` on: data, or the FIN (`snd_max` not past it).
    pub fn has_unsent(&self, next: u64, snd_max: u64) -> bool {
        next < self.data_end || (self.closing && snd_max <= self.data_end)
    }

    /// Length and FIN flag of a first transmission starting at `next` (the SYN has neither).
    pub fn next_segment(&self, next: u64, smss: u64) -> (u32, bool) {
        if next == ISS {
            return (0, false);
        }
        let len = (self.data_end - next).min(smss) as u32;
        let fin = self.closing && next + len as u64 == self.data_end;
        (len, fin)
    }

    /// New data must fit the peer's window and the send buffer, which still holds every
    /// unacknowledged byte: the sequence number new data may not pass.
    pub fn send_edge(&self, snd_una: u64) -> u64 {
        snd_una + self.rwnd.max(1).min(self.send_buffer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unacked_data_counts_written_bytes_above_snd_una_excluding_syn_and_fin() {
        let mut s = SendStream::new(3000, 1000, u64::MAX / 4);
        assert_eq!(s.unacked_data(ISS), 3000);
        assert_eq!(s.unacked_data(ISS + 1 + 1000), 2000);
        // An acknowledgment of the FIN (one past the data) leaves nothing.
        assert_eq!(s.unacked_data(ISS + 1 + 3000 + 1), 0);
        s.write(500);
        assert_eq!(s.unacked_data(ISS + 1 + 3000), 500);
    }

    #[test]
    fn stopping_trims_the_stream_to_what_was_sent_and_closes_rfc9293_s3_10_4() {
        let mut s = SendStream::new(10_000, 1000, u64::MAX / 4);
        s.stop_writing(SimTime(5), ISS + 1 + 2000, ISS + 1 + 2000);
        assert!(s.is_closing());
        assert_eq!(s.data_end(), ISS + 1 + 2000);
        assert_eq!(s.data_acked_at(), Some(SimTime(5)));
        // The FIN goes at the end of the data.
        assert_eq!(s.next_segment(ISS + 1 + 1500, 1000), (500, true));
    }

    #[test]
    fn the_send_edge_is_the_smaller_of_the_peer_window_and_the_send_buffer() {
        let mut s = SendStream::new(100_000, 1000, 4000);
        s.open(65_535);
        assert_eq!(s.send_edge(1), 4001);
        s.open(0);
        assert_eq!(s.send_edge(1), 2, "a closed window still lets one byte probe");
    }
}
