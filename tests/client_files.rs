//! The browser client is served from the server's own port: `/` is the page, its modules and
//! stylesheet follow with the right content types, and nothing outside `client/` is reachable.

mod common;

#[tokio::test]
async fn the_page_and_its_modules_are_served() {
    let server = common::start(common::config()).await;
    let (head, body) = server.get_raw("/").await;
    assert!(head.starts_with("HTTP/1.1 200 OK"), "{head}");
    assert!(
        head.contains("Content-Type: text/html; charset=utf-8"),
        "{head}"
    );
    assert!(body.contains(r#"<script type="module" src="app.js"></script>"#));

    for (path, ctype, needle) in [
        ("/app.js", "text/javascript", "import { Connection }"),
        ("/net.js", "text/javascript", "export class Connection"),
        (
            "/board.js",
            "text/javascript",
            "export function renderBoard",
        ),
        ("/style.css", "text/css", ".board"),
    ] {
        let (head, body) = server.get_raw(path).await;
        assert!(head.starts_with("HTTP/1.1 200 OK"), "{path}: {head}");
        assert!(
            head.contains(&format!("Content-Type: {ctype}")),
            "{path}: {head}"
        );
        assert!(body.contains(needle), "{path}");
    }
    server.stop().await;
}

#[tokio::test]
async fn paths_outside_the_client_are_not_served() {
    let server = common::start(common::config()).await;
    for path in [
        "/nope.js",
        "/../Cargo.toml",
        "/..%2fCargo.toml",
        "//etc/passwd",
        "/a/../index.html",
    ] {
        let (status, _) = server.get(path).await;
        assert_eq!(status, "HTTP/1.1 404 Not Found", "{path}");
    }
    server.stop().await;
}
