//! The network: links with drop-tail queues and channel impairments, and static routing.

pub mod impair;
pub mod link;
pub mod medium;
pub mod opportunities;
pub mod queue;
pub mod routing;
pub mod tally;
pub mod wifi;
