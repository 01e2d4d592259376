//! A cellular radio's RRC state machine (docs/models/cellular.md): after its last packet the radio
//! stays connected through a tail of timed states (LTE: continuous reception, then short and long
//! DRX; 3G: DCH, then FACH), then drops to RRC_IDLE, where it only listens at paging occasions.
//! Leaving RRC_IDLE takes a promotion (`radio.wake_time` at `radio.wake_power_w`).
//!
//! The machine is a function of when the radio was last active, so it needs no events: the
//! meter lays its states out over the gaps between activity (`energy::meter`), and a link asks
//! it when a frame may go (`net::medium::rrc`). Both read the same figures here, so the energy
//! and the timing agree.
//!
//! Power follows Huang et al. (MobiSys 2012): while moving data the radio draws the connected
//! power (`radio.tx_power_w`, `radio.rx_power_w`, their β) plus a cost per bit sent and received
//! (their α_u, α_d, in mW per Mbit/s, that is mJ per Mbit).

use crate::config::serde_units;
use crate::error::EngineError;
use crate::units::SimDuration;
use serde::{Deserialize, Serialize};

/// The RRC figures of a radio profile (`radio.rrc`).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Rrc {
    /// Energy per megabit of IP bytes sent, beyond the connected power (J/Mbit).
    pub uplink_j_per_mbit: f64,
    /// Energy per megabit of IP bytes received, beyond the connected power (J/Mbit).
    pub downlink_j_per_mbit: f64,
    /// The connected states after the last activity, in order; their durations are the
    /// operator's timers. After the last one the radio is in RRC_IDLE.
    pub tail: Vec<TailState>,
    /// RRC_IDLE: the radio wakes to listen for pages; between them it draws `radio.sleep_power_w`.
    pub paging: Listening,
}

/// One connected state of the tail.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TailState {
    /// Its name, for the documentation and the profile listing ("continuous_reception", "short_drx").
    pub state: String,
    #[serde(with = "serde_units::duration")]
    pub duration: SimDuration,
    /// Power while in it and not listening (W); `radio.idle_power_w` when left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_w: Option<f64>,
    /// Discontinuous reception: the radio listens only during on-durations, and a frame for it
    /// waits for the next one. Without it the radio receives at any time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drx: Option<Listening>,
    /// A state the radio must be resumed from before it moves data (5G NR's RRC_INACTIVE): a
    /// frame to send waits `delay`, a frame for it waits for its next listening window (`drx`,
    /// the RAN paging cycle) and then `delay`. Such states come after every connected state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<Resume>,
}

/// Leaving a state like RRC_INACTIVE: `delay` at `power_w`, after which the radio is connected.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Resume {
    #[serde(with = "serde_units::duration")]
    pub delay: SimDuration,
    pub power_w: f64,
}

/// A periodic listening window: `on` at the start of every `cycle`, drawing `power_w`.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Listening {
    #[serde(with = "serde_units::duration")]
    pub cycle: SimDuration,
    #[serde(with = "serde_units::duration")]
    pub on: SimDuration,
    pub power_w: f64,
}

/// Longest timer accepted (an hour: operators' tails are seconds).
const MAX_TIMER: SimDuration = SimDuration(3_600_000_000_000);

impl Listening {
    /// Where `t` falls in the window's cycle, whose cycles start at `origin`: `t` itself when
    /// the radio is listening then, otherwise the start of the next on-duration.
    #[inline]
    pub fn next_on(&self, origin: u64, t: u64) -> u64 {
        let phase = (t - origin) % self.cycle.0;
        if phase < self.on.0 {
            t
        } else {
            t - phase + self.cycle.0
        }
    }

    /// Split `[s, e)` (cycles starting at `origin <= s`) into listening and quiet pieces, in order:
    /// `piece(start, end, listening)`.
    pub fn split(&self, origin: u64, s: u64, e: u64, piece: &mut impl FnMut(u64, u64, bool)) {
        let (c, on) = (self.cycle.0, self.on.0);
        let mut cycle_start = s - (s - origin) % c;
        let mut t = s;
        while t < e {
            let on_end = (cycle_start + on).min(e);
            if t < on_end {
                piece(t, on_end, true);
                t = on_end;
            }
            let next = (cycle_start + c).min(e);
            if t < next {
                piece(t, next, false);
                t = next;
            }
            cycle_start += c;
        }
    }

    fn validate(&self, at: &dyn Fn(&str) -> String, key: &str) -> Result<(), EngineError> {
        if self.cycle.0 == 0 || self.cycle > MAX_TIMER {
            return Err(EngineError::config(at(&format!("{key}.cycle")), format!("must be between 1ns and 1h, got {}", serde_units::format_duration(self.cycle))));
        }
        if self.on > self.cycle {
            return Err(EngineError::config(
                at(&format!("{key}.on")),
                format!("must be at most the cycle ({}), got {}", serde_units::format_duration(self.cycle), serde_units::format_duration(self.on)),
            ));
        }
        check_power(at, &format!("{key}.power_w"), self.power_w)
    }
}

fn check_power(at: &dyn Fn(&str) -> String, key: &str, v: f64) -> Result<(), EngineError> {
    if !v.is_finite() || v < 0.0 {
        return Err(EngineError::config(at(key), format!("must be a finite number >= 0, got {v}")));
    }
    Ok(())
}

/// The machine's timing, in ns, as the meter and the links use it.
#[derive(Debug, Clone, PartialEq)]
pub struct RrcTiming {
    /// Promotion from RRC_IDLE.
    pub promotion: u64,
    /// Each tail state's start, as an offset from the last activity's end, and its state.
    stages: Vec<(u64, TailState)>,
    /// Sum of the tail's durations: the radio is idle from `last end + tail`.
    pub tail: u64,
    pub paging: Listening,
}

impl Rrc {
    pub fn validate(&self, at: &dyn Fn(&str) -> String) -> Result<(), EngineError> {
        check_power(at, "radio.rrc.uplink_j_per_mbit", self.uplink_j_per_mbit)?;
        check_power(at, "radio.rrc.downlink_j_per_mbit", self.downlink_j_per_mbit)?;
        for (k, st) in self.tail.iter().enumerate() {
            let key = format!("radio.rrc.tail.{k}");
            if st.duration.0 == 0 || st.duration > MAX_TIMER {
                return Err(EngineError::config(
                    at(&format!("{key}.duration")),
                    format!("must be between 1ns and 1h (a timer of the operator's), got {}", serde_units::format_duration(st.duration)),
                ));
            }
            if let Some(p) = st.power_w {
                check_power(at, &format!("{key}.power_w"), p)?;
            }
            if let Some(drx) = &st.drx {
                drx.validate(at, &format!("{key}.drx"))?;
            }
            if let Some(r) = &st.resume {
                if r.delay.0 == 0 || r.delay > MAX_TIMER {
                    return Err(EngineError::config(
                        at(&format!("{key}.resume.delay")),
                        format!("must be between 1ns and 1h, got {}", serde_units::format_duration(r.delay)),
                    ));
                }
                check_power(at, &format!("{key}.resume.power_w"), r.power_w)?;
            } else if k > 0 && self.tail[k - 1].resume.is_some() {
                // A connected state after one the radio must be resumed from would make the
                // time a frame started ambiguous (resumed, or sent at once?).
                return Err(EngineError::config(
                    at(&format!("{key}.resume")),
                    format!("is required: tail.{} has a resume, and every state after one with a resume must have one (connected states come first)", k - 1),
                ));
            }
        }
        self.paging.validate(at, "radio.rrc.paging")
    }

    /// The timing the meter and the links share; `promotion` is the radio's `wake_time`.
    pub fn timing(&self, promotion: SimDuration) -> RrcTiming {
        let mut offset = 0;
        let stages = self
            .tail
            .iter()
            .map(|st| {
                let start = offset;
                offset += st.duration.0;
                (start, st.clone())
            })
            .collect();
        RrcTiming { promotion: promotion.0, stages, tail: offset, paging: self.paging }
    }
}

impl RrcTiming {
    /// The power of a radio held connected while its data waits (continuous reception): the
    /// first tail state's when it listens all the time, else `idle_w`.
    pub fn connected_power(&self, idle_w: f64) -> f64 {
        match self.stages.first() {
            Some((_, st)) if st.drx.is_none() => st.power_w.unwrap_or(idle_w),
            _ => idle_w,
        }
    }

    /// How many states the tail has.
    pub fn stages(&self) -> usize {
        self.stages.len()
    }

    /// The earliest time at or after `t` at which a radio last active until `last_end` (and
    /// still in its tail at `t`) can send (`receive` false) or receive a frame, or `None` if it
    /// is idle by then. A state with a resume answers after the resume.
    pub fn tail_ready(&self, last_end: u64, t: u64, receive: bool) -> Option<u64> {
        let mut t = t;
        for (start, st) in &self.stages {
            let (s, e) = (last_end + start, last_end + start + st.duration.0);
            if t >= e {
                continue;
            }
            let t_in = t.max(s);
            let heard = match &st.drx {
                Some(drx) if receive => drx.next_on(s, t_in),
                _ => t_in,
            };
            if heard < e {
                return Some(heard + st.resume.map_or(0, |r| r.delay.0));
            }
            t = e;
        }
        None
    }

    /// If activity at `b` after activity ending at `a` followed a resume (it began in a state
    /// with one), when the resume began and its power.
    pub fn resume_before(&self, a: u64, b: u64) -> Option<(u64, f64)> {
        self.stages.iter().find_map(|(start, st)| {
            let r = st.resume?;
            let (s, e) = (a + start, a + start + st.duration.0);
            let began = b.checked_sub(r.delay.0)?;
            (s <= began && began < e).then_some((began, r.power_w))
        })
    }

    /// The next paging occasion at or after `t` (occasions every cycle from time 0).
    #[inline]
    pub fn next_page(&self, t: u64) -> u64 {
        self.paging.next_on(0, t)
    }

    /// The tail states over `[a, b)` after activity ending at `a`, each piece as
    /// `(start, end, power)`, with DRX on-durations apart; `idle_w` is a state's default power.
    pub fn lay_tail(&self, a: u64, b: u64, idle_w: f64, emit: &mut impl FnMut(u64, u64, f64)) {
        for (start, st) in &self.stages {
            let (s, e) = (a + start, (a + start + st.duration.0).min(b));
            if s >= b {
                break;
            }
            let base = st.power_w.unwrap_or(idle_w);
            match &st.drx {
                None => emit(s, e, base),
                Some(drx) => drx.split(s, s, e, &mut |x, y, on| emit(x, y, if on { drx.power_w } else { base })),
            }
        }
    }

    /// RRC_IDLE over `[a, b)`: paging occasions at the paging power, the floor `sleep_w` between.
    pub fn lay_idle(&self, a: u64, b: u64, sleep_w: f64, emit: &mut impl FnMut(u64, u64, f64)) {
        if a < b {
            self.paging.split(0, a, b, &mut |x, y, on| emit(x, y, if on { self.paging.power_w } else { sleep_w }));
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn ms(x: u64) -> SimDuration {
        SimDuration(x * 1_000_000)
    }

    /// Huang et al. 2012's LTE machine in ms units: CR 100, short DRX 20 (cycle 20, on 1),
    /// long DRX to 11576 (cycle 40, on 1), paging every 1280 with 43 on.
    pub(crate) fn lte() -> Rrc {
        Rrc {
            uplink_j_per_mbit: 0.43839,
            downlink_j_per_mbit: 0.05197,
            tail: vec![
                TailState { state: "continuous_reception".into(), duration: ms(100), power_w: Some(1.288), drx: None, resume: None },
                TailState { state: "short_drx".into(), duration: ms(20), power_w: None, drx: Some(Listening { cycle: ms(20), on: ms(1), power_w: 1.68 }), resume: None },
                TailState { state: "long_drx".into(), duration: ms(11456), power_w: None, drx: Some(Listening { cycle: ms(40), on: ms(1), power_w: 1.68 }), resume: None },
            ],
            paging: Listening { cycle: ms(1280), on: ms(43), power_w: 0.594 },
        }
    }

    /// An illustrative 5G NR machine with RRC_INACTIVE (3GPP TS 38.331 §5.3.8.3, §5.3.13), in ms:
    /// CR 100, long DRX to 10 000 (cycle 320, on 1), then RRC_INACTIVE for 20 000 (RAN paging
    /// every 1280, on 1) from which a resume takes 60 at 1.0 W; then RRC_IDLE. Figures chosen
    /// for the arithmetic, not measured.
    pub(crate) fn nr() -> Rrc {
        Rrc {
            uplink_j_per_mbit: 0.01,
            downlink_j_per_mbit: 0.002,
            tail: vec![
                TailState { state: "continuous_reception".into(), duration: ms(100), power_w: Some(1.0), drx: None, resume: None },
                TailState { state: "long_drx".into(), duration: ms(9900), power_w: Some(0.4), drx: Some(Listening { cycle: ms(320), on: ms(1), power_w: 1.0 }), resume: None },
                TailState {
                    state: "rrc_inactive".into(),
                    duration: ms(20_000),
                    power_w: Some(0.02),
                    drx: Some(Listening { cycle: ms(1280), on: ms(1), power_w: 0.5 }),
                    resume: Some(Resume { delay: ms(60), power_w: 1.0 }),
                },
            ],
            paging: Listening { cycle: ms(2560), on: ms(1), power_w: 0.5 },
        }
    }

    #[test]
    fn a_radio_in_rrc_inactive_is_resumed_before_it_moves_data() {
        // 3GPP TS 38.331 §5.3.13: from RRC_INACTIVE the UE resumes its connection (shorter than
        // a setup from RRC_IDLE); data waits for the resume, and data for the UE first for its
        // RAN paging occasion.
        let t = nr().timing(ms(300));
        let m = |x: u64| x * 1_000_000;
        assert_eq!(t.tail, m(30_000));
        // Connected: sending at once, receiving at the DRX on-duration.
        assert_eq!(t.tail_ready(0, m(5_000), false), Some(m(5_000)));
        assert_eq!(t.tail_ready(0, m(5_000), true), Some(m(100 + 16 * 320)));
        // RRC_INACTIVE from 10 s: sending after the 60 ms resume; receiving after the next RAN
        // page (cycles from 10 s: 12 560 ms) and the resume.
        assert_eq!(t.tail_ready(0, m(12_000), false), Some(m(12_060)));
        assert_eq!(t.tail_ready(0, m(12_000), true), Some(m(12_560 + 60)));
        assert_eq!(t.tail_ready(0, m(10_000), true), Some(m(10_060)));
        // A resume that begins before RRC_INACTIVE ends completes after it.
        assert_eq!(t.tail_ready(0, m(29_990), false), Some(m(30_050)));
        assert_eq!(t.tail_ready(0, m(30_000), false), None);
        // The meter finds the resume from the activity's start: it began in RRC_INACTIVE.
        assert_eq!(t.resume_before(0, m(12_060)), Some((m(12_000), 1.0)));
        assert_eq!(t.resume_before(0, m(30_050)), Some((m(29_990), 1.0)));
        assert_eq!(t.resume_before(0, m(10_030)), None); // would have begun in long DRX
        assert_eq!(t.resume_before(0, m(5_000)), None);
        assert_eq!(t.resume_before(0, m(40_000)), None); // from RRC_IDLE: a promotion
        // Laid out: RRC_INACTIVE at its own power, RAN paging on-durations apart.
        let mut pieces = Vec::new();
        t.lay_tail(0, m(11_282), 0.9, &mut |s, e, p| if s >= m(10_000) { pieces.push((s, e, p)) });
        assert_eq!(pieces, vec![(m(10_000), m(10_001), 0.5), (m(10_001), m(11_280), 0.02), (m(11_280), m(11_281), 0.5), (m(11_281), m(11_282), 0.02)]);
    }

    #[test]
    fn a_frame_for_a_radio_in_drx_waits_for_its_next_on_duration() {
        // 3GPP TS 36.321 §5.7: in DRX the UE monitors the PDCCH only during on-durations.
        let t = lte().timing(ms(260));
        let m = |x: u64| x * 1_000_000;
        assert_eq!(t.tail, m(11576));
        // In continuous reception: at once.
        assert_eq!(t.tail_ready(0, m(50), true), Some(m(50)));
        // Short DRX from 100 ms, cycles of 20 ms with 1 ms on: 105 waits for 120 (long DRX
        // starts there, its first on-duration at once).
        assert_eq!(t.tail_ready(0, m(100), true), Some(m(100)));
        assert_eq!(t.tail_ready(0, m(105), true), Some(m(120)));
        // Long DRX from 120 ms, cycles of 40 ms: 121 waits for 160.
        assert_eq!(t.tail_ready(0, m(121), true), Some(m(160)));
        // Past the tail: idle.
        assert_eq!(t.tail_ready(0, m(11576), true), None);
        // Paging every 1280 ms, 43 ms on: 10 listens at once, 50 waits for 1280.
        assert_eq!(t.next_page(m(10)), m(10));
        assert_eq!(t.next_page(m(50)), m(1280));
    }

    #[test]
    fn the_tail_is_laid_out_state_by_state_with_on_durations_apart() {
        let t = lte().timing(ms(260));
        let m = |x: u64| x * 1_000_000;
        let mut pieces = Vec::new();
        t.lay_tail(m(1000), m(1000) + m(200), 1.06, &mut |s, e, p| pieces.push((s - m(1000), e - m(1000), p)));
        assert_eq!(
            pieces,
            vec![
                (0, m(100), 1.288),
                (m(100), m(101), 1.68),
                (m(101), m(120), 1.06),
                (m(120), m(121), 1.68),
                (m(121), m(160), 1.06),
                (m(160), m(161), 1.68),
                (m(161), m(200), 1.06),
            ]
        );
        // The pieces tile the interval.
        let total: u64 = pieces.iter().map(|p| p.1 - p.0).sum();
        assert_eq!(total, m(200));
    }

    #[test]
    fn listening_windows_split_an_interval_that_starts_mid_cycle() {
        let l = Listening { cycle: SimDuration(10), on: SimDuration(3), power_w: 1.0 };
        let mut pieces = Vec::new();
        l.split(0, 2, 25, &mut |s, e, on| pieces.push((s, e, on)));
        assert_eq!(pieces, vec![(2, 3, true), (3, 10, false), (10, 13, true), (13, 20, false), (20, 23, true), (23, 25, false)]);
    }
}
