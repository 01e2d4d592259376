//! The split node's application (docs/models/split.md): once the first connection is open (its
//! SYN arrived) it opens the second; it reads from the first what the relay buffer has room for
//! and writes it into the second, whose send buffer is the relay buffer; after the first
//! connection's EOF and its last byte, it closes the second.

use crate::tcp::endpoint::Endpoint;

#[derive(Debug, Clone, Default)]
pub struct Relay {
    /// Bound of the relay buffer (bytes read from the first connection and not yet
    /// acknowledged on the second).
    buffer: u64,
    /// The most bytes it held at once, and the bytes it moved.
    pub max_held: u64,
    pub relayed: u64,
}

/// One pass of the relay: the bytes it held before, and those it moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pumped {
    pub held: u64,
    pub moved: u64,
}

impl Relay {
    pub fn new(buffer: u64) -> Self {
        Relay { buffer, ..Default::default() }
    }

    /// Something happened on either connection: `inn` is the first connection's end at the
    /// split node, `out` the second's (opened with `open` once the first is). `None` until the
    /// first connection is open.
    pub fn pump(&mut self, inn: &mut Endpoint, out: &mut Option<Endpoint>, open: impl FnOnce() -> Endpoint) -> Option<Pumped> {
        inn.receiver.as_ref()?;
        let out = out.get_or_insert_with(open);
        let held = out.sender.unacked_data();
        let moved = inn.read(self.buffer.saturating_sub(held));
        if moved > 0 {
            out.write(moved);
        }
        if inn.receiver.as_ref().is_some_and(|r| r.eof_read()) && !out.sender.is_closing() {
            out.sender.close();
        }
        self.relayed += moved;
        self.max_held = self.max_held.max(held + moved);
        Some(Pumped { held, moved })
    }
}
