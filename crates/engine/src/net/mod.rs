//! The network: links with drop-tail queues and channel impairments.

pub mod impair;
pub mod link;
pub mod queue;
