//! TCP, split as real stacks split it: a sans-I/O [`endpoint::Endpoint`] composed of a
//! [`sender::Sender`] (sequence space, timers, scoreboard, CA-state transitions) and a
//! [`receiver::Receiver`] (reassembly, ACK policy, SACK generation), with congestion control
//! (`cc/`) and loss recovery (`recovery/`) as separate modules, one file per algorithm.
//!
//! Reading list: RFC 9293 (TCP), RFC 1122 §4.2, RFC 5681 (congestion control), RFC 6582
//! (NewReno), RFC 6675 and RFC 2018 (SACK), RFC 6298 (RTO), RFC 7323 (timestamps, window scale),
//! RFC 3042 (limited transmit), RFC 3465 (byte counting); seeds 000 §3 and 002 Table 1.
//! E2TCP (seed 001 §2) has its own sender in `e2tcp/`, behind the same interface (`send_half`)
//! and sharing the application's side of the connection (`stream`). `variant` is the registry
//! of named variants; `recipe` builds an endpoint's parts from an entry; `rate` samples the
//! delivery rate every controller is given.

pub mod cc;
pub mod e2tcp;
pub mod endpoint;
pub mod linux;
pub mod rate;
pub mod recipe;
pub mod receiver;
pub mod recovery;
pub mod rtt;
pub mod scoreboard;
pub mod segment;
pub mod send_half;
pub mod sender;
pub mod stream;
pub mod tcb;
pub mod variant;
