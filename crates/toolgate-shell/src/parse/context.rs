//! The context of a command inside another: a substitution, an inline
//! script, a `find -exec` command, a loop's body.

use crate::model::{CommandContext, Origin};

/// The context of a command nested in the command at index `parent`.
pub(super) fn child_context(ctx: &CommandContext, origin: Origin, parent: usize) -> CommandContext {
    CommandContext {
        origin,
        depth: ctx.depth + 1,
        parent: Some(parent),
        in_subshell: true,
        function: ctx.function.clone(),
        background: false,
        background_repeats: false,
        in_loop: ctx.in_loop,
        pipeline: None,
        piped_into: None,
        stdin_redirected: false,
    }
}

/// The context of a loop's condition and body.
pub(super) fn looping(ctx: &CommandContext) -> CommandContext {
    let mut inner = ctx.clone();
    inner.in_loop = true;
    inner
}
