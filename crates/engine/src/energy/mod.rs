//! The energy model: device profiles, CPU processing costs per protocol operation, and the
//! per-node meter that integrates platform, radio and CPU power over time.

pub mod cpu;
pub mod meter;
pub mod profile;
