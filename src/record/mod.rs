//! Record: every decision as one hash-chained audit line, written before anything runs.
//!
//! The record: every decision as one hash-chained audit line (and optionally syslog), written
//! before anything runs. It must not judge, ask or run.

pub mod audit;
pub mod clock;
pub mod seal;
pub mod syslog;
