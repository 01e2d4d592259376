//! The UDP ends of a flow: the source, which counts round trips of echoed datagrams, and the
//! destination, which either keeps what arrives or, as an echo server (RFC 862), sends every
//! datagram straight back.

use crate::units::SimTime;

/// A UDP datagram: its payload bytes and when its message was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Datagram {
    pub payload: u32,
    pub written_at: SimTime,
}

/// What a UDP end does with a datagram that reached it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UdpEnd {
    /// The flow's source: an arrival is an echo coming back.
    Source,
    /// The destination; `echo`: it returns every datagram.
    Destination { echo: bool },
}

/// The outcome of one arrival.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Received {
    /// The destination's application got a datagram (it counts as delivered).
    pub delivered: bool,
    /// A message is done: one way, or a round trip back at the source.
    pub completed: bool,
    /// Send this back to the source now.
    pub reply: Option<Datagram>,
}

impl UdpEnd {
    pub fn receive(self, d: Datagram) -> Received {
        match self {
            UdpEnd::Source => Received { delivered: false, completed: true, reply: None },
            UdpEnd::Destination { echo: false } => Received { delivered: true, completed: true, reply: None },
            UdpEnd::Destination { echo: true } => Received { delivered: true, completed: false, reply: Some(d) },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_echo_server_returns_the_datagram_unchanged_rfc862() {
        let d = Datagram { payload: 64, written_at: SimTime(5) };
        let r = UdpEnd::Destination { echo: true }.receive(d);
        assert_eq!((r.delivered, r.completed, r.reply), (true, false, Some(d)));
        let back = UdpEnd::Source.receive(d);
        assert_eq!((back.delivered, back.completed, back.reply), (false, true, None));
        let plain = UdpEnd::Destination { echo: false }.receive(d);
        assert_eq!((plain.delivered, plain.completed, plain.reply), (true, true, None));
    }
}
