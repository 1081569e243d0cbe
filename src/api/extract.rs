//! Request extraction: the JSON body (content type, size limit, simd-json parsing) and path
//! parameters, with every failure turned into an [`ApiError`] naming the field (never axum's
//! plain-text rejections).

use axum::body::Bytes;
use axum::extract::rejection::PathRejection;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{header, StatusCode};
use serde::de::DeserializeOwned;

use super::error::ApiError;
use crate::model::parse_json;

/// A JSON body parsed into `T`, with the raw bytes kept (stored verbatim for audit).
pub struct JsonBody<T> {
    pub value: T,
    pub raw: Bytes,
}

pub fn is_json(content_type: Option<&header::HeaderValue>) -> bool {
    let Some(value) = content_type.and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let mime = value.split(';').next().unwrap_or("").trim();
    mime.eq_ignore_ascii_case("application/json")
        || (mime.starts_with("application/") && mime.ends_with("+json"))
}

/// Reads the body as bytes, mapping the size limit to 413.
pub async fn body_bytes(request: Request) -> Result<Bytes, ApiError> {
    Bytes::from_request(request, &())
        .await
        .map_err(|rejection| {
            if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::field(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "request body is too large",
                    "body",
                    "exceeds the configured maximum size",
                )
            } else {
                ApiError::field(
                    StatusCode::BAD_REQUEST,
                    "request body could not be read",
                    "body",
                    &rejection.body_text().to_lowercase(),
                )
            }
        })
}

impl<S, T> FromRequest<S> for JsonBody<T>
where
    S: Send + Sync,
    T: DeserializeOwned + 'static,
{
    type Rejection = ApiError;

    async fn from_request(request: Request, _state: &S) -> Result<Self, Self::Rejection> {
        if !is_json(request.headers().get(header::CONTENT_TYPE)) {
            return Err(ApiError::field(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported content type",
                "Content-Type",
                "must be application/json",
            ));
        }
        let raw = body_bytes(request).await?;
        if raw.is_empty() {
            return Err(ApiError::field(
                StatusCode::BAD_REQUEST,
                "request body is empty",
                "body",
                "a JSON object is required",
            ));
        }
        let value = SCRATCH.with(|scratch| parse_json::<T>(&raw, &mut scratch.borrow_mut()))?;
        Ok(JsonBody { value, raw })
    }
}

/// Path parameters, as axum's `Path`, whose rejections (a parameter that is not UTF-8 once
/// percent-decoded, or not of the expected type) are JSON errors naming the parameter.
pub struct Path<T>(pub T);

impl<S, T> FromRequestParts<S> for Path<T>
where
    S: Send + Sync,
    T: DeserializeOwned + Send,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match axum::extract::Path::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Path(value)) => Ok(Path(value)),
            Err(rejection) => Err(path_error(rejection)),
        }
    }
}

fn path_error(rejection: PathRejection) -> ApiError {
    use axum::extract::path::ErrorKind;
    let invalid = |field: &str, problem: &str| {
        ApiError::field(
            StatusCode::BAD_REQUEST,
            "invalid path parameter",
            field,
            problem,
        )
    };
    match rejection {
        PathRejection::FailedToDeserializePathParams(error) => match error.into_kind() {
            ErrorKind::InvalidUtf8InPathParam { key } => {
                invalid(&key, "is not valid UTF-8 once percent-decoded")
            }
            ErrorKind::ParseErrorAtKey {
                key, expected_type, ..
            } => invalid(&key, &format!("must be a {expected_type}")),
            other => invalid("path", &other.to_string().to_lowercase()),
        },
        other => ApiError::internal(other.body_text()),
    }
}

thread_local! {
    /// simd-json parses in place; one reusable buffer per worker thread avoids an allocation.
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_content_types_are_recognised() {
        let json = header::HeaderValue::from_static("application/json; charset=utf-8");
        let problem = header::HeaderValue::from_static("application/problem+json");
        let text = header::HeaderValue::from_static("text/plain");
        assert!(is_json(Some(&json)));
        assert!(is_json(Some(&problem)));
        assert!(!is_json(Some(&text)));
        assert!(!is_json(None));
    }
}
