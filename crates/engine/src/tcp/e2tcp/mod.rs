//! E2TCP, the Energy Efficient TCP of seed 001 §2, for the wireless hop of a split connection:
//! every packet acknowledged with up to two SACK blocks, lost packets retransmitted as soon as
//! they are reported, a window driven by the number of newly reported losses (`window`), separate
//! transmission and retransmission timers (`timers`) and compact headers (`header`).
//! docs/models/e2tcp.md states each constant the paper leaves open and the reading chosen.

pub mod header;
pub mod sender;
pub mod timers;
pub mod window;

pub use sender::E2tcpSender;
