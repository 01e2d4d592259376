//! The DCF's A-MPDU exchange with block ack (IEEE 802.11-2020 10.12, 10.25; docs/models/wifi.md
//! "A-MPDU and block ack"): gathering the MPDUs of one PPDU, the recipient's per-MPDU reception,
//! reordering and BlockAck, the originator's retransmissions and BlockAckReq. The A-MPDU limits
//! and the reordering buffer are `net::wifi::ampdu`'s.

use super::*;

impl<P: Copy> Dcf<P> {
    /// The oldest sequence number `i` still holds for `to`, or the next it will use: the
    /// starting sequence number of its BlockAckReq.
    #[cold]
    pub(super) fn window_start(&self, i: usize, to: usize) -> u16 {
        let s = &self.stations[i];
        s.queue.iter().find(|f| f.to == to).map_or(s.next_seq_to[to], |f| f.seq)
    }

    pub(super) fn ampdu_len(&self, i: usize) -> u32 {
        self.stations[i].ampdu_len
    }

    /// The medium is won: gather the head frame's recipient's MPDUs in queue order, within the
    /// block ack window and the A-MPDU limits (10.12.2), and send them, after RTS/CTS when the
    /// A-MPDU is longer than the RTS threshold.
    #[cold]
    pub(super) fn start_ampdu(&mut self, i: usize, now: SimTime) {
        let ht = self.cfg.ht.expect("aggregation on an HT or VHT channel");
        let overhead = self.mpdu(0);
        let mut b = ampdu::Builder::new(&ht, self.ampdu_max);
        let s = &mut self.stations[i];
        s.job = Job::Ampdu;
        s.batch.clear();
        let head = *s.queue.front().expect("contending with a frame");
        for (k, f) in s.queue.iter().enumerate() {
            if f.to != head.to {
                continue;
            }
            if ampdu::seq_offset(f.seq, head.seq) >= ampdu::WINDOW || !b.push(&ht, f.bytes + overhead) {
                break;
            }
            s.batch.push(k);
        }
        s.ampdu_len = b.len();
        if self.cfg.rts_threshold.is_some_and(|t| b.len() > t) {
            s.counters.rts_sent += 1;
            let sifs = self.timing.sifs.0;
            let nav = 3 * sifs + self.control_air(FrameKind::Cts).0 + self.psdu_air(b.len()).0 + self.control_air(FrameKind::BlockAck).0;
            self.start_tx(i, now, FrameKind::Rts, head.to, SimDuration(nav), 0, head.seq, head.retry);
        } else {
            self.send_ampdu(i, now);
        }
    }

    pub(super) fn send_ampdu(&mut self, i: usize, now: SimTime) {
        let s = &mut self.stations[i];
        let (mut bytes, mut retried, mut retries) = (0u64, 0u64, 0u64);
        for &k in &s.batch {
            let f = &s.queue[k];
            bytes += f.bytes as u64;
            if f.retry {
                retried += f.bytes as u64;
                retries += 1;
            }
        }
        let head = s.queue[s.batch[0]];
        s.ampdu_retry_ns = 0;
        let c = &mut s.counters;
        c.ampdus_sent += 1;
        c.ampdu_mpdus += s.batch.len() as u64;
        c.data_attempts += s.batch.len() as u64;
        c.retries += retries;
        let nav = SimDuration(self.timing.sifs.0 + self.control_air(FrameKind::BlockAck).0);
        self.start_tx(i, now, FrameKind::Ampdu, head.to, nav, bytes as u32, head.seq, false);
        if retried > 0 {
            // The meters charge retransmissions their share of the airtime, by bytes.
            let retry_ns = self.psdu_air(self.ampdu_len(i)).0 * retried / bytes.max(1);
            self.stations[i].ampdu_retry_ns = retry_ns;
            self.out.push(Out::RetryShare { station: i, role: AirRole::Transmit, start: now, end: SimTime(now.0 + retry_ns) });
        }
    }

    /// `i`'s A-MPDU ended: the first transmission of each of its MPDUs is over.
    #[cold]
    pub(super) fn ampdu_sent(&mut self, i: usize, start: SimTime) {
        let s = &mut self.stations[i];
        for &k in &s.batch {
            let f = &mut s.queue[k];
            if !f.sent {
                f.sent = true;
                self.out.push(Out::Sent { from: i, to: f.to, payload: f.payload, start });
            }
        }
    }

    /// Station `h` received `i`'s A-MPDU begun at `start`: the part that carried retransmitted
    /// MPDUs is charged as retries (from when it woke, if it woke during it).
    #[cold]
    pub(super) fn ampdu_retry_share(&mut self, i: usize, h: usize, start: SimTime) {
        let end = SimTime(start.0 + self.stations[i].ampdu_retry_ns);
        let st = &self.stations[h];
        // Only a radio that received it (awake, not sending, hearing the sender).
        let heard = self.cfg.hears[h][i] && st.awake && st.on_air.is_none();
        let woke_at = st.woke_at;
        if heard && end > woke_at && end > start {
            self.out.push(Out::RetryShare { station: h, role: AirRole::Receive, start: start.max(woke_at), end });
        }
    }

    /// Which MPDUs of `i`'s A-MPDU survive the channel's impairments at the recipient (bit k:
    /// the k-th): each is lost or not on its own.
    #[cold]
    pub(super) fn ampdu_verdicts(&mut self, i: usize, now: SimTime) -> u64 {
        let overhead = self.mpdu(0);
        let mut got = 0;
        for (bit, &k) in self.stations[i].batch.iter().enumerate() {
            let bytes = self.stations[i].queue[k].bytes + overhead;
            if !matches!(impair::apply(&mut self.impairments, now, bytes), Verdict::Drop(_)) {
                got |= 1 << bit;
            }
        }
        got
    }

    /// Station `h` decoded the MPDUs `got` of `from`'s A-MPDU: into the reordering buffer,
    /// up what is in order, and a compressed BlockAck after SIFS acknowledging every MPDU of it
    /// the recipient has (10.25.6).
    #[cold]
    pub(super) fn receive_ampdu(&mut self, h: usize, from: usize, got: u64, now: SimTime) {
        let mut up = std::mem::take(&mut self.up);
        let (mut bitmap, mut more) = (0u64, false);
        for bit in 0..self.stations[from].batch.len() {
            let f = self.stations[from].queue[self.stations[from].batch[bit]];
            more = f.more;
            let r = &mut self.stations[h].reorder[from];
            if got & (1 << bit) != 0 {
                if !r.receive(f.seq, f.payload, &mut up) {
                    self.stations[h].counters.duplicates += 1;
                }
                bitmap |= 1 << bit;
            } else if r.has(f.seq) {
                bitmap |= 1 << bit;
            }
        }
        self.pass_up(h, from, &mut up);
        self.up = up;
        self.stations[h].response_bitmap = bitmap;
        self.respond_after_sifs(h, now, FrameKind::BlockAck, from, SimDuration::ZERO);
        if self.stations[h].ps {
            self.buffered_frame_received(h, now, more);
        }
        self.traffic(h, now);
        self.data_from(h, from, now);
    }

    /// The reordering buffer of `h` for `from` released `up`: deliver each, and free those the
    /// originator is done with.
    pub(super) fn pass_up(&mut self, h: usize, from: usize, up: &mut Vec<Held<P>>) {
        for held in up.drain(..) {
            self.stations[h].counters.delivered += 1;
            self.out.push(Out::Delivered { from, to: h, payload: held.payload });
            if held.sender_done {
                self.out.push(Out::Acked { from, payload: held.payload });
            }
        }
    }

    /// The BlockAck for `i`'s A-MPDU came: MPDUs it acknowledges leave the queue, the others
    /// count a failure (10.25.3).
    #[cold]
    pub(super) fn block_ack_received(&mut self, i: usize, bitmap: u64, now: SimTime) {
        let s = &mut self.stations[i];
        s.short_retries = 0;
        s.long_retries = 0;
        s.cw = self.timing.cw_min;
        self.settle_ampdu(i, bitmap, now);
        self.traffic(i, now);
        self.after_exchange(i, now);
    }

    /// No CTS or no BlockAck: every MPDU of the A-MPDU failed once (the whole PPDU is taken as
    /// unacknowledged; no BlockAckReq asks what arrived).
    #[cold]
    pub(super) fn ampdu_failed(&mut self, i: usize, now: SimTime) {
        let s = &mut self.stations[i];
        s.awaiting = None;
        s.deadline_passed = false;
        s.cw = (2 * s.cw + 1).min(self.timing.cw_max);
        self.settle_ampdu(i, 0, now);
        self.after_exchange(i, now);
    }

    /// Acknowledged MPDUs (bits of `acked`) are done; the others fail once and are discarded at
    /// their retry limit, after which a BlockAckReq moves the recipient's window past them.
    #[cold]
    pub(super) fn settle_ampdu(&mut self, i: usize, acked: u64, _now: SimTime) {
        let (short, long) = (self.cfg.short_retry_limit, self.cfg.long_retry_limit);
        let n = self.stations[i].batch.len();
        let to = self.stations[i].queue[self.stations[i].batch[0]].to;
        let mut leave = 0u64;
        for bit in 0..n {
            let k = self.stations[i].batch[bit];
            let f = self.stations[i].queue[k];
            let limit = if self.uses_rts(f.bytes) { long } else { short };
            let done = acked & (1 << bit) != 0;
            if !done && f.failures + 1 < limit {
                let f = &mut self.stations[i].queue[k];
                f.failures += 1;
                f.retry |= f.sent;
                continue;
            }
            leave |= 1 << bit;
            if !done {
                self.stations[i].counters.drops_retry_limit += 1;
                self.stations[i].bar[to] = Bar::Needed;
            }
            // A copy the recipient holds for reordering is freed when it goes up.
            if let Some(held) = self.stations[to].reorder.get_mut(i).and_then(|r| r.held_mut(f.seq)) {
                held.sender_done = true;
            } else if done {
                self.out.push(Out::Acked { from: i, payload: f.payload });
            } else {
                self.out.push(Out::Dropped { from: i, to, payload: f.payload, reason: DropReason::RetryLimit });
            }
        }
        let s = &mut self.stations[i];
        for bit in (0..n).rev() {
            if leave & (1 << bit) != 0 {
                s.queue.remove(s.batch[bit]);
            }
        }
        s.batch.clear();
    }
}
