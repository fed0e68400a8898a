//! Judge: command text + policy -> a verdict for every part. Pure.
//!
//! The judge: command text + policy -> a verdict for every part. Pure: it takes values and
//! returns values. No files, no environment, no clock, no terminal, no threads; what it needs
//! from the world (the policy, an agent wrapper's snapshot) is read elsewhere and passed in.
//! It imports only from itself, `model` and `text`.

pub mod agent_wrappers;
pub mod assess;
pub mod containment;
pub mod custom_rules;
pub mod decide;
pub mod dialect;
pub mod escapes;
pub mod levels;
pub mod line_gate;
pub mod long_text;
pub mod no_box;
pub mod parse;
pub mod plain_words;
pub mod raw_scan;
pub mod readings;
pub mod rules;
pub mod sed;
pub mod startup;
pub mod unboxed;
