//! For tests: a fresh database of its own for each test, on the PostgreSQL server that
//! `scripts/services` starts (`CARO_TEST_POSTGRES_URL`), so tests run in parallel without
//! seeing each other's rows.
//!
//! Without the variable a test skips with a message (a developer's plain `cargo test`), unless
//! `CARO_REQUIRE_SERVICES=1` (set by `scripts/test`, hence CI): then it fails, so the PostgreSQL
//! tests can never be skipped silently.

/// The server's URL variable.
pub const URL_VAR: &str = "CARO_TEST_POSTGRES_URL";

/// The URL of a new, empty database on the test server, or `None` (after saying so on stderr)
/// when there is no test server and none is required. Panics when one is required and missing,
/// or cannot be used. `test` names the test in the skip message.
pub fn fresh_database(test: &str) -> Option<String> {
    let Ok(server) = std::env::var(URL_VAR) else {
        if std::env::var("CARO_REQUIRE_SERVICES").as_deref() == Ok("1") {
            panic!(
                "{test}: {URL_VAR} is not set but CARO_REQUIRE_SERVICES=1: run the tests \
                 through scripts/test or scripts/services"
            );
        }
        // Straight to stderr, past the test harness's capture, so the skip is seen.
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "{test}: SKIPPED, {URL_VAR} is not set (run `bash scripts/services cargo test` for \
             the PostgreSQL tests)"
        );
        return None;
    };
    let name = format!("caro_test_{}", uuid::Uuid::new_v4().simple());
    let admin = server.clone();
    let create = format!("CREATE DATABASE {name}");
    // A thread of its own: the caller may be inside a runtime (a #[tokio::test]).
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let (client, conn) = tokio_postgres::connect(&admin, tokio_postgres::NoTls)
                .await
                .unwrap_or_else(|e| panic!("{URL_VAR}={admin}: {e}"));
            tokio::spawn(conn);
            client.batch_execute(&create).await.unwrap();
        })
    })
    .join()
    .unwrap();
    Some(with_database(&server, &name))
}

/// `url` with its database (the last path segment) replaced by `name`.
fn with_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, format!("?{q}")),
        None => (url, String::new()),
    };
    let authority_start = base.find("://").map_or(0, |i| i + 3);
    let base = match base[authority_start..].find('/') {
        Some(slash) => &base[..authority_start + slash],
        None => base,
    };
    format!("{base}/{name}{query}")
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_database_of_a_url_is_replaced() {
        use super::with_database;
        assert_eq!(
            with_database("postgres://p@127.0.0.1:5/postgres", "t"),
            "postgres://p@127.0.0.1:5/t"
        );
        assert_eq!(with_database("postgres://p@h", "t"), "postgres://p@h/t");
        assert_eq!(
            with_database("postgres://p@h/db?sslmode=disable", "t"),
            "postgres://p@h/t?sslmode=disable"
        );
    }
}
