//! Asking a person whether an unlisted host may be reached, and
//! remembering the answer for the rest of the sandbox's life.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::OnceCell;

use super::{CONSENT_TIMEOUT, MAX_QUESTIONS, Shared};
use crate::{ConsentAnswer, ConsentRequest, Decision, Protocol};

/// Whether an unlisted `name` may be reached: what a person said before,
/// or what they say now. `Err` is the decision and why, for the refusal.
pub(super) async fn consent(
    shared: &Shared,
    name: &str,
    port: u16,
    protocol: Protocol,
) -> Result<ConsentAnswer, (Decision, String)> {
    let lock = |m: &Mutex<HashSet<String>>| {
        m.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(name)
    };
    if lock(&shared.refused) {
        return Err((
            Decision::Refused,
            format!("`{name}` is not in the allow list, and the person refused it earlier"),
        ));
    }
    if lock(&shared.allowed) {
        return Ok(ConsentAnswer::AllowForSession);
    }
    let Some(consent) = shared.attachments.current().and_then(|a| a.consent.clone()) else {
        return Err((
            Decision::Unlisted,
            format!("`{name}` is not in the allow list"),
        ));
    };
    let cell = {
        let mut questions = shared
            .questions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(cell) = questions.get(name) {
            Arc::clone(cell)
        } else {
            if questions.len() >= MAX_QUESTIONS {
                return Err((
                    Decision::Busy,
                    format!(
                        "`{name}` is not in the allow list, and too many questions are already waiting"
                    ),
                ));
            }
            let cell = Arc::new(OnceCell::new());
            questions.insert(name.to_owned(), Arc::clone(&cell));
            cell
        }
    };
    let request = ConsentRequest {
        host: name.to_owned(),
        port,
        protocol,
    };
    let answer = *cell
        .get_or_init(|| async {
            let answer = tokio::time::timeout(CONSENT_TIMEOUT, consent.ask(&request))
                .await
                .ok();
            match answer {
                Some(ConsentAnswer::AllowForSession | ConsentAnswer::AlwaysAllow) => {
                    shared
                        .allowed
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .insert(name.to_owned());
                }
                Some(ConsentAnswer::Deny) => {
                    shared
                        .refused
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .insert(name.to_owned());
                }
                _ => {}
            }
            answer
        })
        .await;
    {
        let mut questions = shared
            .questions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if questions.get(name).is_some_and(|c| Arc::ptr_eq(c, &cell)) {
            questions.remove(name);
        }
    }
    match answer {
        Some(ConsentAnswer::Deny) => Err((
            Decision::Refused,
            format!("`{name}` is not in the allow list, and the person refused it"),
        )),
        None => Err((
            Decision::Refused,
            format!("`{name}` is not in the allow list, and nobody answered in time"),
        )),
        Some(answer) => Ok(answer),
    }
}
