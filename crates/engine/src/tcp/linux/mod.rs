//! The Linux stack (`tcp.stack = "linux-6"`): TCP as Linux 6 runs it, learnt from the kernel's
//! net/ipv4/tcp_input.c, tcp_output.c, tcp_timer.c, tcp_recovery.c, tcp_rate.c and the
//! congestion modules, written afresh. docs/models/tcp.md#the-linux-stack lists each mechanism
//! with its source.

pub mod cc;
pub mod rack;
pub mod receive;
pub mod rtt;
pub mod rtx;
pub mod sender;
pub mod timer_wheel;
