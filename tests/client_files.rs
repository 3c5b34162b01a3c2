//! The browser client is served from the server's own port: `/` is the page, its modules and
//! stylesheet follow with the right content types (the copy embedded in the binary, as a release
//! serves it), and nothing outside `client/` is reachable.

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
        ("/clock.js", "text/javascript", "export class Clocks"),
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

/// Browsers ask for `/favicon.ico` whatever the page links: it was a 404 in every log. The page
/// links the SVG; the ICO is there for the browsers (and bookmarks) that ask for it.
#[tokio::test]
async fn the_favicon_is_served_as_ico_and_svg() {
    let server = common::start(common::config()).await;
    // The shared helper reads text; an icon is bytes.
    let (head, body) = {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut s = tokio::net::TcpStream::connect(server.addr).await.unwrap();
        s.write_all(b"GET /favicon.ico HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        let mut buf = Vec::new();
        tokio::time::timeout(std::time::Duration::from_secs(10), s.read_to_end(&mut buf))
            .await
            .unwrap()
            .unwrap();
        let end = buf.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
        (
            String::from_utf8(buf[..end].to_vec()).unwrap(),
            buf[end + 4..].to_vec(),
        )
    };
    assert!(head.starts_with("HTTP/1.1 200 OK"), "{head}");
    assert!(head.contains("Content-Type: image/x-icon"), "{head}");
    assert_eq!(body, include_bytes!("../client/favicon.ico"));
    let (head, body) = server.get_raw("/favicon.svg").await;
    assert!(head.contains("Content-Type: image/svg+xml"), "{head}");
    assert!(body.starts_with("<svg"), "{body}");
    let (_, page) = server.get_raw("/").await;
    assert!(page.contains(r#"<link rel="icon" href="favicon.svg""#));
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

/// `server.client_dir` serves a directory from disk (for work on the client) instead of the
/// embedded copy; a directory without `index.html` is refused at start, naming the key.
#[tokio::test]
async fn client_dir_serves_files_from_disk() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("index.html"), "<p>edited</p>").unwrap();
    std::fs::write(dir.path().join("extra.js"), "export const x = 1;").unwrap();
    let dir_str = dir.path().display().to_string();
    let config = common::config_with(&format!("client_dir = {dir_str:?}"), "", "", "");
    let server = common::start(config).await;
    let (head, body) = server.get_raw("/").await;
    assert!(head.starts_with("HTTP/1.1 200 OK"), "{head}");
    assert_eq!(body, "<p>edited</p>");
    let (_, body) = server.get_raw("/extra.js").await;
    assert_eq!(body, "export const x = 1;");
    // Nothing outside the directory, however the path is spelled.
    let parent = dir.path().parent().unwrap();
    std::fs::write(parent.join("caro-secret.txt"), "secret").unwrap();
    for path in [
        "/app.js",
        "/../caro-secret.txt",
        "/..%2fcaro-secret.txt",
        "/..\\caro-secret.txt",
        "//etc/passwd",
    ] {
        let (status, _) = server.get(path).await;
        assert_eq!(status, "HTTP/1.1 404 Not Found", "{path}");
    }
    std::fs::remove_file(parent.join("caro-secret.txt")).unwrap();
    server.stop().await;

    let empty = tempfile::tempdir().unwrap();
    let text = format!(
        "[server]\nclient_dir = {:?}\n",
        empty.path().display().to_string()
    );
    let err = caro_arena::config::Config::from_toml(&text).unwrap_err();
    assert!(err.to_string().contains("server.client_dir"), "{err}");
}
