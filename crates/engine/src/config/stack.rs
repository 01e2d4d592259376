//! `tcp.stack` presets: the constants of a real TCP implementation that `TcpConfig` models.
//!
//! Precedence: engine defaults < the preset < keys written in the scenario (or `--set`). A preset
//! fills only the `tcp.*` keys the scenario leaves unset; in `tcp.delayed_ack` it fills each
//! sub-key separately. Sources and estimates are listed in docs/models/tcp.md#stack-presets.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
pub enum Stack {
    /// FreeBSD 4.3 (the testbeds of seeds 000 and 002).
    #[serde(rename = "freebsd-4.3")]
    Freebsd43,
    /// Linux 2.2 (RedHat 6.1, the testbed of seed 003).
    #[serde(rename = "linux-2.2")]
    Linux22,
    /// Linux 6: its constants here, and the Linux sender and receiver (`tcp::linux`).
    #[serde(rename = "linux-6")]
    Linux6,
}

impl Stack {
    /// The preset's `tcp.*` values, written as a scenario would write them.
    pub fn preset(self) -> Value {
        match self {
            // FreeBSD 4.x kept TCP timers as per-connection callouts counted in kernel ticks
            // (hz = 100 on i386, so 10 ms), not the 500 ms slow timer of 4.4BSD.
            Stack::Freebsd43 => json!({
                "timer_tick": "10ms",          // 1/hz, hz = 100 (i386 default)
                "delayed_ack_tick": "10ms",    // the delayed-ACK callout also counts hz ticks
                "clock_granularity": "10ms",   // RTTs are measured in ticks
                "initial_rto": "3s",           // tcp_timer.h TCPTV_RTOBASE = 3*hz
                "min_rto": "1s",               // tcp_timer.h TCPTV_MIN = 1*hz (t_rttmin)
                "max_rto": "64s",              // tcp_timer.h TCPTV_REXMTMAX = 64*hz
                "delayed_ack": {"every": 2, "timeout": "100ms"}, // TCPTV_DELACK = hz/PR_FASTHZ/2
                "initial_window": 1,           // one segment (slow-start flight size 1)
                "initial_ssthresh": "infinite",// TCP_MAXWIN << TCP_MAX_WINSHIFT
                "send_buffer": "32KiB",        // tcp_usrreq.c tcp_sendspace = 32 KiB
                "receive_buffer": 57344,       // tcp_usrreq.c tcp_recvspace (estimate, 4.6 value)
                "timestamps": true,            // net.inet.tcp.rfc1323 = 1 by default
                "window_scale": false,         // requested only for buffers above 64 KiB
                "limited_transmit": false,     // RFC 3042 postdates 4.3
                "dupack_threshold": 3,         // tcprexmtthresh
                "cwnd_growth": "per_ack",      // cwnd += maxseg*maxseg/cwnd per ACK
                "rtt_sampling": "one_segment", // t_rtttime/t_rtseq; the TSecr when timestamps are on
            }),
            Stack::Linux22 => json!({
                "timer_tick": "10ms",          // jiffies, HZ = 100 on i386
                "delayed_ack_tick": "10ms",
                "clock_granularity": "10ms",
                "initial_rto": "3s",           // include/net/tcp.h TCP_TIMEOUT_INIT = 3*HZ
                "min_rto": "200ms",            // TCP_RTO_MIN = HZ/5
                "max_rto": "120s",             // TCP_RTO_MAX = 120*HZ
                "delayed_ack": {"every": 2, "timeout": "200ms"}, // estimate, see docs
                "initial_window": 2,           // estimate, see docs
                "initial_ssthresh": "infinite",// snd_ssthresh = 0x7fffffff
                "send_buffer": 65535,          // net.core.wmem_default (SK_WMEM_MAX)
                "receive_buffer": 65535,       // net.core.rmem_default (SK_RMEM_MAX)
                "timestamps": true,            // sysctl tcp_timestamps = 1
                "window_scale": true,          // sysctl tcp_window_scaling = 1
                "limited_transmit": false,
                "dupack_threshold": 3,         // sysctl_tcp_reordering's start value
                "cwnd_growth": "per_ack",
                "rtt_sampling": "every_ack",   // tcp_ack_no_tstamp: any ACK of unretransmitted data
            }),
            Stack::Linux6 => json!({
                "timer_tick": "4ms",           // jiffies, kernel/Kconfig.hz default HZ_250
                "delayed_ack_tick": "4ms",
                // Linux floors RTTVAR at TCP_RTO_MIN: RTO = SRTT + max(200 ms, 4 RTTVAR).
                "clock_granularity": "200ms",
                "initial_rto": "1s",           // TCP_TIMEOUT_INIT = 1*HZ (RFC 6298)
                "min_rto": "200ms",            // TCP_RTO_MIN = HZ/5
                "max_rto": "120s",             // TCP_RTO_MAX = 120*HZ
                "delayed_ack": {"every": 2, "timeout": "40ms"},  // TCP_DELACK_MIN = HZ/25
                "initial_window": 10,          // TCP_INIT_CWND = 10 (RFC 6928)
                "initial_ssthresh": "infinite",// TCP_INFINITE_SSTHRESH
                // tcp_rmem[2] = 32 MiB (Linux 6.16 on) as a window (scaling ratio 160/256); the
                // buffer starts at tcp_rmem[1] = 128 KiB and autotuning grows it.
                "receive_buffer": 20971520,
                "receive_autotune": true,
                "pacing": false,               // default qdisc fq_codel: only BBR paces
                "timestamps": true,            // net.ipv4.tcp_timestamps = 1
                "window_scale": true,          // net.ipv4.tcp_window_scaling = 1
                "limited_transmit": true,      // RFC 3042 in the Disorder state
                "dupack_threshold": 3,         // net.ipv4.tcp_reordering = 3
                "cwnd_growth": "per_byte",     // slow start counts segments acknowledged
                "rtt_sampling": "every_ack",   // tcp_clean_rtx_queue first_ackt, SACK first_sackt
            }),
        }
    }
}

/// Fill `tcp` (the scenario's `tcp` table) with the preset named by its `stack` key, keeping every
/// key already there. Returns the table unchanged when no stack is named.
pub(crate) fn apply_preset(tcp: &Value) -> Result<Value, crate::error::EngineError> {
    let Value::Object(table) = tcp else { return Ok(tcp.clone()) };
    let Some(name) = table.get("stack") else { return Ok(tcp.clone()) };
    let stack: Stack = super::typed(name, "tcp.stack")?;
    let mut out: Map<String, Value> = table.clone();
    let Value::Object(preset) = stack.preset() else { unreachable!("presets are tables") };
    for (key, value) in preset {
        match (out.get_mut(&key), value) {
            (None, v) => {
                out.insert(key, v);
            }
            // A partial delayed_ack table keeps the preset's other sub-key.
            (Some(Value::Object(mine)), Value::Object(theirs)) => {
                for (k, v) in theirs {
                    mine.entry(k).or_insert(v);
                }
            }
            (Some(_), _) => {}
        }
    }
    Ok(Value::Object(out))
}
