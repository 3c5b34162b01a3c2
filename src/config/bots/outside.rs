//! The keys of a `[bots.<name>]` level that has `command`: an outside Gomocup engine
//! (docs/bots.md). Its program is resolved and checked here, at start; it is run by
//! `crate::outside`, never here.

use std::path::{Path, PathBuf};
use std::time::Duration;

use caro_engine::rules::{MAX_SIZE, MIN_CARO_SIZE};
use caro_engine::Rule;

use super::RawBot;
use crate::config::{invalid, ConfigError};

/// A validated outside engine: a Gomocup (Piskvork protocol 2) program the server runs as a
/// bot. See docs/bots.md.
#[derive(Debug, Clone, PartialEq)]
pub struct OutsideConfig {
    /// The program, as an absolute path (resolved at start, `PATH` included).
    pub program: PathBuf,
    /// Its arguments, passed as they are.
    pub args: Vec<String>,
    /// Its working directory (absolute); `None`: the server's.
    pub working_dir: Option<PathBuf>,
    /// Time per move, sent as `INFO timeout_turn`.
    pub turn_time: Duration,
    /// Time per game, sent as `INFO timeout_match` (with `INFO time_left` before each move).
    pub match_time: Option<Duration>,
    /// An answer later than its limit plus this forfeits.
    pub margin: Duration,
    /// Time for a new process to answer its first `START`.
    pub start_timeout: Duration,
    /// `INFO max_memory`, bytes.
    pub max_memory: Option<u64>,
    /// Rule variants it plays.
    pub rules: Vec<Rule>,
    /// Smallest board side.
    pub min_board: u8,
    /// Largest board side.
    pub max_board: u8,
    /// Whether boards need not be square.
    pub rectangular: bool,
    /// Processes at most.
    pub max_processes: usize,
}

impl OutsideConfig {
    /// The outside-engine keys of a level; `key` names a key of that level in errors.
    pub(super) fn from_raw(
        key: &dyn Fn(&str) -> String,
        b: &RawBot,
        time_ms: u64,
    ) -> Result<OutsideConfig, ConfigError> {
        let here = std::env::current_dir().map_err(|e| {
            invalid(
                key("command"),
                format!("cannot read the working directory: {e}"),
            )
        })?;
        let command = b.command.as_deref().unwrap_or_default();
        let program = resolve_program(command, &here).map_err(|m| invalid(key("command"), m))?;
        let working_dir = match &b.working_dir {
            None => None,
            Some(d) => {
                let dir = here.join(d);
                if !dir.is_dir() {
                    return Err(invalid(
                        key("working_dir"),
                        format!("{} is not a directory", dir.display()),
                    ));
                }
                Some(dir)
            }
        };
        let match_time = match b.match_time_ms.unwrap_or(0) {
            0 => None,
            ms if ms > 86_400_000 => {
                return Err(invalid(key("match_time_ms"), "must be in 0..=86400000"))
            }
            ms => Some(Duration::from_millis(ms)),
        };
        let margin_ms = b.margin_ms.unwrap_or(500);
        if margin_ms > 60_000 {
            return Err(invalid(key("margin_ms"), "must be in 0..=60000"));
        }
        let start_ms = b.start_timeout_ms.unwrap_or(10_000);
        if start_ms == 0 || start_ms > 600_000 {
            return Err(invalid(key("start_timeout_ms"), "must be in 1..=600000"));
        }
        let max_memory = match b.max_memory_mb {
            None => None,
            Some(mb) if mb == 0 || mb > 1 << 20 => {
                return Err(invalid(key("max_memory_mb"), "must be in 1..=1048576"))
            }
            Some(mb) => Some(mb << 20),
        };
        let mut rules = Vec::new();
        for r in b.rules.clone().unwrap_or_else(|| vec!["freestyle".into()]) {
            let rule = r
                .parse::<Rule>()
                .map_err(|e| invalid(key("rules"), e.to_string()))?;
            if !rules.contains(&rule) {
                rules.push(rule);
            }
        }
        if rules.is_empty() {
            return Err(invalid(key("rules"), "must list at least one rule"));
        }
        let min_board = b.min_board.unwrap_or(15);
        if !(MIN_CARO_SIZE..=MAX_SIZE).contains(&min_board) {
            return Err(invalid(
                key("min_board"),
                format!("must be in {MIN_CARO_SIZE}..={MAX_SIZE}"),
            ));
        }
        let max_board = b.max_board.unwrap_or(20.max(min_board));
        if !(min_board..=MAX_SIZE).contains(&max_board) {
            return Err(invalid(
                key("max_board"),
                format!("must be in min_board..={MAX_SIZE}"),
            ));
        }
        let max_processes = b.max_processes.unwrap_or(1);
        if max_processes == 0 || max_processes > 64 {
            return Err(invalid(key("max_processes"), "must be in 1..=64"));
        }
        Ok(OutsideConfig {
            program,
            args: b.args.clone().unwrap_or_default(),
            working_dir,
            turn_time: Duration::from_millis(time_ms),
            match_time,
            margin: Duration::from_millis(margin_ms),
            start_timeout: Duration::from_millis(start_ms),
            max_memory,
            rules,
            min_board,
            max_board,
            rectangular: b.rectangular.unwrap_or(false),
            max_processes,
        })
    }
}

/// The program an outside engine's `command` names, as an absolute path: a path with a `/` is
/// taken relative to `here` (the server's working directory), a bare name is looked up on
/// `PATH`, as a shell would. It must be an executable file.
fn resolve_program(command: &str, here: &Path) -> Result<PathBuf, String> {
    if command.trim().is_empty() {
        return Err("must not be empty".into());
    }
    if !command.contains(std::path::MAIN_SEPARATOR) && !command.contains('/') {
        let path = std::env::var_os("PATH").unwrap_or_default();
        return std::env::split_paths(&path)
            .map(|dir| here.join(dir).join(command))
            .find(|p| check_executable(p).is_ok())
            .ok_or_else(|| format!("{command:?} is not an executable found on PATH"));
    }
    let program = here.join(command);
    check_executable(&program)?;
    Ok(program)
}

fn check_executable(path: &Path) -> Result<(), String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if meta.is_dir() {
        return Err(format!("{} is a directory", path.display()));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if meta.permissions().mode() & 0o111 == 0 {
            return Err(format!(
                "{} is not executable (chmod +x it, or make its interpreter the command and \
                 the script the first of args)",
                path.display()
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::bots::BotEngine;
    use crate::config::Config;
    use caro_engine::GameKind;

    fn outside(keys: &str) -> Result<Config, ConfigError> {
        Config::from_toml(&format!(
            "[bots.ext]\ndescription = \"x\"\ntime_ms = 500\n{keys}\n"
        ))
    }

    fn outside_err(keys: &str) -> String {
        outside(keys).unwrap_err().to_string()
    }
    #[test]
    fn an_outside_engine_level_has_defaults_and_a_resolved_program() {
        let c = outside("command = \"sh\"").unwrap();
        let b = &c.bots["ext"];
        assert_eq!(b.games, [GameKind::Caro]);
        let BotEngine::Outside(o) = &b.engine else {
            panic!("not outside: {b:?}")
        };
        assert!(
            o.program.is_absolute() && o.program.ends_with("sh"),
            "{o:?}"
        );
        assert_eq!(o.args, Vec::<String>::new());
        assert_eq!(o.working_dir, None);
        assert_eq!(o.turn_time, Duration::from_millis(500));
        assert_eq!(o.match_time, None);
        assert_eq!(o.margin, Duration::from_millis(500));
        assert_eq!(o.start_timeout, Duration::from_secs(10));
        assert_eq!(o.max_memory, None);
        assert_eq!(o.rules, [Rule::Freestyle]);
        assert_eq!((o.min_board, o.max_board, o.rectangular), (15, 20, false));
        assert_eq!(o.max_processes, 1);
        let c = outside(
            "command = \"/bin/sh\"\nargs = [\"-c\", \"x\"]\nworking_dir = \"/\"\n\
             match_time_ms = 60000\nmax_memory_mb = 2\nrules = [\"caro\", \"freestyle\"]\n\
             min_board = 9\nmax_board = 9\nrectangular = true\nmax_processes = 3",
        )
        .unwrap();
        let BotEngine::Outside(o) = &c.bots["ext"].engine else {
            panic!()
        };
        assert_eq!(o.program, PathBuf::from("/bin/sh"));
        assert_eq!(o.args, ["-c", "x"]);
        assert_eq!(o.working_dir, Some(PathBuf::from("/")));
        assert_eq!(o.match_time, Some(Duration::from_secs(60)));
        assert_eq!(o.max_memory, Some(2 << 20));
        assert_eq!(o.rules, [Rule::Caro, Rule::Freestyle]);
        assert_eq!((o.min_board, o.max_board, o.rectangular), (9, 9, true));
        assert_eq!(o.max_processes, 3);
    }

    #[test]
    fn outside_engine_errors_name_the_key() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("engine.py");
        std::fs::write(&script, "print('hi')\n").unwrap();
        let d = dir.path().display();
        let cases = [
            (
                format!("command = \"{d}/nope\""),
                format!("bots.ext.command: {d}/nope: No such file or directory (os error 2)"),
            ),
            (
                format!("command = \"{d}/engine.py\""),
                format!(
                    "bots.ext.command: {d}/engine.py is not executable (chmod +x it, or make \
                     its interpreter the command and the script the first of args)"
                ),
            ),
            (
                format!("command = \"{d}\""),
                format!("bots.ext.command: {d} is a directory"),
            ),
            (
                "command = \"no-such-engine-anywhere\"".into(),
                "bots.ext.command: \"no-such-engine-anywhere\" is not an executable found on PATH"
                    .into(),
            ),
            (
                "command = \"\"".into(),
                "bots.ext.command: must not be empty".into(),
            ),
            (
                format!("command = \"sh\"\nworking_dir = \"{d}/nope\""),
                format!("bots.ext.working_dir: {d}/nope is not a directory"),
            ),
            (
                "command = \"sh\"\nrules = [\"renju\"]".into(),
                "bots.ext.rules: unknown rule \"renju\" (expected freestyle, exact_five, caro, \
                 caro_overline or caro_gomocup)"
                    .into(),
            ),
            (
                "command = \"sh\"\nrules = []".into(),
                "bots.ext.rules: must list at least one rule".into(),
            ),
            (
                "command = \"sh\"\ngames = [\"caro\", \"tictactoe\"]".into(),
                "bots.ext.games: an outside Gomocup engine plays only \"caro\" (the protocol \
                 has no tic-tac-toe)"
                    .into(),
            ),
            (
                "command = \"sh\"\nmax_depth = 3".into(),
                "bots.ext.max_depth: belongs to built-in levels; this level is an outside \
                 engine (it has command)"
                    .into(),
            ),
            (
                "command = \"sh\"\nmin_board = 4".into(),
                "bots.ext.min_board: must be in 5..=32".into(),
            ),
            (
                "command = \"sh\"\nmin_board = 16\nmax_board = 15".into(),
                "bots.ext.max_board: must be in min_board..=32".into(),
            ),
            (
                "command = \"sh\"\nmax_processes = 0".into(),
                "bots.ext.max_processes: must be in 1..=64".into(),
            ),
            (
                "command = \"sh\"\nmargin_ms = 60001".into(),
                "bots.ext.margin_ms: must be in 0..=60000".into(),
            ),
            (
                "command = \"sh\"\nmax_memory_mb = 0".into(),
                "bots.ext.max_memory_mb: must be in 1..=1048576".into(),
            ),
            (
                "args = [\"x\"]\nmax_depth = 2\ngames = [\"caro\"]".into(),
                "bots.ext.args: is for outside engines only (a level with command)".into(),
            ),
            (
                "games = [\"caro\"]".into(),
                "bots.ext.max_depth: is required (or set command for an outside engine)".into(),
            ),
        ];
        for (keys, expected) in cases {
            assert_eq!(outside_err(&keys), expected, "{keys}");
        }
        let e =
            Config::from_toml("[bots.ext]\ndescription = \"x\"\ncommand = \"sh\"\n").unwrap_err();
        assert_eq!(e.to_string(), "bots.ext.time_ms: is required");
    }
}
