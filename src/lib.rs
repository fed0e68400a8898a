//! agentsh: a gatekeeping shell for AI coding agents.
//!
//! The pipeline is `argv -> invocation -> parse -> assess -> decide -> approve -> audit -> exec`.
//! `parse`, `assess`, `rules` and `decide` are pure: they take values and return values.
#![forbid(unsafe_code)]

pub mod assess;
pub mod cli;
pub mod commands;
pub mod config;
pub mod decide;
pub mod exec;
pub mod explain;
pub mod gate;
pub mod model;
pub mod parse;
pub mod prompt;
pub mod rules;
pub mod sanitize;
pub mod store;
pub mod trust;
pub mod tty;
