//! The energy model: device profiles, CPU processing costs per protocol operation, each radio's
//! airtime per frame, and the per-node meter that integrates platform, radio and CPU power over time.

pub mod airtime;
pub mod cpu;
pub mod meter;
pub mod profile;
