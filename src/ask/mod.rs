//! Ask: a verdict that needs a person -> their answer, with a timeout.
//!
//! Asking a person: a verdict that needs approval -> an answer, from the person's terminal or
//! the approval queue, with a timeout; and the pause switch. It must not judge, and it must
//! never take an answer from stdin, arguments or the environment.

pub mod approval;
pub mod grant;
pub mod pause;
pub mod popup;
pub mod prompt;
pub mod queue;
pub mod terminal_owner;
pub mod terminal_turn;
pub mod tty;
