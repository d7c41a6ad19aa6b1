//! The one error type of the workspace sandbox.

use std::io;
use std::path::PathBuf;

/// What can go wrong when opening a workspace or touching a file in it.
///
/// Every message names the path the caller gave (workspace-relative,
/// `/`-separated, `.` for the root) and, where the caller can do something
/// about it, says what. The underlying OS error, if any, is the
/// [`source`](std::error::Error::source) and is not repeated in the message.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WorkspaceError {
    /// The workspace root cannot be opened (it does not exist, or it is not
    /// readable).
    #[error("cannot open the workspace root {}", .root.display())]
    Root {
        /// The root as configured.
        root: PathBuf,
        /// Why it cannot be opened.
        #[source]
        source: io::Error,
    },
    /// The workspace root exists but is not a directory.
    #[error("the workspace root {} is not a directory", .root.display())]
    RootNotADirectory {
        /// The root as configured.
        root: PathBuf,
    },
    /// A sensitive-file or protected-file pattern is not a valid glob.
    #[error("invalid path pattern `{pattern}`: {reason}")]
    InvalidPattern {
        /// The pattern as configured.
        pattern: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The path contains a NUL byte, which no file name can hold.
    #[error("path `{}` contains a NUL byte; remove it", .path.escape_debug())]
    NulByte {
        /// The path as given.
        path: String,
    },
    /// The path, read as written, leaves the workspace (`..` past the root,
    /// or an absolute path outside it).
    #[error(
        "path `{path}` leaves the workspace {}; use a path inside it",
        .root.display()
    )]
    OutsideWorkspace {
        /// The path as given.
        path: String,
        /// The workspace root.
        root: PathBuf,
    },
    /// Following a symlink on the way to the path leaves the workspace.
    #[error(
        "path `{path}` leaves the workspace {} through the symlink `{link}` (-> {}); \
         use a path inside it",
        .root.display(),
        .target.display()
    )]
    SymlinkEscapes {
        /// The path as given, workspace-relative.
        path: String,
        /// The symlink that points outside, workspace-relative.
        link: String,
        /// What the symlink points to, as stored in the link.
        target: PathBuf,
        /// The workspace root.
        root: PathBuf,
    },
    /// The path, or the file it resolves to, matches a sensitive-file pattern
    /// and the workspace does not allow sensitive files.
    #[error(
        "refusing `{path}`: it matches the sensitive-file pattern `{pattern}`; \
         sensitive files are off limits unless the configuration allows them"
    )]
    Sensitive {
        /// The path as given, workspace-relative.
        path: String,
        /// The pattern it matches, as configured.
        pattern: String,
    },
    /// The operation would change a protected file (or create one, or a
    /// directory where one would go): one of toolgate's or git's own policy
    /// files, which only the user edits.
    #[error(
        "refusing to change `{path}`: it matches the protected-file pattern `{pattern}`; \
         it is a policy file that only the user edits (reading it is allowed)"
    )]
    Protected {
        /// The path as given, workspace-relative.
        path: String,
        /// The pattern it matches, as configured.
        pattern: String,
    },
    /// The path is, leads into (through a symlink or `..`), or would create
    /// something inside toolgate's own configuration or data: a [private
    /// path](super::WorkspaceBuilder::private_paths). Nothing lifts this.
    #[error(
        "refusing `{path}`: it is toolgate's own configuration or data; \
         no tool may read or change it"
    )]
    Private {
        /// The path as given.
        path: String,
    },
    /// A private path given to the builder is not absolute.
    #[error("the private path {} is not absolute", .path.display())]
    PrivateNotAbsolute {
        /// The path as given.
        path: PathBuf,
    },
    /// The path ends with `/` (or `/.`, `/..`), so it names a directory, but
    /// it is a file.
    #[error(
        "path `{path}/` ends with `/`, which names a directory, but `{path}` is a file, \
         not a directory; drop the slash to use the file"
    )]
    SlashOnFile {
        /// The path as given, workspace-relative, without the slash.
        path: String,
    },
    /// A write, append or removal was asked for a path that ends with `/`.
    #[error(
        "path `{path}/` ends with `/`: a file path cannot end with a slash; \
         name a file (`{path}/NAME`) or drop the slash"
    )]
    SlashOnWrite {
        /// The path as given, workspace-relative, without the slash.
        path: String,
    },
    /// The path does not exist.
    #[error("path `{path}` does not exist")]
    NotFound {
        /// The path as given, workspace-relative.
        path: String,
    },
    /// The operation needs a regular file and the path is something else
    /// (a directory, a FIFO, a device).
    #[error("path `{path}` is not a regular file")]
    NotAFile {
        /// The path as given, workspace-relative.
        path: String,
    },
    /// The operation needs a directory and the path (or one of its parents)
    /// is something else.
    #[error("path `{path}` is not a directory")]
    NotADirectory {
        /// The path that is not a directory, workspace-relative.
        path: String,
    },
    /// The file is larger than the caller's limit.
    #[error("file `{path}` is {size} bytes, over the limit of {max} bytes; read it in parts")]
    TooLarge {
        /// The path as given, workspace-relative.
        path: String,
        /// The size of the file (at least this many bytes).
        size: u64,
        /// The limit.
        max: u64,
    },
    /// Resolving the path follows too many symlinks, usually a loop.
    #[error("path `{path}` goes through more than 40 symlinks; check for a symlink loop")]
    TooManySymlinks {
        /// The path as given, workspace-relative.
        path: String,
    },
    /// Something on the path was replaced (typically by a symlink) between
    /// the moment it was checked and the moment it was opened. Nothing was
    /// read or written through the replacement.
    #[error("path `{path}` changed while it was being opened; try again")]
    Changed {
        /// The path as given, workspace-relative.
        path: String,
    },
    /// Any other I/O failure.
    #[error("cannot {action} `{path}`")]
    Io {
        /// What was being done: `read`, `write`, `list`, …
        action: &'static str,
        /// The path being worked on, workspace-relative: the one given, or
        /// the part of it that failed (a parent directory, a symlink).
        path: String,
        /// The OS error.
        #[source]
        source: io::Error,
    },
}
