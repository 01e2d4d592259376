//! Adaptive power save (docs/models/wifi.md "Adaptive power save"): a station in power-save mode
//! leaves it for its traffic (PM = 0 in its frames, 802.11-2020 11.2.3.2), stays awake for a
//! timeout after its last data frame as phones do, then announces power save with a Null frame
//! and dozes between beacons.

use super::*;

impl<P: Copy> Dcf<P> {
    /// A station in power-save mode sent or received a data frame: with a stay-awake timeout it
    /// is in active mode until the timeout runs out after its last one.
    #[cold]
    pub(super) fn traffic(&mut self, i: usize, now: SimTime) {
        let s = &mut self.stations[i];
        if self.psm_timeout.is_zero() || !s.ps {
            return;
        }
        s.active = true;
        s.psm_until = now + self.psm_timeout;
        if !s.psm_timer {
            s.psm_timer = true;
            let t = Timer { station: i as u32, kind: TimerKind::PsmTimeout, gen: 0 };
            self.out.push(Out::Schedule(s.psm_until, t));
        }
    }

    /// The stay-awake timer fired: at the timeout, announce power save with a Null frame (PM =
    /// 1), then doze; a station still busy with frames waits another timeout.
    #[cold]
    pub(super) fn psm_timeout_expired(&mut self, i: usize, now: SimTime) {
        let s = &mut self.stations[i];
        s.psm_timer = false;
        if !s.active {
            return;
        }
        if now < s.psm_until {
            // Traffic since it was set: wait for the later deadline.
            s.psm_timer = true;
            let t = Timer { station: i as u32, kind: TimerKind::PsmTimeout, gen: 0 };
            self.out.push(Out::Schedule(s.psm_until, t));
            return;
        }
        if !s.queue.is_empty() || s.state == State::Exchange {
            return self.traffic(i, now);
        }
        self.stations[i].null_pending = Some(false);
        self.start_contending(i, now);
    }

    /// A Null frame waits to be sent (it goes before the station's data).
    pub(super) fn null_due(&self, i: usize) -> Option<bool> {
        self.stations[i].null_pending
    }

    #[cold]
    pub(super) fn send_null(&mut self, i: usize, now: SimTime, active: bool) {
        let ap = self.ap();
        let s = &mut self.stations[i];
        s.job = Job::Null(active);
        s.peer = ap;
        s.counters.nulls_sent += 1;
        let nav = SimDuration(self.timing.sifs.0 + self.control_air(FrameKind::Ack).0);
        // Its PM bit is the job's: 0 announcing active mode, 1 power save.
        self.start_tx(i, now, FrameKind::Null, ap, nav, 0, 0, false);
    }

    /// The AP acknowledged `i`'s Null frame: it is in active mode, or in power save (and dozes
    /// once the exchange is over).
    #[cold]
    pub(super) fn power_mode_announced(&mut self, i: usize, active: bool, now: SimTime) {
        self.stations[i].null_pending = None;
        if active {
            self.traffic(i, now);
        } else {
            self.stations[i].active = false;
        }
    }

    /// `i`'s Null frame failed at the retry limit: still awake, it tries again after another
    /// timeout; a station that wanted to fetch buffered frames falls back to a PS-Poll.
    #[cold]
    pub(super) fn power_mode_unannounced(&mut self, i: usize, active: bool, now: SimTime) {
        self.stations[i].null_pending = None;
        if active {
            self.stations[i].poll = Poll::Pending;
        } else {
            self.traffic(i, now);
        }
    }

    /// The AP `ap` decoded a data frame from `from`: with adaptive power save its PM bit is 0.
    #[cold]
    pub(super) fn data_from(&mut self, ap: usize, from: usize, now: SimTime) {
        if !self.psm_timeout.is_zero() && self.stations[from].ps && !self.stations[ap].ps_buffer.is_empty() {
            self.power_mode_heard(ap, from, true, now);
        }
    }

    /// The AP learnt `sta`'s power management mode (11.2.3.2): in active mode, what it buffered
    /// for it goes to its queue and later frames are not buffered.
    #[cold]
    pub(super) fn power_mode_heard(&mut self, ap: usize, sta: usize, active: bool, now: SimTime) {
        let s = &mut self.stations[ap];
        if s.ap_active.is_empty() {
            return;
        }
        s.ap_active[sta] = active;
        if active && !s.ps_buffer[sta].is_empty() {
            while let Some(mut f) = s.ps_buffer[sta].pop_front() {
                f.more = false;
                s.queue.push_back(f);
            }
            self.start_contending(ap, now);
        } else if !active && s.state != State::Exchange {
            // Back to power save: frames still queued for it wait in its buffer for the TIM.
            let mut k = 0;
            while k < s.queue.len() {
                if s.queue[k].to == sta {
                    let f = s.queue.remove(k).expect("in range");
                    s.ps_buffer[sta].push_back(f);
                } else {
                    k += 1;
                }
            }
            if s.queue.is_empty() && s.state == State::Contending && !s.beacon_pending && s.bar.iter().all(|&b| b != Bar::Needed) {
                s.state = State::Idle;
            }
        }
    }
}
