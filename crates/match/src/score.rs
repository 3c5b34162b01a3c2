//! The score of a match read back from its `games.jsonl`, for a match stopped before it wrote
//! `summary.json` (an SPRT killed for time, say): the games go through the runner's own
//! [`Scorekeeper`] in the order the file lists them (the order they finished, which is the order
//! the runner counted them), so the pentanomial, the Elo and the LLR are the ones the runner
//! would have printed after the last of them.
//!
//! Reads files (plain or gzipped); never prints.

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};

use caro_engine::Player;
use serde::{Deserialize, Serialize};

use crate::referee::Reason;
use crate::runner::{CountedGame, Scorekeeper, Summary};
use crate::stats::{GameScore, Sprt};

/// Why the games could not be scored.
#[derive(Debug, thiserror::Error)]
pub enum ScoreError {
    /// A file could not be read (missing, unreadable, not UTF-8, a broken gzip stream).
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the OS or the decoder said.
        source: std::io::Error,
    },
    /// A line is not a game record as `caro-match play` writes them.
    #[error("{path}, line {line}: {message}")]
    BadRecord {
        /// The file.
        path: PathBuf,
        /// Line number from 1.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
    /// The same game number twice in one file (two matches concatenated, say): its pairs could
    /// not be told apart.
    #[error("{path}, line {line}: game {game} appears twice in the file")]
    DuplicateGame {
        /// The file.
        path: PathBuf,
        /// Line number from 1 of the second one.
        line: usize,
        /// The game number.
        game: usize,
    },
    /// A game between other engines than the first game's.
    #[error(
        "{path}, line {line}: a game of {:?} vs {:?}, but the first game is {:?} vs {:?}: \
         score one pair of engines at a time",
        found[0], found[1], expected[0], expected[1]
    )]
    MixedEngines {
        /// The file.
        path: PathBuf,
        /// Line number from 1.
        line: usize,
        /// The first game's engines (engine 1, engine 2).
        expected: Box<[String; 2]>,
        /// This game's engines (engine 1, engine 2).
        found: Box<[String; 2]>,
    },
    /// `--engine` names neither engine.
    #[error("engine {name:?} played none of these games; engines: {:?}, {:?}", engines[0], engines[1])]
    UnknownEngine {
        /// The name asked for.
        name: String,
        /// The engines of the games.
        engines: [String; 2],
    },
    /// No game at all.
    #[error("no game in {}", files.join(", "))]
    NoGames {
        /// The files read.
        files: Vec<String>,
    },
}

/// The fields of a `games.jsonl` line that the score needs; the others are ignored.
#[derive(Deserialize)]
struct RecordFields {
    game: usize,
    pair: usize,
    x: String,
    o: String,
    engine1_color: Colour,
    engine1_score: GameScore,
    reason: Reason,
    restarted: [bool; 2],
}

/// `engine1_color` as written.
#[derive(Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Colour {
    X,
    O,
}

/// One game of a `games.jsonl` file.
#[derive(Clone, Debug)]
struct ReadGame {
    /// Line number from 1.
    line: usize,
    /// Game number from 1.
    game: usize,
    /// Pair number from 1.
    pair: usize,
    /// Engine 1 and engine 2 of its match.
    engines: [String; 2],
    /// From engine 1's point of view.
    counted: CountedGame,
}

/// The games of one `games.jsonl` file, in the file's order.
#[derive(Clone, Debug)]
pub struct GamesFile {
    /// Where they were read.
    pub path: PathBuf,
    games: Vec<ReadGame>,
}

/// The text of a games file and where it was read: `path` itself, gzipped or not (told by its
/// first bytes), or for a match's output directory its `games.jsonl` (or else
/// `games.jsonl.gz`, as the records in docs/strength-runs keep them).
pub fn read_games_text(path: &Path) -> Result<(PathBuf, String), ScoreError> {
    let path = if path.is_dir() {
        let plain = path.join("games.jsonl");
        let gzipped = path.join("games.jsonl.gz");
        if !plain.exists() && gzipped.exists() {
            gzipped
        } else {
            plain
        }
    } else {
        path.to_path_buf()
    };
    let io = |source| ScoreError::Io {
        path: path.clone(),
        source,
    };
    let bytes = std::fs::read(&path).map_err(io)?;
    let mut text = String::new();
    if bytes.starts_with(&[0x1f, 0x8b]) {
        flate2::read::MultiGzDecoder::new(&bytes[..])
            .read_to_string(&mut text)
            .map_err(io)?;
    } else {
        text = String::from_utf8(bytes)
            .map_err(|e| io(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))?;
    }
    Ok((path, text))
}

impl GamesFile {
    /// Reads `path`: a `games.jsonl` file, gzipped or not, or a match's output directory
    /// ([`read_games_text`]).
    pub fn read(path: &Path) -> Result<GamesFile, ScoreError> {
        let (path, text) = read_games_text(path)?;
        GamesFile::parse(path, &text)
    }

    /// The games of `text`, the contents of `path` (one JSON object per line, as
    /// `caro-match play` writes them; blank lines are skipped).
    pub fn parse(path: PathBuf, text: &str) -> Result<GamesFile, ScoreError> {
        let mut games = Vec::new();
        let mut seen = HashSet::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let bad = |message: String| ScoreError::BadRecord {
                path: path.clone(),
                line: i + 1,
                message,
            };
            let r: RecordFields = serde_json::from_str(line).map_err(|e| bad(json_message(&e)))?;
            if r.x == r.o {
                return Err(bad(format!("{:?} plays itself", r.x)));
            }
            if r.game == 0 || r.pair == 0 {
                return Err(bad("game and pair numbers start from 1".into()));
            }
            if !seen.insert(r.game) {
                return Err(ScoreError::DuplicateGame {
                    path: path.clone(),
                    line: i + 1,
                    game: r.game,
                });
            }
            let (engine1_color, engines) = match r.engine1_color {
                Colour::X => (Player::X, [r.x, r.o]),
                Colour::O => (Player::O, [r.o, r.x]),
            };
            games.push(ReadGame {
                line: i + 1,
                game: r.game,
                pair: r.pair,
                engines,
                counted: CountedGame {
                    engine1_color,
                    engine1_score: r.engine1_score,
                    reason: r.reason,
                    restarted: r.restarted,
                },
            });
        }
        Ok(GamesFile { path, games })
    }

    /// Games in the file.
    pub fn len(&self) -> usize {
        self.games.len()
    }

    /// Whether the file holds no game.
    pub fn is_empty(&self) -> bool {
        self.games.is_empty()
    }
}

/// serde_json's message without its "line 1" (it was given one line): the column only.
fn json_message(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rsplit_once(" at line ") {
        Some((message, _)) if e.line() > 0 => format!("{message} at column {}", e.column()),
        _ => text,
    }
}

/// A game whose pair's other game is missing (it was still being played when the match
/// stopped, or the match had an odd number of games).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Unpaired {
    /// The file it is in.
    pub file: String,
    /// Its pair number from 1.
    pub pair: usize,
    /// Its game number from 1.
    pub game: usize,
}

/// The score of the games of one or more files, as the runner would have reported it.
#[derive(Clone, Debug, Serialize)]
pub struct Score {
    /// The files read.
    pub files: Vec<String>,
    /// The runner's summary over all the games, from the chosen engine's point of view (it is
    /// engine 1 here).
    #[serde(flatten)]
    pub summary: Summary,
    /// Games counted in the trinomial numbers only, by file and pair.
    pub unpaired: Vec<Unpaired>,
}

/// Scores `files` for `engine` (default: engine 1 of the first game), running `sprt` if given.
/// Games of several files are never paired with each other; every game must be between the
/// same two engines (either one may be engine 1 in a file).
pub fn score(
    files: &[GamesFile],
    engine: Option<&str>,
    sprt: Option<Sprt>,
) -> Result<Score, ScoreError> {
    let names: Vec<String> = files.iter().map(|f| f.path.display().to_string()).collect();
    let Some(first) = files.iter().flat_map(|f| &f.games).next() else {
        return Err(ScoreError::NoGames { files: names });
    };
    let engines = match engine {
        None => first.engines.clone(),
        Some(name) if *name == first.engines[0] => first.engines.clone(),
        Some(name) if *name == first.engines[1] => {
            [first.engines[1].clone(), first.engines[0].clone()]
        }
        Some(name) => {
            return Err(ScoreError::UnknownEngine {
                name: name.to_string(),
                engines: first.engines.clone(),
            })
        }
    };
    let mut keeper = Scorekeeper::new(engines.clone(), sprt);
    for (f, file) in files.iter().enumerate() {
        for g in &file.games {
            let counted = if g.engines == engines {
                g.counted
            } else if g.engines[0] == engines[1] && g.engines[1] == engines[0] {
                g.counted.swapped()
            } else {
                return Err(ScoreError::MixedEngines {
                    path: file.path.clone(),
                    line: g.line,
                    expected: Box::new(first.engines.clone()),
                    found: Box::new(g.engines.clone()),
                });
            };
            keeper.add((f, g.pair), &counted);
        }
    }
    let mut open: Vec<(usize, usize)> = keeper.open_pairs().copied().collect();
    open.sort_unstable();
    let unpaired = open
        .into_iter()
        .map(|(f, pair)| Unpaired {
            file: names[f].clone(),
            pair,
            game: files[f]
                .games
                .iter()
                .find(|g| g.pair == pair)
                .expect("an open pair has a game")
                .game,
        })
        .collect();
    Ok(Score {
        files: names,
        summary: keeper.into_summary(),
        unpaired,
    })
}

impl Score {
    /// The runner's report ([`Summary::report`]) and a line on the games left out of the
    /// pentanomial.
    pub fn report(&self) -> String {
        let mut out = self.summary.report();
        let several_files = self.files.len() > 1;
        let games: Vec<String> = self
            .unpaired
            .iter()
            .map(|u| {
                let file = if several_files {
                    format!("{} ", u.file)
                } else {
                    String::new()
                };
                format!("{file}pair {} game {}", u.pair, u.game)
            })
            .collect();
        if games.is_empty() {
            out.push_str("  unpaired games: none\n");
        } else {
            out.push_str(&format!(
                "  unpaired games: {} ({}), not in the pentanomial: the other game of the pair \
                 is missing\n",
                games.len(),
                games.join(", ")
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record line with the fields the score reads (the runner writes more).
    fn line(game: usize, x: &str, o: &str, engine1_x: bool, score: &str) -> String {
        format!(
            r#"{{"game":{game},"pair":{},"x":"{x}","o":"{o}","engine1_color":"{}","engine1_score":"{score}","reason":"five","restarted":[false,false]}}"#,
            game.div_ceil(2),
            if engine1_x { "x" } else { "o" }
        )
    }

    fn file(name: &str, lines: &[String]) -> GamesFile {
        GamesFile::parse(PathBuf::from(name), &lines.join("\n")).unwrap()
    }

    #[test]
    fn either_engine_can_be_counted_for() {
        // a wins as X, loses as O, then wins a game whose pair is unfinished.
        let games = file(
            "m.jsonl",
            &[
                line(1, "a", "b", true, "win"),
                line(2, "b", "a", false, "loss"),
                line(3, "a", "b", true, "win"),
            ],
        );
        let a = score(std::slice::from_ref(&games), None, None).unwrap();
        assert_eq!(a.summary.engines, ["a", "b"]);
        assert_eq!((a.summary.total.wins, a.summary.total.losses), (2, 1));
        assert_eq!(a.summary.pentanomial.counts, [0, 0, 1, 0, 0]);
        assert_eq!(
            a.unpaired,
            [Unpaired {
                file: "m.jsonl".into(),
                pair: 2,
                game: 3
            }]
        );
        let b = score(std::slice::from_ref(&games), Some("b"), None).unwrap();
        assert_eq!(b.summary.engines, ["b", "a"]);
        assert_eq!((b.summary.total.wins, b.summary.total.losses), (1, 2));
        assert_eq!((b.summary.as_x.wins, b.summary.as_o.losses), (1, 2));
        assert!(matches!(
            score(&[games], Some("c"), None),
            Err(ScoreError::UnknownEngine { .. })
        ));
    }

    #[test]
    fn pairs_of_two_files_are_not_mixed() {
        // The same pair number in two matches, one with the engines swapped: two open pairs.
        let one = file("1.jsonl", &[line(1, "a", "b", true, "win")]);
        let two = file("2.jsonl", &[line(2, "a", "b", false, "draw")]);
        let s = score(&[one, two], None, None).unwrap();
        assert_eq!(s.summary.engines, ["a", "b"]);
        assert_eq!((s.summary.total.wins, s.summary.total.draws), (1, 1));
        assert_eq!(s.summary.pentanomial.pairs(), 0);
        assert_eq!(s.unpaired.len(), 2);
    }

    #[test]
    fn other_engines_and_repeated_games_are_refused() {
        let one = file("1.jsonl", &[line(1, "a", "b", true, "win")]);
        let two = file(
            "2.jsonl",
            &[
                line(1, "a", "b", true, "win"),
                line(2, "c", "a", false, "win"),
            ],
        );
        let e = score(&[one, two], None, None).unwrap_err();
        assert!(
            matches!(&e, ScoreError::MixedEngines { line: 2, .. }),
            "{e}"
        );
        let text = [
            line(1, "a", "b", true, "win"),
            line(1, "a", "b", true, "win"),
        ]
        .join("\n");
        assert!(matches!(
            GamesFile::parse("d".into(), &text),
            Err(ScoreError::DuplicateGame {
                line: 2,
                game: 1,
                ..
            })
        ));
    }
}
