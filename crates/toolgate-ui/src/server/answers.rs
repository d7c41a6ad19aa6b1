//! The approval and rule endpoints: the pending questions and their
//! answers (`/api/approvals`), the user's confirmation rules (`/api/rules`).

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};
use toolgate_engine::PlanAnswer;
use toolgate_host::UserRules;
use toolgate_policy::{ConfirmationMode, ConfirmationRule};

use super::{ApiError, ApiResult, App};
use crate::approvals::{Answer, ResolveError};

pub(super) async fn approvals(State(app): State<Arc<App>>) -> Json<Value> {
    Json(Value::Array(app.approvals.pending().await))
}

#[derive(Deserialize)]
pub(super) struct AnswerBody {
    answer: Answer,
    /// Whether the person has seen the whole card (a folded one must be
    /// expanded before it is allowed).
    #[serde(default)]
    seen: bool,
}

pub(super) async fn answer_one(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    Json(body): Json<AnswerBody>,
) -> ApiResult {
    // A folded card is not allowed unseen, and "Always allow" must not
    // save its rule for one.
    if body.answer != Answer::Deny && !body.seen {
        app.approvals.check_seen(&id).await.map_err(resolve_error)?;
    }
    let rule = if body.answer == Answer::Always {
        let rule = app
            .approvals
            .rule_of(&id)
            .await
            .map_err(resolve_error)?
            .ok_or(ResolveError::NoRule)
            .map_err(resolve_error)?;
        let number = save_rule(&app, &rule)?;
        Some((number, rule))
    } else {
        None
    };
    app.approvals
        .resolve(&id, body.answer, body.seen)
        .await
        .map_err(resolve_error)?;
    Ok(Json(json!({
        "id": id,
        "answer": body.answer,
        "rule": rule.map(|(number, rule)| json!({"number": number, "rule": rule})),
    })))
}

/// The answer to a plan card: the mode to go on in, or none to keep the
/// model planning, with what to tell it.
#[derive(Deserialize)]
pub(super) struct PlanBody {
    #[serde(default)]
    mode: Option<ConfirmationMode>,
    #[serde(default)]
    feedback: Option<String>,
}

pub(super) async fn answer_plan(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    Json(body): Json<PlanBody>,
) -> ApiResult {
    let answer = app
        .approvals
        .resolve_plan(&id, body.mode, body.feedback)
        .map_err(resolve_error)?;
    let (answer, mode) = match answer {
        PlanAnswer::Continue(mode) => ("approved", Some(mode)),
        _ => ("keep_planning", None),
    };
    Ok(Json(json!({"id": id, "answer": answer, "mode": mode})))
}

#[derive(Deserialize)]
pub(super) struct AnswerMany {
    answer: Answer,
    #[serde(default)]
    ids: Option<Vec<String>>,
    /// The approvals the person has seen whole; a folded one not listed
    /// is not allowed (it stays pending).
    #[serde(default)]
    seen: Vec<String>,
}

pub(super) async fn answer_many(
    State(app): State<Arc<App>>,
    Json(body): Json<AnswerMany>,
) -> ApiResult {
    if !matches!(body.answer, Answer::Allow | Answer::Deny) {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "answer several calls with allow or deny",
        ));
    }
    let ids = match body.ids {
        Some(ids) => ids,
        None => app
            .approvals
            .pending()
            .await
            .iter()
            .filter_map(|p| p["id"].as_str().map(str::to_owned))
            .collect(),
    };
    let mut resolved = Vec::new();
    for id in ids {
        let seen = body.seen.contains(&id);
        if app.approvals.resolve(&id, body.answer, seen).await.is_ok() {
            resolved.push(id);
        }
    }
    Ok(Json(json!({"resolved": resolved})))
}

#[expect(clippy::needless_pass_by_value, reason = "a `map_err` argument")]
fn resolve_error(error: ResolveError) -> ApiError {
    let status = match error {
        ResolveError::NotPending(_) => StatusCode::NOT_FOUND,
        ResolveError::NoRule
        | ResolveError::IsPlan(_)
        | ResolveError::NotPlan(_)
        | ResolveError::NotAChoice(_) => StatusCode::BAD_REQUEST,
        ResolveError::Unseen(_) | ResolveError::AlreadyAnswered(_) => StatusCode::CONFLICT,
        ResolveError::Store { .. } => StatusCode::SERVICE_UNAVAILABLE,
    };
    ApiError::new(status, error.to_string())
}

#[expect(clippy::needless_pass_by_value, reason = "a `map_err` argument")]
pub(super) fn rules_error(error: toolgate_host::RulesFileError) -> ApiError {
    let status = if error.is_io() {
        StatusCode::INTERNAL_SERVER_ERROR
    } else {
        StatusCode::BAD_REQUEST
    };
    let hint = error.hint().unwrap_or(
        "rules live in `confirmation.rules` of the user's config file; `toolgate rules list` shows them",
    );
    ApiError::new(status, toolgate_core::error_chain(&error)).hint(hint)
}

fn save_rule(app: &App, rule: &ConfirmationRule) -> Result<usize, ApiError> {
    let mut file = UserRules::open_user(app.host.env()).map_err(rules_error)?;
    let number = file.add(rule).map_err(rules_error)?;
    file.save().map_err(rules_error)?;
    app.hub.emit(&json!({"type": "rules_changed"}));
    Ok(number)
}

pub(super) async fn rules(State(app): State<Arc<App>>) -> ApiResult {
    let file = UserRules::open_user(app.host.env()).map_err(rules_error)?;
    let rules = file.rules().map_err(rules_error)?;
    let rows: Vec<Value> = rules
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mut row = serde_json::to_value(r).unwrap_or_default();
            row["number"] = Value::from(i + 1);
            row
        })
        .collect();
    Ok(Json(json!({"file": file.path(), "rules": rows})))
}

pub(super) async fn add_rule(
    State(app): State<Arc<App>>,
    Json(rule): Json<ConfirmationRule>,
) -> ApiResult {
    let number = save_rule(&app, &rule)?;
    Ok(Json(json!({"number": number})))
}

pub(super) async fn remove_rule(
    State(app): State<Arc<App>>,
    Path(number): Path<usize>,
) -> ApiResult {
    let mut file = UserRules::open_user(app.host.env()).map_err(rules_error)?;
    let removed = file.remove(number).map_err(rules_error)?;
    file.save().map_err(rules_error)?;
    app.hub.emit(&json!({"type": "rules_changed"}));
    Ok(Json(json!({"removed": removed})))
}
