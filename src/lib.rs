//! agentsh: a gatekeeping shell for AI coding agents.
//!
//! One command is one trip down a pipeline, and each stage is a folder:
//! `argv -> cli -> run (gate) -> judge -> ask -> record -> run (exec)`.
//! Stages depend downward only, in this order (a test keeps it: `tests/layering.rs`):
//! `cli` -> `run` -> `ask` -> `record` -> `policy` -> `judge` -> `model`, `text`.
//! `commands` (the management subcommands) may use any stage; no stage uses `commands`.
// Two small modules opt out, with SAFETY comments: `run::sandbox::sys` (the system calls the
// box makes that no crate wraps safely, and `pre_exec`) and `run::crash_guard` (a signal handler
// that turns a crash while judging into a refusal).
#![deny(unsafe_code)]

pub mod ask;
pub mod cli;
pub mod commands;
pub mod judge;
pub mod model;
pub mod policy;
pub mod record;
pub mod run;
pub mod text;
