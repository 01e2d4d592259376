//! The emulated network on the wall clock: an epoll loop over the hosts' TUN devices, a timerfd
//! armed for the next due event, and a control descriptor that ends the run. Simulated time is
//! the monotonic clock's nanoseconds since the loop began; every event runs as soon as the
//! clock passes its time, and how late it ran (its lag) is kept, so a run whose clock could not
//! keep up is marked so rather than reported as the path it was meant to be
//! (docs/emulation.md, "Honest real time").

use super::world::EmuWorld;
use crate::error::EngineError;
use crate::units::SimTime;
use rustix::event::epoll;
use rustix::fs::{fcntl_getfl, fcntl_setfl, OFlags};
use rustix::time::{clock_gettime, timerfd_create, timerfd_settime, ClockId, Itimerspec, TimerfdClockId, TimerfdFlags, TimerfdTimerFlags, Timespec};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd, RawFd};
use std::time::Duration;

/// epoll tokens of the two descriptors that are not devices.
const TIMER: u64 = u64::MAX;
const CONTROL: u64 = u64::MAX - 1;
/// The largest IP packet a TUN device hands over.
const MAX_PACKET: usize = 65_535;

/// How the loop ran.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct LoopReport {
    /// Lag percentiles and maximum over every event run (ms).
    pub lag_p50_ms: f64,
    pub lag_p99_ms: f64,
    pub lag_max_ms: f64,
    pub events: u64,
    /// Packets taken from the hosts, and written to them.
    pub packets_taken: u64,
    pub packets_written: u64,
    /// Writes a host's device refused (its queue full): packets lost outside the model.
    pub write_errors: u64,
    /// Why the loop ended: "control" (the caller ended it) or "time limit".
    pub ended_by: String,
    pub duration_s: f64,
}

/// An OS error, as an engine error naming what failed.
fn os_error(what: &str, e: rustix::io::Errno) -> EngineError {
    EngineError::Invariant(format!("{what}: {e}"))
}

/// A device descriptor the caller passed in, borrowed for the run.
// The one unsafe operation of the crate: descriptors cross the Python boundary as integers.
#[allow(unsafe_code)]
fn borrow_device<'a>(fd: RawFd) -> BorrowedFd<'a> {
    // SAFETY: `Setup::devices` holds descriptors the caller keeps open until `run` returns (the
    // Python side closes its namespaces, and with them the devices, only after the run).
    unsafe { BorrowedFd::borrow_raw(fd) }
}

/// An epoll instance and a timerfd (closed when dropped).
struct Poller {
    epoll: OwnedFd,
    timer: OwnedFd,
}

impl Poller {
    fn new() -> Result<Self, EngineError> {
        let epoll = epoll::create(epoll::CreateFlags::CLOEXEC).map_err(|e| os_error("epoll_create1", e))?;
        let timer = timerfd_create(TimerfdClockId::Monotonic, TimerfdFlags::NONBLOCK | TimerfdFlags::CLOEXEC).map_err(|e| os_error("timerfd_create", e))?;
        let p = Poller { epoll, timer };
        p.watch(p.timer.as_fd(), TIMER)?;
        Ok(p)
    }

    /// Wake when `fd` has something to read, reporting `token`.
    fn watch(&self, fd: BorrowedFd<'_>, token: u64) -> Result<(), EngineError> {
        epoll::add(&self.epoll, fd, epoll::EventData::new_u64(token), epoll::EventFlags::IN).map_err(|e| os_error("epoll_ctl", e))
    }

    /// Fire the timer after `after` (at least 1 ns: zero would disarm it).
    fn arm(&self, after: Duration) {
        let d = after.max(Duration::from_nanos(1));
        let zero = Timespec { tv_sec: 0, tv_nsec: 0 };
        let value = Timespec { tv_sec: d.as_secs() as _, tv_nsec: d.subsec_nanos() as _ };
        // Arming a valid timerfd with a valid time cannot fail.
        let _ = timerfd_settime(&self.timer, TimerfdTimerFlags::empty(), &Itimerspec { it_interval: zero, it_value: value });
    }
}

/// Make `fd` non-blocking, so a device is read until it is empty.
fn non_blocking(fd: BorrowedFd<'_>) -> Result<(), EngineError> {
    let flags = fcntl_getfl(fd).map_err(|e| os_error("fcntl F_GETFL", e))?;
    fcntl_setfl(fd, flags | OFlags::NONBLOCK).map_err(|e| os_error("fcntl F_SETFL", e))
}

/// The monotonic clock (CLOCK_MONOTONIC, the clock of Python's `time.monotonic()`), in ns.
pub fn monotonic_ns() -> u64 {
    let t = clock_gettime(ClockId::Monotonic);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// Nearest-rank percentile `q` (0..=1) of sorted `v`, in ms.
fn percentile_ms(v: &[u64], q: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
    v[rank - 1] as f64 * 1e-6
}

/// Run `world` on the wall clock: node `i`'s kernel is behind `devices[i]` (a TUN descriptor,
/// `None` for a router), until `control` becomes readable or `limit` has passed since `origin`.
/// Simulated time 0 is `origin` on the monotonic clock ([`monotonic_ns`]; now when `None`), so
/// that the caller can start its programs at the scenario's times; a packet read before it is
/// stamped 0. Returns the time the run ended and how the loop kept up.
pub fn run(world: &mut EmuWorld<'_>, devices: &[Option<RawFd>], control: RawFd, origin: Option<u64>, limit: Duration) -> Result<(SimTime, LoopReport), EngineError> {
    let poller = Poller::new()?;
    let devices: Vec<Option<BorrowedFd<'_>>> = devices.iter().map(|fd| fd.map(borrow_device)).collect();
    for (i, fd) in devices.iter().enumerate() {
        if let Some(fd) = *fd {
            non_blocking(fd)?;
            poller.watch(fd, i as u64)?;
        }
    }
    poller.watch(borrow_device(control), CONTROL)?;
    let mut buf = vec![0u8; MAX_PACKET];
    let mut events: Vec<epoll::Event> = Vec::with_capacity(32);
    let mut write_errors = 0u64;
    let mut write = |node: usize, bytes: &[u8]| {
        if let Some(fd) = devices[node] {
            // A TUN write takes one whole packet or none.
            if rustix::io::write(fd, bytes) != Ok(bytes.len()) {
                write_errors += 1;
            }
        }
    };
    let origin = origin.unwrap_or_else(monotonic_ns);
    let clock = || SimTime(monotonic_ns().saturating_sub(origin));
    let limit_ns = limit.as_nanos() as u64;
    let ended_by = loop {
        let now = clock();
        world.run_due(now, &mut write);
        if now.0 >= limit_ns {
            break "time limit";
        }
        let wake_at = world.next_due().map_or(limit_ns, |t| t.0.min(limit_ns));
        poller.arm(Duration::from_nanos(wake_at.saturating_sub(clock().0)));
        events.clear();
        match epoll::wait(&poller.epoll, rustix::buffer::spare_capacity(&mut events), None) {
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(os_error("epoll_wait", e)),
        }
        // Events due by now run before the packets read now, so media see time move forward.
        let now = clock();
        world.run_due(now, &mut write);
        let mut stop = false;
        for ev in &events {
            match ev.data.u64() {
                TIMER => {
                    let mut expirations = [0u8; 8];
                    let _ = rustix::io::read(&poller.timer, &mut expirations);
                }
                CONTROL => stop = true,
                node => {
                    let Some(fd) = devices[node as usize] else { continue };
                    while let Ok(got) = rustix::io::read(fd, &mut buf) {
                        if got == 0 {
                            break;
                        }
                        world.from_host(now, node as usize, buf[..got].to_vec());
                    }
                }
            }
        }
        if stop {
            break "control";
        }
    };
    let end = clock();
    let t = &mut world.timeliness;
    t.lags_ns.sort_unstable();
    let report = LoopReport {
        lag_p50_ms: percentile_ms(&t.lags_ns, 0.5),
        lag_p99_ms: percentile_ms(&t.lags_ns, 0.99),
        lag_max_ms: t.lags_ns.last().map_or(0.0, |&l| l as f64 * 1e-6),
        events: t.lags_ns.len() as u64,
        packets_taken: t.taken,
        packets_written: t.written,
        write_errors,
        ended_by: ended_by.into(),
        duration_s: end.as_secs_f64(),
    };
    Ok((end, report))
}
