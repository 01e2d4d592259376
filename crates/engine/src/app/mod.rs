//! Applications, sans-I/O like the TCP endpoints: they are told the time and what happened, and
//! answer with what to write or send and when to be woken. They never touch the event queue,
//! packets or interfaces; the world (`sim::network`) moves events between them and the network.
//!
//! - [`source`]: what a flow's source writes and when (bulk, timed, on/off, constant bit rate);
//! - [`messages`]: which written messages were delivered, and their latency;
//! - [`echo`]: the UDP echo server (RFC 862);
//! - [`relay`]: the split node's relay between a split flow's two connections.

pub mod echo;
pub mod messages;
pub mod relay;
pub mod source;

pub use echo::{Datagram, UdpEnd};
pub use messages::Messages;
pub use relay::Relay;
pub use source::{Source, Start, Write};
