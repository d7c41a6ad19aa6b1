//! `toolgate ui`: a local web app to run agents and approve their tool
//! calls.
//!
//! The server lives in the binary; the page (plain HTML, CSS and one
//! JavaScript module, embedded with `include_str!`) talks to it over the
//! JSON API and the Server-Sent Events stream that `API.md` describes.
//! The events are the ones `toolgate run --json` prints, with the session
//! added, so one vocabulary serves both front ends. (AG-UI was
//! considered: its run/step/message/tool-call events map onto ours, but
//! approvals — the point of this UI — have no place in it, so we speak our
//! own events rather than two dialects.)
//!
//! # Security
//!
//! See [`auth`] for the rules: loopback only unless asked,
//! a token exchanged for an `HttpOnly; SameSite=Strict` cookie, `Host` and
//! `Origin` checked, a strict Content-Security-Policy. The page puts every
//! piece of model, tool and file text in the DOM as text, never as HTML.
//!
//! # Approvals
//!
//! A run started here asks a [`UiApprover`]: the call waits in the pending
//! list, shown as a card with exactly what it would do (the command as
//! classified, the diff of a write computed before it runs, the MCP server
//! and arguments), until it is allowed, denied, allowed for the session,
//! or allowed always (a rule saved in the user's config, which the gate
//! consults for every front end). `toolgate run --approver ui` and
//! `toolgate mcp serve --approver ui` start this server with
//! [`UiOptions::approver_only`] so their calls are answered here too.

mod approvals;
mod assets;
pub mod auth;
mod describe;
mod hub;
mod server;
mod transcript;

pub use approvals::{Answer, Approvals, Binding, UiApprover};
pub use assets::assets_size;
pub use hub::Hub;
pub use server::{HostFactory, UiError, UiOptions, UiServer};
