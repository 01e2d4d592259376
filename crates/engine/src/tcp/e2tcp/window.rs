//! E2TCP's window management (seed 001 §2.2): the window, in packets, moves on the number of
//! losses each acknowledgment newly reports, and on timeouts. Few losses are random errors; many
//! are a burst, and the window drops to the burst-error window (a probe) until the channel
//! answers; a timeout also means a burst and restarts from the minimum window, which lets the
//! sender recover quickly once the burst is over.

use crate::config::{AfterTimeout, E2tcpConfig};

/// How the last report was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// No new loss: the window grows.
    Clean,
    /// Fewer than `error_limit` new losses: random errors, a small decrease.
    RandomErrors,
    /// At least `error_limit` new losses: a burst, the burst-error window.
    Burst,
}

#[derive(Debug, Clone)]
pub struct E2tcpWindow {
    cfg: E2tcpConfig,
    /// Packets that may be outstanding.
    packets: u32,
}

impl E2tcpWindow {
    /// The window starts at the minimum window.
    pub fn new(cfg: E2tcpConfig) -> Self {
        Self { packets: cfg.min_window, cfg }
    }

    pub fn packets(&self) -> u32 {
        self.packets
    }

    /// An acknowledgment that carried new information reported `n_new` newly lost packets.
    /// `n_new == error_limit` counts as a burst (the paper leaves equality open; with this
    /// reading an error limit of 1 makes every loss a burst, and 0 is meaningless).
    pub fn on_report(&mut self, n_new: u32) -> Reading {
        let c = &self.cfg;
        if n_new == 0 {
            self.packets = (self.packets + c.increase).min(c.max_window);
            Reading::Clean
        } else if n_new < c.error_limit {
            // Not below the minimum window, but a window already smaller (a burst probe) is not
            // raised by a loss.
            let floor = c.min_window.min(self.packets);
            self.packets = self.packets.saturating_sub(c.decrease * n_new).max(floor);
            Reading::RandomErrors
        } else {
            self.packets = c.burst_window;
            Reading::Burst
        }
    }

    /// A transmission or retransmission timer expired: a burst is assumed (seed 001 §2.2), and the
    /// window goes to its minimum size as `after_timeout` reads it.
    pub fn on_timeout(&mut self) {
        let c = &self.cfg;
        self.packets = match c.after_timeout {
            AfterTimeout::ReduceToMin => self.packets.min(c.min_window),
            AfterTimeout::MinWindow => c.min_window,
            AfterTimeout::BurstWindow => c.burst_window,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> E2tcpConfig {
        E2tcpConfig { min_window: 4, max_window: 10, burst_window: 1, error_limit: 3, increase: 1, decrease: 1, ..E2tcpConfig::default() }
    }

    #[test]
    fn clean_acks_grow_the_window_up_to_the_maximum_seed001_s2_2() {
        let mut w = E2tcpWindow::new(cfg());
        assert_eq!(w.packets(), 4);
        for _ in 0..20 {
            assert_eq!(w.on_report(0), Reading::Clean);
        }
        assert_eq!(w.packets(), 10);
    }

    #[test]
    fn random_errors_shrink_the_window_but_not_below_the_minimum_seed001_s2_2() {
        let mut w = E2tcpWindow::new(cfg());
        for _ in 0..6 {
            w.on_report(0);
        }
        assert_eq!(w.packets(), 10);
        assert_eq!(w.on_report(2), Reading::RandomErrors);
        assert_eq!(w.packets(), 8);
        for _ in 0..5 {
            w.on_report(2);
        }
        assert_eq!(w.packets(), 4);
    }

    #[test]
    fn a_burst_of_losses_sets_the_burst_window_seed001_s2_2() {
        let mut w = E2tcpWindow::new(cfg());
        for _ in 0..6 {
            w.on_report(0);
        }
        assert_eq!(w.on_report(3), Reading::Burst);
        assert_eq!(w.packets(), 1);
        // A random error during the probe does not raise it to the minimum.
        assert_eq!(w.on_report(1), Reading::RandomErrors);
        assert_eq!(w.packets(), 1);
        assert_eq!(w.on_report(0), Reading::Clean);
        assert_eq!(w.packets(), 2);
    }

    #[test]
    fn a_timeout_reduces_the_window_to_the_minimum_and_never_raises_a_burst_probe_seed001_s2_2() {
        let mut w = E2tcpWindow::new(cfg());
        for _ in 0..6 {
            w.on_report(0);
        }
        assert_eq!(w.packets(), 10);
        w.on_timeout();
        assert_eq!(w.packets(), 4);
        // During a burst the probe times out again and again: it stays a probe, polling the
        // channel at the timeout's pace until an answer comes.
        w.on_report(5);
        assert_eq!(w.packets(), 1);
        w.on_timeout();
        assert_eq!(w.packets(), 1);
        assert_eq!(w.on_report(0), Reading::Clean);
        assert_eq!(w.packets(), 2);
    }

    #[test]
    fn the_min_window_reading_restarts_every_timeout_from_the_minimum_seed001_s2_2() {
        let mut w = E2tcpWindow::new(E2tcpConfig { after_timeout: AfterTimeout::MinWindow, ..cfg() });
        w.on_report(5);
        assert_eq!(w.packets(), 1);
        w.on_timeout();
        assert_eq!(w.packets(), 4);
        for _ in 0..6 {
            w.on_report(0);
        }
        w.on_timeout();
        assert_eq!(w.packets(), 4);
    }

    #[test]
    fn the_burst_window_reading_treats_a_timeout_as_a_reported_burst_seed001_s2_2() {
        let mut w = E2tcpWindow::new(E2tcpConfig { after_timeout: AfterTimeout::BurstWindow, ..cfg() });
        for _ in 0..6 {
            w.on_report(0);
        }
        w.on_timeout();
        assert_eq!(w.packets(), 1);
    }
}
