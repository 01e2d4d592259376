//! The `tcp.e2tcp` table: the E2TCP constants seed 001 leaves open (docs/models/e2tcp.md). Every
//! window is in packets.

use super::serde_units;
use crate::error::EngineError;
use crate::units::SimDuration;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct E2tcpConfig {
    /// Compact headers (seed 001 §2.3); false keeps standard TCP/IP header sizes (Table 1's
    /// "without header compression").
    pub header_compression: bool,
    /// Newly reported losses from which an acknowledgment is read as a burst error.
    pub error_limit: u32,
    /// Window after a timeout and floor of the random-error decrease; also the initial window.
    pub min_window: u32,
    pub max_window: u32,
    /// Window after a burst error: the packets that probe the channel.
    pub burst_window: u32,
    /// Packets added per acknowledgment that reports no new loss.
    pub increase: u32,
    /// Packets removed per newly reported loss below the error limit.
    pub decrease: u32,
    /// Timer margin over the smoothed RTT, as a fraction of it.
    pub timer_margin: f64,
    #[serde(with = "serde_units::duration")]
    pub min_timeout: SimDuration,
    /// The window after a transmission or retransmission timeout (seed 001 §2.2: a burst is
    /// assumed and the window "reduced to its minimum size").
    pub after_timeout: AfterTimeout,
}

/// What a timeout does to E2TCP's window (docs/models/e2tcp.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AfterTimeout {
    /// The window is reduced to the minimum window, never raised: a burst probe smaller than
    /// the minimum window stays as it is (the paper's "reduces").
    #[default]
    ReduceToMin,
    /// The window is set to the minimum window, also from a smaller burst probe.
    MinWindow,
    /// The window is set to the burst-error window, as for a burst the acknowledgments report.
    BurstWindow,
}

impl Default for E2tcpConfig {
    fn default() -> Self {
        Self {
            header_compression: true,
            error_limit: 3,
            min_window: 4,
            max_window: 32,
            burst_window: 1,
            increase: 1,
            decrease: 1,
            timer_margin: 0.25,
            min_timeout: SimDuration::from_millis(20),
            after_timeout: AfterTimeout::ReduceToMin,
        }
    }
}

/// Range checks of `tcp.e2tcp` at key path `at`.
pub(crate) fn validate(c: &E2tcpConfig, at: &str) -> Result<(), EngineError> {
    let e = |key: &str, msg: String| EngineError::config(format!("{at}.{key}"), msg);
    if c.error_limit == 0 {
        return Err(e("error_limit", "must be at least 1 newly reported loss".into()));
    }
    for (key, v) in [("min_window", c.min_window), ("max_window", c.max_window), ("burst_window", c.burst_window), ("increase", c.increase)] {
        if v == 0 {
            return Err(e(key, "must be at least 1 packet".into()));
        }
    }
    if c.min_window > c.max_window {
        return Err(e("min_window", format!("must be <= {at}.max_window ({}), got {}", c.max_window, c.min_window)));
    }
    if c.burst_window > c.max_window {
        return Err(e("burst_window", format!("must be <= {at}.max_window ({}), got {}", c.max_window, c.burst_window)));
    }
    if c.max_window > 32_767 {
        return Err(e("max_window", format!("must be at most 32767 packets (16-bit packet numbers), got {}", c.max_window)));
    }
    if !(c.timer_margin.is_finite() && (0.0..=10.0).contains(&c.timer_margin)) {
        return Err(e("timer_margin", format!("must be in [0, 10] (a fraction of the smoothed RTT), got {}", c.timer_margin)));
    }
    super::check_min_timer(c.min_timeout, &format!("{at}.min_timeout"))?;
    Ok(())
}
