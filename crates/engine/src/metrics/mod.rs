//! What a run reports beyond the result record's core: time series.

pub mod trace;
