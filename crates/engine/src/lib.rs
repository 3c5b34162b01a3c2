//! # caro-engine
//!
//! Pure game code for caro-arena: the rules of Caro (gomoku, with the freestyle, exact-five,
//! caro and caro-with-overline variants) and tic-tac-toe (and the m,n,k game), Zobrist hashing,
//! the evaluation and the alpha-beta search behind the bots. No async runtime, no sockets, no
//! files: the server, the `pbrain-caro` Gomocup front end, benches and tests all drive this same
//! code.
//!
//! ```
//! use caro_engine::{Board, Move, Player, Rule, Rules, Status};
//!
//! let mut board = Board::new(Rules::caro(15, 15, Rule::Freestyle).unwrap());
//! for i in 0..4 {
//!     board.try_play(Move::new(i, 7)).unwrap(); // X builds a row
//!     board.try_play(Move::new(i, 9)).unwrap(); // O dawdles
//! }
//! assert_eq!(board.try_play(Move::new(4, 7)), Ok(Status::Won(Player::X)));
//! assert_eq!(board.winning_line().unwrap().len(), 5);
//! assert!(board.try_play(Move::new(4, 9)).is_err()); // the game is over
//! ```
#![deny(missing_docs)]

pub mod bot;
pub mod classic;
pub mod game;
pub mod policy;
pub mod positions;
pub mod rules;
pub mod search;
pub mod selfplay;
pub mod spsa;
pub mod texel;
pub mod zobrist;

pub use game::{Board, Cell, Move, MoveError, Player, SetupError, Status};
pub use rules::{GameKind, Rule, Rules, RulesError};
