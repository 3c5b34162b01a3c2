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
//! - [`score`]: the score of a match read back from its `games.jsonl` (a stopped match);
//! - [`rating`]: joint Elo ratings of many engines from the games of many matches;
//! - [`openings`]: opening files and the generator behind `data/openings/`;
//! - [`judge`]: an outside engine's evaluations of openings, to balance a book by them;
//! - [`tune`]: SPSA of our engine's numbers by play against another engine;
//! - [`psq`]: the Piskvork `.psq` game record, re-exported from `caro-gomocup`.
//!
//! `docs/match.md` is the user's guide. The library never prints; the `caro-match` binary does.
//!
//! ```
//! use caro_match::stats::{elo_from_score, Pentanomial, Wdl};
//!
//! // 30 wins and 10 losses: a 75% score, about +191 Elo.
//! let wdl = Wdl { wins: 30, draws: 0, losses: 10 };
//! let elo = wdl.elo().unwrap();
//! assert!((elo.elo - elo_from_score(0.75)).abs() < 1e-9 && elo.low < elo.elo);
//! // Ten won pairs are not yet enough to accept +50 over 0 at alpha = beta = 0.05.
//! let pairs = Pentanomial { counts: [0, 0, 0, 0, 10] };
//! assert!(pairs.llr(0.0, 50.0) < (0.95f64 / 0.05).ln());
//! ```
#![deny(missing_docs)]

pub mod judge;
pub mod openings;
pub mod process;
pub mod rating;
pub mod referee;
pub mod runner;
pub mod score;
pub mod stats;
pub mod tune;

/// The Piskvork `.psq` game record (the workspace's one writer, in `caro-gomocup`).
pub use caro_gomocup::psq;
