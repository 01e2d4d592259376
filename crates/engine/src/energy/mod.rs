//! The energy model: device profiles, CPU processing costs per protocol operation, each radio's
//! airtime per frame, the per-node meter that integrates platform, radio and CPU power over time,
//! and the battery that power drains.

pub mod airtime;
pub mod battery;
pub mod cpu;
pub mod meter;
pub mod profile;
pub mod rrc;
