//! # caro-match
//!
//! A match runner for engines that speak the Gomocup (Piskvork) protocol, in the spirit of
//! cutechess-cli and fastchess for chess and c-gomoku-cli for gomoku: two engines play many
//! games from balanced openings, each opening twice with colours swapped, under a referee that
//! never lets one misbehaving engine stop the match; the result is an Elo difference with a 95%
//! interval, optionally an SPRT verdict, and every game as a `.psq` record and a JSON line.
//!
//! - [`process`]: an engine child process with a reader thread and timed reads;
//! - [`referee`]: one game over the protocol, judged by [`caro_engine::Board`];
//! - [`runner`]: the schedule, parallel workers, output files and running statistics;
//! - [`stats`]: Elo, trinomial and pentanomial intervals, SPRT;
//! - [`openings`]: opening files and the generator behind `data/openings/`;
//! - [`psq`]: the Piskvork `.psq` game record.
//!
//! `docs/match.md` is the user's guide. The library never prints; the `caro-match` binary does.
#![deny(missing_docs)]

pub mod openings;
pub mod process;
pub mod psq;
pub mod referee;
pub mod runner;
pub mod stats;
