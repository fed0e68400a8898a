//! agentsh: a gatekeeping shell for AI coding agents.
//!
//! The pipeline is `argv -> invocation -> parse -> assess -> decide -> approve -> audit -> exec`.
//! `parse`, `assess`, `rules` and `decide` are pure: they take values and return values.
#![forbid(unsafe_code)]

pub mod approval;
pub mod assess;
pub mod audit;
pub mod cli;
pub mod clock;
pub mod commands;
pub mod config;
pub mod config_fast;
pub mod custom_rules;
pub mod decide;
pub mod dirs;
pub mod exec;
pub mod explain;
pub mod fastargs;
pub mod fastparse;
pub mod gate;
pub mod harness;
pub mod levels;
pub mod model;
pub mod parse;
pub mod pause;
pub mod pieces;
pub mod prompt;
pub mod queue;
pub mod rules;
pub mod sanitize;
pub mod store;
pub mod strlist;
pub mod syslog;
pub mod trust;
pub mod tty;
