//! The web app's files, embedded in the binary: no Node, npm or files on
//! disk at build or run time.

/// One embedded file.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Asset {
    /// Where it is served.
    pub(crate) path: &'static str,
    /// Its `Content-Type`.
    pub(crate) content_type: &'static str,
    /// Its bytes.
    pub(crate) body: &'static str,
}

/// Every file the app has. The page loads only these.
pub(crate) const ASSETS: &[Asset] = &[
    Asset {
        path: "/",
        content_type: "text/html; charset=utf-8",
        body: include_str!("../assets/index.html"),
    },
    Asset {
        path: "/app.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_str!("../assets/app.js"),
    },
    Asset {
        path: "/app.css",
        content_type: "text/css; charset=utf-8",
        body: include_str!("../assets/app.css"),
    },
];

/// The asset served at `path`.
pub(crate) fn asset(path: &str) -> Option<&'static Asset> {
    ASSETS.iter().find(|a| a.path == path)
}

/// The size of every asset together, in bytes (the budget is
/// 200 KB).
pub fn assets_size() -> usize {
    ASSETS.iter().map(|a| a.body.len()).sum()
}

/// The page shown to a browser that has no session cookie.
pub(crate) const SIGN_IN: &str = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>toolgate</title></head>\n<body><h1>toolgate</h1><p>Open the address <code>toolgate ui</code> printed (its token signs this browser in). This browser has no session for this server.</p></body></html>\n";
