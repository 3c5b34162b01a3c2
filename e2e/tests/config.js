// The server config the browser tests run with: quick bots (one that always blunders), a short
// reconnection grace.
export const testConfig = `
[server]
log = "warn"
shutdown_timeout_ms = 3000

[rooms]
grace_ms = 30000

[search]
max_concurrent = 2
thinking_interval_ms = 100
min_move_ms = 0

[bots.quick]
description = "A quick full search for tests"
games = ["caro", "tictactoe"]
style = "full"
max_depth = 4
time_ms = 60
blunder = 0.0

[bots.sloppy]
description = "Always picks a weaker move than its search found, to test the analysis panel"
games = ["caro"]
style = "full"
max_depth = 2
time_ms = 200
blunder = 1.0

[bots.deep]
description = "A slow full search, to watch its analysis"
games = ["caro"]
style = "full"
max_depth = 64
time_ms = 1500
blunder = 0.0
`;
