//! The browser client (`client/`): embedded in every build, or read from `server.client_dir`.
//! It must never serve a file outside that folder, however a path is spelled.

use std::borrow::Cow;
use std::path::Path;

use axum::extract::State;
use axum::http::{header, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};

use super::{plain, AppState};

/// The browser client, embedded in every build (rust-embed's `debug-embed`), so a copied binary
/// serves it and the tests exercise the very bytes a release serves.
#[derive(rust_embed::Embed)]
#[folder = "client/"]
struct Client;

/// Every path no route claims: a file of the client, or 404.
pub(super) async fn serve(State(state): State<AppState>, method: Method, uri: Uri) -> Response {
    if method != Method::GET && method != Method::HEAD {
        let mut refused = plain(StatusCode::METHOD_NOT_ALLOWED, "method not allowed\n");
        refused
            .headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET,HEAD"));
        return refused;
    }
    match static_file(uri.path(), state.server.config.server.client_dir.as_deref()).await {
        Some((ctype, body)) => ([(header::CONTENT_TYPE, ctype)], body).into_response(),
        None => plain(StatusCode::NOT_FOUND, "not found\n"),
    }
}

/// A file of the browser client and its content type: `/` is `index.html`; read from `dir`
/// when one is configured, else from the embedded copy. `None` for anything else. The path is
/// taken as sent (no percent-decoding), so `..%2f` names no file.
async fn static_file(path: &str, dir: Option<&Path>) -> Option<(HeaderValue, Cow<'static, [u8]>)> {
    let name = match path.trim_start_matches('/') {
        "" => "index.html",
        other => other,
    };
    if name
        .split('/')
        .any(|segment| segment == ".." || segment.is_empty() || segment.contains('\\'))
    {
        return None;
    }
    let data = match dir {
        Some(dir) => Cow::Owned(tokio::fs::read(dir.join(name)).await.ok()?),
        None => Client::get(name)?.data,
    };
    Some((content_type(name), data))
}

/// The file's type from its extension; text is UTF-8, as the client is written.
fn content_type(name: &str) -> HeaderValue {
    let mime = mime_guess::from_path(name).first_or_octet_stream();
    let value = if mime.type_() == mime_guess::mime::TEXT {
        format!("{mime}; charset=utf-8")
    } else {
        mime.to_string()
    };
    HeaderValue::from_str(&value).unwrap_or(HeaderValue::from_static("application/octet-stream"))
}
