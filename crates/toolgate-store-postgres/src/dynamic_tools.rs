//! [`DynamicToolStore`] for [`PostgresStore`].

use async_trait::async_trait;
use tokio_postgres::types::ToSql;
use tokio_postgres::{GenericClient, Row};

use super::{Db as _, PostgresStore, begin, from_i64, from_json, now_ms, to_json};
use toolgate_store::{
    Created, DynamicToolKind, DynamicToolRecord, DynamicToolScope, DynamicToolStatus,
    DynamicToolStore, NewDynamicTool, StatusChange, StoreError,
};

const COLUMNS: &str = "id, name, description, kind, interpreter, source, parameters, scope,
    created_by, session_id, advice, status, created, updated";

/// The advisory lock key that serialises creations (rule 4): the name and
/// the per-agent count are checked and the tool inserted while it is held.
const CREATE_LOCK: i64 = 0x746f_6f6c_6479_6e74; // "tooldynt"

#[async_trait]
impl DynamicToolStore for PostgresStore {
    async fn create_dynamic_tool(
        &self,
        tool: &NewDynamicTool,
        max_per_agent: usize,
    ) -> Result<Created, StoreError> {
        let parameters = to_json(&tool.parameters)?;
        let advice = to_json(&tool.advice)?;
        let mut client = self.client().await?;
        let tx = begin(&mut client).await?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&CREATE_LOCK])
            .await
            .db()?;
        let taken = tx
            .query_opt(
                "SELECT id, status FROM dynamic_tools WHERE name = $1 AND status <> 'rejected'",
                &[&tool.name],
            )
            .await
            .db()?;
        if let Some(row) = taken {
            return Ok(Created::NameTaken {
                id: row.get(0),
                status: decode_status(row.get(1))?,
            });
        }
        let count: i64 = tx
            .query_one(
                "SELECT COUNT(*) FROM dynamic_tools WHERE created_by = $1 AND status <> 'rejected'",
                &[&tool.created_by],
            )
            .await
            .db()?
            .get(0);
        let count: usize = from_i64(count);
        if count >= max_per_agent {
            return Ok(Created::LimitReached { count });
        }
        let now = now_ms();
        let id: i64 = tx
            .query_one(
                "INSERT INTO dynamic_tools (name, description, kind, interpreter, source,
                    parameters, scope, created_by, session_id, advice, status, created, updated)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'pending', $11, $11)
                 RETURNING id",
                &[
                    &tool.name,
                    &tool.description,
                    &tool.kind.as_str(),
                    &tool.interpreter,
                    &tool.source,
                    &parameters,
                    &tool.scope.as_str(),
                    &tool.created_by,
                    &tool.session_id,
                    &advice,
                    &now,
                ],
            )
            .await
            .db()?
            .get(0);
        tx.commit().await.db()?;
        Ok(Created::Created(Box::new(DynamicToolRecord {
            id,
            name: tool.name.clone(),
            description: tool.description.clone(),
            kind: tool.kind,
            interpreter: tool.interpreter.clone(),
            source: tool.source.clone(),
            parameters: tool.parameters.clone(),
            scope: tool.scope,
            created_by: tool.created_by.clone(),
            session_id: tool.session_id.clone(),
            advice: tool.advice.clone(),
            status: DynamicToolStatus::Pending,
            created: now,
            updated: now,
        })))
    }

    async fn dynamic_tool(&self, id: i64) -> Result<Option<DynamicToolRecord>, StoreError> {
        let client = self.client().await?;
        get(&**client, id, false).await
    }

    async fn list_dynamic_tools(
        &self,
        status: Option<DynamicToolStatus>,
    ) -> Result<Vec<DynamicToolRecord>, StoreError> {
        let status = status.map(DynamicToolStatus::as_str);
        let client = self.client().await?;
        select(
            &**client,
            "WHERE $1::TEXT IS NULL OR status = $1 ORDER BY id",
            &[&status],
        )
        .await
    }

    async fn set_dynamic_tool_status(
        &self,
        id: i64,
        status: DynamicToolStatus,
    ) -> Result<StatusChange, StoreError> {
        let mut client = self.client().await?;
        let tx = begin(&mut client).await?;
        let Some(mut tool) = get(&tx, id, true).await? else {
            return Ok(StatusChange::NotFound);
        };
        if tool.status == status {
            return Ok(StatusChange::Changed(tool));
        }
        if tool.status == DynamicToolStatus::Rejected {
            return Ok(StatusChange::Final(tool));
        }
        let now = now_ms().max(tool.updated + 1);
        tx.execute(
            "UPDATE dynamic_tools SET status = $2, updated = $3 WHERE id = $1",
            &[&id, &status.as_str(), &now],
        )
        .await
        .db()?;
        tx.commit().await.db()?;
        tool.status = status;
        tool.updated = now;
        Ok(StatusChange::Changed(tool))
    }

    async fn approved_dynamic_tools_for(
        &self,
        agent: &str,
    ) -> Result<Vec<DynamicToolRecord>, StoreError> {
        let client = self.client().await?;
        select(
            &**client,
            "WHERE status = 'approved' AND (scope = 'global' OR created_by = $1) ORDER BY id",
            &[&agent],
        )
        .await
    }
}

async fn get(
    client: &impl GenericClient,
    id: i64,
    lock: bool,
) -> Result<Option<DynamicToolRecord>, StoreError> {
    let clause = if lock {
        "WHERE id = $1 FOR UPDATE"
    } else {
        "WHERE id = $1"
    };
    Ok(select(client, clause, &[&id]).await?.into_iter().next())
}

async fn select(
    client: &impl GenericClient,
    clause: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<Vec<DynamicToolRecord>, StoreError> {
    let rows = client
        .query(
            &format!("SELECT {COLUMNS} FROM dynamic_tools {clause}"),
            params,
        )
        .await
        .db()?;
    rows.iter().map(decode).collect()
}

fn decode(r: &Row) -> Result<DynamicToolRecord, StoreError> {
    let kind: &str = r.get(3);
    let scope: &str = r.get(7);
    Ok(DynamicToolRecord {
        id: r.get(0),
        name: r.get(1),
        description: r.get(2),
        kind: DynamicToolKind::from_name(kind).ok_or_else(|| unknown("kind", kind))?,
        interpreter: r.get(4),
        source: r.get(5),
        parameters: from_json(r.get(6))?,
        scope: DynamicToolScope::from_name(scope).ok_or_else(|| unknown("scope", scope))?,
        created_by: r.get(8),
        session_id: r.get(9),
        advice: from_json(r.get(10))?,
        status: decode_status(r.get(11))?,
        created: r.get(12),
        updated: r.get(13),
    })
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
