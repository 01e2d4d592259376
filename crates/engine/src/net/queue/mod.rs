//! Active queue management at a link's transmitter. Drop-tail is the link's default (a packet
//! finding `queue` packets waiting is dropped); RED adds early marking or dropping.

pub mod red;
