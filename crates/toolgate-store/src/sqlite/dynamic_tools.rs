//! [`DynamicToolStore`] for [`SqliteStore`]: one table (migration 8).

use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension as _, Row, params};

use super::{Db as _, SqliteStore, from_i64, now_ms, write_tx};
use crate::{
    Created, DynamicToolKind, DynamicToolRecord, DynamicToolScope, DynamicToolStatus,
    DynamicToolStore, NewDynamicTool, StatusChange, StoreError,
};

/// The columns of a [`DynamicToolRecord`], read by [`tool_row`].
const COLUMNS: &str = "id, name, description, kind, interpreter, source, parameters, scope,
    created_by, session_id, advice, status, created, updated";

/// A row with its JSON and enumerated columns still text: decoded off the
/// row, so that bad stored data is a [`StoreError`], not a driver error.
struct RawTool {
    record: DynamicToolRecord,
    kind: String,
    parameters: String,
    scope: String,
    advice: String,
    status: String,
}

#[async_trait]
impl DynamicToolStore for SqliteStore {
    async fn create_dynamic_tool(
        &self,
        tool: &NewDynamicTool,
        max_per_agent: usize,
    ) -> Result<Created, StoreError> {
        let tool = tool.clone();
        let parameters = serde_json::to_string(&tool.parameters).map_err(StoreError::Json)?;
        let advice = serde_json::to_string(&tool.advice).map_err(StoreError::Json)?;
        self.with_conn(move |conn| {
            // Rules 2 to 4: checked and inserted under the write lock.
            let tx = write_tx(conn)?;
            let taken: Option<(i64, String)> = tx
                .query_row(
                    "SELECT id, status FROM dynamic_tools
                     WHERE name = ?1 AND status <> 'rejected'",
                    [&tool.name],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()
                .db()?;
            if let Some((id, status)) = taken {
                return Ok(Created::NameTaken {
                    id,
                    status: decode_status(&status)?,
                });
            }
            let count: i64 = tx
                .query_row(
                    "SELECT COUNT(*) FROM dynamic_tools
                     WHERE created_by = ?1 AND status <> 'rejected'",
                    [&tool.created_by],
                    |r| r.get(0),
                )
                .db()?;
            let count: usize = from_i64(count);
            if count >= max_per_agent {
                return Ok(Created::LimitReached { count });
            }
            let now = now_ms();
            let id: i64 = tx
                .query_row(
                    "INSERT INTO dynamic_tools (name, description, kind, interpreter, source,
                        parameters, scope, created_by, session_id, advice, status, created,
                        updated)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 'pending', ?11, ?11)
                     RETURNING id",
                    params![
                        tool.name,
                        tool.description,
                        tool.kind.as_str(),
                        tool.interpreter,
                        tool.source,
                        parameters,
                        tool.scope.as_str(),
                        tool.created_by,
                        tool.session_id,
                        advice,
                        now,
                    ],
                    |r| r.get(0),
                )
                .db()?;
            tx.commit().db()?;
            Ok(Created::Created(Box::new(DynamicToolRecord {
                id,
                name: tool.name,
                description: tool.description,
                kind: tool.kind,
                interpreter: tool.interpreter,
                source: tool.source,
                parameters: tool.parameters,
                scope: tool.scope,
                created_by: tool.created_by,
                session_id: tool.session_id,
                advice: tool.advice,
                status: DynamicToolStatus::Pending,
                created: now,
                updated: now,
            })))
        })
        .await
    }

    async fn dynamic_tool(&self, id: i64) -> Result<Option<DynamicToolRecord>, StoreError> {
        self.with_conn(move |conn| get(conn, id)).await
    }

    async fn list_dynamic_tools(
        &self,
        status: Option<DynamicToolStatus>,
    ) -> Result<Vec<DynamicToolRecord>, StoreError> {
        let status = status.map(DynamicToolStatus::as_str);
        self.with_conn(move |conn| {
            select(
                conn,
                "WHERE ?1 IS NULL OR status = ?1 ORDER BY id",
                params![status],
            )
        })
        .await
    }

    async fn set_dynamic_tool_status(
        &self,
        id: i64,
        status: DynamicToolStatus,
    ) -> Result<StatusChange, StoreError> {
        self.with_conn(move |conn| {
            let tx = write_tx(conn)?;
            let Some(mut tool) = get(&tx, id)? else {
                return Ok(StatusChange::NotFound);
            };
            if tool.status == status {
                return Ok(StatusChange::Changed(tool));
            }
            if tool.status == DynamicToolStatus::Rejected {
                return Ok(StatusChange::Final(tool));
            }
            // Time moves forward for a record even if the clock does not.
            let now = now_ms().max(tool.updated + 1);
            tx.execute(
                "UPDATE dynamic_tools SET status = ?2, updated = ?3 WHERE id = ?1",
                params![id, status.as_str(), now],
            )
            .db()?;
            tx.commit().db()?;
            tool.status = status;
            tool.updated = now;
            Ok(StatusChange::Changed(tool))
        })
        .await
    }

    async fn approved_dynamic_tools_for(
        &self,
        agent: &str,
    ) -> Result<Vec<DynamicToolRecord>, StoreError> {
        let agent = agent.to_owned();
        self.with_conn(move |conn| {
            select(
                conn,
                "WHERE status = 'approved' AND (scope = 'global' OR created_by = ?1) ORDER BY id",
                params![agent],
            )
        })
        .await
    }
}

fn get(conn: &Connection, id: i64) -> Result<Option<DynamicToolRecord>, StoreError> {
    conn.query_row(
        &format!("SELECT {COLUMNS} FROM dynamic_tools WHERE id = ?1"),
        [id],
        tool_row,
    )
    .optional()
    .db()?
    .map(decode)
    .transpose()
}

fn select(
    conn: &Connection,
    clause: &str,
    params: impl rusqlite::Params,
) -> Result<Vec<DynamicToolRecord>, StoreError> {
    let mut st = conn
        .prepare_cached(&format!("SELECT {COLUMNS} FROM dynamic_tools {clause}"))
        .db()?;
    let raw: Vec<RawTool> = st
        .query_map(params, tool_row)
        .db()?
        .collect::<Result<_, _>>()
        .db()?;
    raw.into_iter().map(decode).collect()
}

fn tool_row(r: &Row<'_>) -> rusqlite::Result<RawTool> {
    Ok(RawTool {
        record: DynamicToolRecord {
            id: r.get(0)?,
            name: r.get(1)?,
            description: r.get(2)?,
            kind: DynamicToolKind::Command,
            interpreter: r.get(4)?,
            source: r.get(5)?,
            parameters: serde_json::Value::Null,
            scope: DynamicToolScope::Agent,
            created_by: r.get(8)?,
            session_id: r.get(9)?,
            advice: serde_json::Value::Null,
            status: DynamicToolStatus::Pending,
            created: r.get(12)?,
            updated: r.get(13)?,
        },
        kind: r.get(3)?,
        parameters: r.get(6)?,
        scope: r.get(7)?,
        advice: r.get(10)?,
        status: r.get(11)?,
    })
}

fn decode(raw: RawTool) -> Result<DynamicToolRecord, StoreError> {
    let mut tool = raw.record;
    // The table's CHECK constraints keep these to known names; a value
    // outside them means another program wrote the row.
    tool.kind = DynamicToolKind::from_name(&raw.kind).ok_or_else(|| unknown("kind", &raw.kind))?;
    tool.scope =
        DynamicToolScope::from_name(&raw.scope).ok_or_else(|| unknown("scope", &raw.scope))?;
    tool.status = decode_status(&raw.status)?;
    tool.parameters = serde_json::from_str(&raw.parameters).map_err(StoreError::Json)?;
    tool.advice = serde_json::from_str(&raw.advice).map_err(StoreError::Json)?;
    Ok(tool)
}

fn decode_status(name: &str) -> Result<DynamicToolStatus, StoreError> {
    DynamicToolStatus::from_name(name).ok_or_else(|| unknown("status", name))
}

fn unknown(column: &str, value: &str) -> StoreError {
    StoreError::db(std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!("dynamic_tools.{column} holds an unknown value {value:?}"),
    ))
}
