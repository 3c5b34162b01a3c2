//! Post-game analysis (issue 18): every position of a stored game searched by the engine at a
//! fixed node budget, and each move judged from how the evaluation changed for its mover.
//!
//! This module is the pure part: it turns a game (rules and moves) and a search function into an
//! [`Analysis`]. It never schedules a search, touches a store or sees HTTP; where the searches run
//! (the bot pool, in idle slots only) is `bot::BotPool::analyse_position`, and who may ask for
//! one is `http::api`. docs/analysis.md documents the budget, the priority and the thresholds.

use std::collections::HashMap;
use std::sync::Arc;

use caro_engine::search::{Score, SearchResult};
use caro_engine::{Board, Move, Player, Rules, Status};
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};

use crate::config::AnalysisConfig;
use crate::store::{GameRecord, StoreEvent};

/// A drop of at least this many engine units for the mover marks a mistake.
pub const MISTAKE_DROP: i32 = 500;
/// A drop of at least this many engine units for the mover marks a blunder.
pub const BLUNDER_DROP: i32 = 1500;
/// Evaluations are clamped to this (and forced wins to it) before drops are measured, so a
/// drop between two lost positions never counts as a blunder.
pub const EVAL_CAP: i32 = 4500;

/// A cell, as the wire writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cell {
    /// Column.
    pub x: u8,
    /// Row.
    pub y: u8,
}

impl From<Move> for Cell {
    fn from(m: Move) -> Cell {
        Cell { x: m.x, y: m.y }
    }
}

/// How bad a move was.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Judgement {
    /// The evaluation dropped by [`MISTAKE_DROP`] or more, or a forced win (not an immediate
    /// one) was let go.
    Mistake,
    /// The evaluation dropped by [`BLUNDER_DROP`] or more, or the move let the opponent force a
    /// win that did not exist before, or it missed a win on the spot.
    Blunder,
}

/// One position of the game: the one before move `ply + 1` (ply 0 is the empty board, the last
/// one the position after the last move).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PositionEval {
    /// Moves played before this position.
    pub ply: u32,
    /// Evaluation from X's point of view in engine units; `null` when `mate` is set.
    pub eval: Option<i32>,
    /// A forced win found: plies to its end, positive when X wins, negative when O does (0: the
    /// game is won on the board).
    pub mate: Option<i32>,
    /// The engine's move here; `null` when the game is over on the board.
    pub best: Option<Cell>,
    /// The engine's line, starting with `best`.
    pub pv: Vec<Cell>,
    /// Deepest completed iteration.
    pub depth: u8,
    /// Nodes searched.
    pub nodes: u64,
    /// What the move that led here (move number `ply`) was, for its mover; absent at ply 0 and
    /// for a sound move.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub judgement: Option<Judgement>,
}

/// A finished analysis.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Analysis {
    /// The node budget each position was searched with.
    pub nodes_per_position: u64,
    /// One per position: `moves + 1` of them.
    pub positions: Vec<PositionEval>,
}

/// Why a game cannot be analysed.
#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    /// The stored rules are not ones this server plays.
    #[error("the game's rules: {0}")]
    Rules(#[from] caro_engine::RulesError),
    /// A stored move is illegal (a corrupt record).
    #[error("move {0} of the stored game is illegal")]
    Move(usize),
    /// Stopped (server shutdown).
    #[error("stopped")]
    Stopped,
}

/// The rules of a stored game.
pub fn rules_of(game: &crate::store::GameSummary) -> Result<Rules, caro_engine::RulesError> {
    Ok(match game.game.as_str() {
        "tictactoe" => Rules::tictactoe(),
        _ => Rules::caro(
            game.width,
            game.height,
            game.rule.as_deref().unwrap_or("freestyle").parse()?,
        )?,
    })
}

/// The value of a score for `me` when `to_move` is to move, clamped for measuring drops.
fn value_for(score: Score, to_move: Player, me: Player) -> i32 {
    let v = if score.is_win() {
        EVAL_CAP
    } else if score.is_loss() {
        -EVAL_CAP
    } else {
        score.get().clamp(-EVAL_CAP, EVAL_CAP)
    };
    if to_move == me {
        v
    } else {
        -v
    }
}

/// A position's score for the side to move, as the search (or the board, when over) gives it.
#[derive(Clone, Copy, Debug)]
struct Seen {
    to_move: Player,
    score: Score,
}

impl Seen {
    /// The score `pos` records from X's point of view, back for the side to move (X moves
    /// first: X is to move at even plies). A `mate` of 0 is a game won on the board, lost for
    /// the side to move.
    fn of(pos: &PositionEval) -> Seen {
        let to_move = if pos.ply % 2 == 0 {
            Player::X
        } else {
            Player::O
        };
        let sign = if to_move == Player::X { 1 } else { -1 };
        let score = match (pos.mate, pos.eval) {
            (Some(0), _) => -Score::WIN,
            (Some(m), _) if m * sign > 0 => Score::win_in(m.unsigned_abs() as usize),
            (Some(m), _) => Score::loss_in(m.unsigned_abs() as usize),
            (None, e) => Score::new(e.unwrap_or(0) * sign),
        };
        Seen { to_move, score }
    }
}

/// Every position of the game (`moves.len() + 1`: the empty board first).
pub fn boards(rules: Rules, moves: &[Move]) -> Result<Vec<Board>, AnalysisError> {
    let mut board = Board::new(rules);
    let mut out = Vec::with_capacity(moves.len() + 1);
    out.push(board.clone());
    for (i, &m) in moves.iter().enumerate() {
        board.try_play(m).map_err(|_| AnalysisError::Move(i + 1))?;
        out.push(board.clone());
    }
    Ok(out)
}

/// The analysis of `boards` (from [`boards`]), given the search result of each position where
/// the game is not over (`results[i]` for `boards[i]`; `None` where it is over).
pub fn assemble(
    boards: &[Board],
    results: Vec<Option<SearchResult>>,
    nodes_per_position: u64,
) -> Analysis {
    let mut positions = Vec::with_capacity(boards.len());
    for (ply, (board, result)) in boards.iter().zip(results).enumerate() {
        let to_move = board.to_move();
        let pos = match (board.status(), result) {
            (Status::Won(winner), _) => {
                // The side to move has lost on the board.
                let score = if winner == to_move {
                    Score::WIN
                } else {
                    -Score::WIN
                };
                terminal(ply, score, to_move)
            }
            (Status::Draw, _) | (Status::Ongoing, None) => terminal(ply, Score::ZERO, to_move),
            (Status::Ongoing, Some(r)) => {
                let pos = PositionEval {
                    ply: ply as u32,
                    eval: None,
                    mate: None,
                    best: Some(r.best.into()),
                    pv: r.pv.iter().map(|&m| m.into()).collect(),
                    depth: r.depth,
                    nodes: r.nodes,
                    judgement: None,
                };
                with_score(pos, r.score, to_move)
            }
        };
        positions.push(pos);
    }
    let played: Vec<Cell> = boards
        .last()
        .map(|b| b.moves().iter().map(|&m| m.into()).collect())
        .unwrap_or_default();
    let mut analysis = Analysis {
        nodes_per_position,
        positions,
    };
    analysis.judge(&played);
    analysis
}

impl Analysis {
    /// Marks each move (`played[i]` is move `i + 1`) by the scores before and after it, with
    /// the thresholds of this build: run as the analysis is made, and again on a stored one as
    /// it is served, so that its marks always agree with the `thresholds` the API reports (an
    /// analysis stored before the thresholds changed is judged anew; its scores are kept).
    pub fn judge(&mut self, played: &[Cell]) {
        let seen: Vec<Seen> = self.positions.iter().map(Seen::of).collect();
        for pos in &mut self.positions {
            pos.judgement = None;
        }
        for ply in 1..self.positions.len() {
            // The move the analysis itself chose in the position before is never marked: a
            // drop after it is the analysis's own inconsistency between two searches (a forced
            // win found in one and not the other, the side to move's bias), not the mover's
            // error.
            let move_here = played.get(ply - 1).copied();
            if move_here.is_some() && move_here == self.positions[ply - 1].best {
                continue;
            }
            self.positions[ply].judgement = judge(seen[ply - 1], seen[ply]);
        }
    }
}

/// Analyses `moves` under `rules` in one go, calling `search` on every position where the game
/// is not over (it returns `None` only when told to stop). For tests and tools; the server
/// searches position by position on the bot pool ([`Analyses`]).
pub fn analyse(
    rules: Rules,
    moves: &[Move],
    nodes_per_position: u64,
    mut search: impl FnMut(&Board) -> Option<SearchResult>,
) -> Result<Analysis, AnalysisError> {
    let boards = boards(rules, moves)?;
    let mut results = Vec::with_capacity(boards.len());
    for b in &boards {
        results.push(match b.status() {
            Status::Ongoing => Some(search(b).ok_or(AnalysisError::Stopped)?),
            _ => None,
        });
    }
    Ok(assemble(&boards, results, nodes_per_position))
}

fn terminal(ply: usize, score: Score, to_move: Player) -> PositionEval {
    let pos = PositionEval {
        ply: ply as u32,
        eval: None,
        mate: None,
        best: None,
        pv: Vec::new(),
        depth: 0,
        nodes: 0,
        judgement: None,
    };
    with_score(pos, score, to_move)
}

/// Fills `eval` or `mate` from X's point of view.
fn with_score(mut pos: PositionEval, score: Score, to_move: Player) -> PositionEval {
    let sign = if to_move == Player::X { 1 } else { -1 };
    match score.mate_plies() {
        Some(plies) => pos.mate = Some(if score.is_win() { plies } else { -plies } * sign),
        None => pos.eval = Some(score.get() * sign),
    }
    pos
}

/// The move between `before` and `after`, judged for its mover (the side to move `before`).
fn judge(before: Seen, after: Seen) -> Option<Judgement> {
    let me = before.to_move;
    let mine = |s: Seen| if s.to_move == me { s.score } else { -s.score };
    let (b, a) = (mine(before), mine(after));
    if !b.is_loss() && a.is_loss() {
        // Let the opponent force a win that was not there (ignoring a four is the plainest).
        return Some(Judgement::Blunder);
    }
    if b.is_win() && !a.is_win() {
        // A win in one (a five to make) missed is a blunder; a longer forced win let go, a
        // mistake.
        return Some(if b.mate_plies() == Some(1) {
            Judgement::Blunder
        } else {
            Judgement::Mistake
        });
    }
    let drop =
        value_for(before.score, before.to_move, me) - value_for(after.score, after.to_move, me);
    if drop >= BLUNDER_DROP {
        Some(Judgement::Blunder)
    } else if drop >= MISTAKE_DROP {
        Some(Judgement::Mistake)
    } else {
        None
    }
}

/// How far a running analysis is (`GET /api/games/{id}/analysis` while it runs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Progress {
    /// Positions searched.
    pub done: usize,
    /// Positions in the game.
    pub total: usize,
}

/// Why an analysis was not started.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StartError {
    /// The game is still being played.
    #[error("the game is not finished")]
    NotFinished,
    /// An analysis of this game is already running.
    #[error("an analysis of this game is already running")]
    Running,
    /// The requester has `analysis.per_player` analyses queued or running.
    #[error("too many analyses of yours are queued")]
    PlayerCap,
    /// The server has `analysis.max_queued` analyses queued or running.
    #[error("the analysis queue is full")]
    ServerCap,
    /// The stored game cannot be replayed (rules or moves).
    #[error("the stored game cannot be analysed")]
    Unplayable,
}

/// Takes a game's job out of the running analyses when dropped.
struct Forget(Arc<Analyses>, String);

impl Drop for Forget {
    fn drop(&mut self) {
        self.0.jobs.lock().remove(&self.1);
    }
}

struct Job {
    requester: String,
    progress: Progress,
}

/// The analyses queued or running, by game id, and their caps (`[analysis]`). Each runs as a
/// task of the server's tracker, one position at a time on the bot pool's idle slots.
pub struct Analyses {
    config: AnalysisConfig,
    jobs: Mutex<HashMap<String, Job>>,
}

impl Analyses {
    /// No analysis running yet.
    pub fn new(config: AnalysisConfig) -> Analyses {
        Analyses {
            config,
            jobs: Mutex::new(HashMap::new()),
        }
    }

    /// The progress of the game's running analysis, if one runs.
    pub fn progress(&self, game_id: &str) -> Option<Progress> {
        self.jobs.lock().get(game_id).map(|j| j.progress)
    }

    /// Starts analysing a stored game for `requester` (the per-player cap's key), unless a cap
    /// or the game's state forbids it. The result is recorded to the store when done.
    pub fn start(
        self: &Arc<Analyses>,
        server: &Arc<crate::Server>,
        game: &GameRecord,
        requester: String,
    ) -> Result<Progress, StartError> {
        if game.summary.result.is_none() {
            return Err(StartError::NotFinished);
        }
        let rules = rules_of(&game.summary).map_err(|_| StartError::Unplayable)?;
        let moves: Vec<Move> = game.moves.iter().map(|m| Move::new(m.x, m.y)).collect();
        let boards = boards(rules, &moves).map_err(|_| StartError::Unplayable)?;
        let id = game.summary.id.clone();
        let progress = Progress {
            done: 0,
            total: boards.len(),
        };
        {
            let mut jobs = self.jobs.lock();
            if jobs.contains_key(&id) {
                return Err(StartError::Running);
            }
            if jobs.len() >= self.config.max_queued {
                return Err(StartError::ServerCap);
            }
            let mine = jobs.values().filter(|j| j.requester == requester).count();
            if mine >= self.config.per_player {
                return Err(StartError::PlayerCap);
            }
            jobs.insert(
                id.clone(),
                Job {
                    requester,
                    progress,
                },
            );
        }
        let this = self.clone();
        let server = server.clone();
        let nodes = self.config.nodes_per_position;
        server.tracker.clone().spawn(async move {
            // The job leaves the map however the task ends (done, stopped, or a panic), so a
            // game is never kept "running" for ever.
            let _forget = Forget(this.clone(), id.clone());
            let cancel = server.shutdown.clone();
            let mut results = Vec::with_capacity(boards.len());
            for (i, board) in boards.iter().enumerate() {
                let result = match board.status() {
                    Status::Ongoing => {
                        match server
                            .bots
                            .analyse_position(board.clone(), nodes, &cancel)
                            .await
                        {
                            Some(r) => Some(r),
                            // Shutdown, or a search that failed: nothing is stored, and the
                            // game may be analysed again.
                            None => return,
                        }
                    }
                    _ => None,
                };
                results.push(result);
                if let Some(j) = this.jobs.lock().get_mut(&id) {
                    j.progress.done = i + 1;
                }
            }
            let analysis = assemble(&boards, results, nodes);
            let json = serde_json::to_string(&analysis).expect("plain data serializes");
            let commit = server.store.record(StoreEvent::Analysis {
                game_id: id.clone(),
                nodes_per_position: nodes,
                json,
            });
            if let Err(e) = commit.wait().await {
                tracing::error!(game = %id, "storing an analysis failed: {e}");
            }
            // `_forget` removes the job only now, once stored: a GET sees the progress until
            // the result is there.
            tracing::info!(game = %id, positions = boards.len(), "game analysed");
        });
        Ok(progress)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use caro_engine::search::{Engine, Limits};
    use std::sync::atomic::AtomicBool;

    fn engine_search(nodes: u64) -> impl FnMut(&Board) -> Option<SearchResult> {
        let mut engine = Engine::new(4);
        let stop = AtomicBool::new(false);
        move |board| {
            let limits = Limits {
                max_depth: 64,
                time: None,
                time_max: None,
                nodes: Some(nodes),
            };
            engine.search(board, &limits, &stop, &mut |_| {})
        }
    }

    /// X builds a four on row 7 (x 3..=6) whose left end O closed at once, so it is never open
    /// before it is a four; O plays elsewhere and, at its 4th move, ignores the four; X makes
    /// five. O's 4th move (ply 8) is the blunder.
    pub(crate) fn ignored_four() -> Vec<Move> {
        [
            (7, 7),
            (6, 7), // closes the left end at once
            (8, 7),
            (8, 8),
            (9, 7),
            (9, 8),
            (10, 7), // a four: (11, 7) makes five
            (7, 8),  // ignores it
            (11, 7),
        ]
        .iter()
        .map(|&(x, y)| Move::new(x, y))
        .collect()
    }

    /// A search result of `score` with `best` as its move.
    fn result(best: Move, score: i32) -> SearchResult {
        SearchResult {
            best,
            score: Score::new(score),
            depth: 10,
            nodes: 1000,
            pv: vec![best],
            elapsed: std::time::Duration::ZERO,
        }
    }

    #[test]
    fn the_analysis_never_marks_its_own_choice() {
        // X plays the centre; the searches say +100 for X before it and +1500 for O after it
        // (a drop of 1600 for X): a blunder, unless the centre was the analysis's own choice.
        let (centre, corner) = (Move::new(7, 7), Move::new(0, 0));
        let boards = boards(Rules::caro_default(), &[centre]).unwrap();
        for (best, expected) in [(corner, Some(Judgement::Blunder)), (centre, None)] {
            let results = vec![Some(result(best, 100)), Some(result(corner, 1500))];
            let a = assemble(&boards, results, 1000);
            assert_eq!(a.positions[1].judgement, expected, "best {best:?}");
        }
        // The same with a forced win for O found only after the move (rule 1).
        let win = Score::WIN.get() - 9;
        for (best, expected) in [(corner, Some(Judgement::Blunder)), (centre, None)] {
            let results = vec![Some(result(best, 100)), Some(result(corner, win))];
            let a = assemble(&boards, results, 1000);
            assert_eq!(a.positions[1].mate, Some(-9));
            assert_eq!(a.positions[1].judgement, expected, "best {best:?}");
        }
    }

    #[test]
    fn a_stored_score_reads_back_as_the_search_gave_it() {
        // What `judge` reads from a stored analysis is what the searches gave.
        for ply in [0, 1, 6, 7] {
            let to_move = if ply % 2 == 0 { Player::X } else { Player::O };
            for score in [
                Score::ZERO,
                Score::new(1234),
                Score::new(-77),
                Score::win_in(9),
                Score::loss_in(4),
                -Score::WIN,
            ] {
                let seen = Seen::of(&terminal(ply, score, to_move));
                assert_eq!((seen.to_move, seen.score), (to_move, score), "ply {ply}");
            }
        }
    }

    #[test]
    fn every_position_is_evaluated_and_the_ignored_four_is_a_blunder() {
        let moves = ignored_four();
        let a = analyse(
            Rules::caro_default(),
            &moves,
            200_000,
            engine_search(200_000),
        )
        .unwrap();
        assert_eq!(a.positions.len(), moves.len() + 1);
        for p in &a.positions {
            assert!(p.eval.is_some() != p.mate.is_some(), "{p:?}");
        }
        // After O ignores the four, X wins in one.
        assert_eq!(a.positions[8].mate, Some(1));
        assert_eq!(a.positions[8].judgement, Some(Judgement::Blunder));
        let blunders: Vec<u32> = a
            .positions
            .iter()
            .filter(|p| p.judgement == Some(Judgement::Blunder))
            .map(|p| p.ply)
            .collect();
        assert_eq!(blunders, [8]);
        // The final position is won on the board by X.
        assert_eq!(a.positions[9].mate, Some(0));
        assert_eq!(a.positions[9].best, None);
    }
}
