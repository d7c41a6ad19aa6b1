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
        let saved = save_rule(&app, &rule).await?;
        Some((saved, rule))
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
        "rule": rule.map(|(mut saved, rule)| {
            saved["rule"] = serde_json::to_value(rule).unwrap_or_default();
            saved
        }),
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

/// Saves `rule`: into the shared store when there is one (every worker
/// applies it at once), else into the user's file. What was saved where:
/// `{"source": "store", "id": …}` or `{"source": "file", "number": …}`.
async fn save_rule(app: &App, rule: &ConfirmationRule) -> Result<Value, ApiError> {
    let saved = if let Some(store) = app.approvals.saved_rules() {
        let saved = toolgate_host::save_rule_in_store(store.as_ref(), rule, "ui")
            .await
            .map_err(save_error)?;
        json!({"source": "store", "id": saved.id})
    } else {
        let mut file = UserRules::open_user(app.host.env()).map_err(rules_error)?;
        let number = file.add(rule).map_err(rules_error)?;
        file.save().map_err(rules_error)?;
        json!({"source": "file", "number": number})
    };
    app.hub.emit(&json!({"type": "rules_changed"}));
    Ok(saved)
}

/// A rule that was not saved in the shared store: not valid (400), or the
/// store did not take it (503).
fn save_error(error: toolgate_host::SaveRuleError) -> ApiError {
    match error {
        toolgate_host::SaveRuleError::Invalid(e) => {
            ApiError::new(StatusCode::BAD_REQUEST, toolgate_core::error_chain(&e))
                .hint("fix the rule; `toolgate rules add --help` shows each key")
        }
        toolgate_host::SaveRuleError::Store(e) => store_error(e),
        other => ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            toolgate_core::error_chain(&other),
        ),
    }
}

/// The shared store could not save, list or remove a rule.
#[expect(clippy::needless_pass_by_value, reason = "a `map_err` argument")]
fn store_error(error: toolgate_store::StoreError) -> ApiError {
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        format!(
            "the shared store's saved rules cannot be reached: {}",
            toolgate_core::error_chain(&error)
        ),
    )
    .hint("check that the PostgreSQL server of `store.url` is up (`toolgate store migrate` checks it)")
}

/// The user's file rules (`source: "file"`, by `number`), then, with a
/// shared store, the rules saved there (`source: "store"`, by `id`).
pub(super) async fn rules(State(app): State<Arc<App>>) -> ApiResult {
    let file = UserRules::open_user(app.host.env()).map_err(rules_error)?;
    let rules = file.rules().map_err(rules_error)?;
    let mut rows: Vec<Value> = rules
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mut row = serde_json::to_value(r).unwrap_or_default();
            row["number"] = Value::from(i + 1);
            row["source"] = Value::from("file");
            row
        })
        .collect();
    if let Some(store) = app.approvals.saved_rules() {
        for saved in store.rules().await.map_err(store_error)? {
            let mut row = saved.rule;
            if !row.is_object() {
                row = json!({ "rule": row });
            }
            row["id"] = Value::from(saved.id);
            row["source"] = Value::from("store");
            row["saved_by"] = Value::from(saved.saved_by);
            row["saved"] = Value::from(saved.saved);
            rows.push(row);
        }
    }
    Ok(Json(json!({
        "file": file.path(),
        "store": app.approvals.saved_rules().is_some(),
        "rules": rows,
    })))
}

pub(super) async fn add_rule(
    State(app): State<Arc<App>>,
    Json(rule): Json<ConfirmationRule>,
) -> ApiResult {
    let saved = save_rule(&app, &rule).await?;
    Ok(Json(saved))
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

/// Removes rule `id` of the shared store.
pub(super) async fn remove_stored_rule(
    State(app): State<Arc<App>>,
    Path(id): Path<i64>,
) -> ApiResult {
    let Some(store) = app.approvals.saved_rules() else {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "this server keeps no rules in its store (there is no shared `store.url`)",
        ));
    };
    if !store.remove_rule(id).await.map_err(store_error)? {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            format!("the store holds no saved rule {id}"),
        )
        .hint("the rules page and `toolgate rules list` show the saved rules and their ids"));
    }
    app.hub.emit(&json!({"type": "rules_changed"}));
    Ok(Json(json!({"removed": id})))
}
