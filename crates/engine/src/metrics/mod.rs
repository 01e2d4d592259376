//! What a run reports beyond the result record's core: the seeds' efficiency metrics, time series.

pub mod efficiency;
pub mod trace;
