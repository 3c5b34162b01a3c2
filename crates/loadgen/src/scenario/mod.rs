//! The scenarios. Each takes a [`Target`](crate::Target) and its options, runs a bounded
//! amount of traffic, and returns a report (serializable, with a one-line human summary and the
//! key numbers compared between targets).

pub mod abuse;
pub mod bots;
pub mod connections;
pub mod fanout;
pub mod rooms;
