//! The shared 802.11 medium (docs/models/wifi.md): PHY timing, the DCF that contends for it,
//! and Bianchi's saturation model that validates the DCF.

pub mod ampdu;
pub mod bianchi;
pub mod dcf;
pub mod ht;
pub mod phy;
