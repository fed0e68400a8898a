//! Run: the pipeline of one command (gate), bounded judging, messages, and exec.
//!
//! Running one command: the gate (the pipeline of one command, read top to bottom), the
//! bounded judging at the binary's edge, the messages about a verdict, and exec. Only this
//! stage acts on a verdict, and only by matching on it.

pub mod crash_guard;
pub mod exec;
pub mod explain;
pub mod gate;
pub mod invocation;
pub mod judging;
pub mod pagers;
pub mod sandbox;
