//! The local registry provider: NIN, BVN and CAC records in Vigil's own store, imported from
//! JSON or CSV files (`vigil registry import nin|bvn|cac FILE`).
//!
//! Files: a JSON array of objects (or one object per line), or a CSV file whose header names the
//! §2.7 fields (any case style; CAC's `affiliatesData` column holds a JSON array). Every record is
//! normalised like a provider's answer ([`super::model::normalize`]) and keyed by its number —
//! NIN and BVN `idNumber` (11 digits), CAC `companyType` (BN, RC, IT, or the prefix of
//! `registrationNumber`) and the registration number's digits. An import is one database
//! transaction: a file with any bad row changes nothing and names every bad row.

use std::path::Path;

use serde_json::{Map, Value};
use sqlx::Row;
use thiserror::Error;

use super::model::{
    camel, clean_rc_number, company_key, is_eleven_digits, normalize, LookupKind, COMPANY_TYPES,
};
use crate::store::{now_ms, StoreError};

#[derive(Debug, Error)]
pub enum ImportError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{0}")]
    Format(String),
    #[error("{count} invalid records, nothing imported: {first}")]
    Invalid { count: usize, first: String },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<sqlx::Error> for ImportError {
    fn from(error: sqlx::Error) -> Self {
        ImportError::Store(StoreError::Database(error))
    }
}

/// Reads one registry file into raw JSON objects.
pub fn read_file(path: &Path) -> Result<Vec<Map<String, Value>>, ImportError> {
    let text = std::fs::read_to_string(path).map_err(|source| ImportError::Read {
        path: path.display().to_string(),
        source,
    })?;
    let is_csv = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
    if is_csv {
        parse_csv(&text)
    } else {
        parse_json(&text)
    }
}

fn parse_json(text: &str) -> Result<Vec<Map<String, Value>>, ImportError> {
    let trimmed = text.trim_start();
    let values: Vec<Value> = if trimmed.starts_with('[') {
        serde_json::from_str(trimmed).map_err(|e| ImportError::Format(format!("not JSON: {e}")))?
    } else {
        trimmed
            .lines()
            .enumerate()
            .filter(|(_, line)| !line.trim().is_empty())
            .map(|(n, line)| {
                serde_json::from_str(line)
                    .map_err(|e| ImportError::Format(format!("line {}: not JSON: {e}", n + 1)))
            })
            .collect::<Result<_, _>>()?
    };
    values
        .into_iter()
        .enumerate()
        .map(|(n, value)| match value {
            Value::Object(map) => Ok(map),
            _ => Err(ImportError::Format(format!(
                "record {} is not a JSON object",
                n + 1
            ))),
        })
        .collect()
}

fn parse_csv(text: &str) -> Result<Vec<Map<String, Value>>, ImportError> {
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let headers = reader
        .headers()
        .map_err(|e| ImportError::Format(format!("CSV header: {e}")))?
        .clone();
    let mut out = Vec::new();
    for (n, row) in reader.records().enumerate() {
        let row = row.map_err(|e| ImportError::Format(format!("CSV row {}: {e}", n + 2)))?;
        let mut map = Map::new();
        for (header, cell) in headers.iter().zip(row.iter()) {
            let value = if camel(header) == "affiliatesData" && !cell.is_empty() {
                serde_json::from_str(cell).map_err(|e| {
                    ImportError::Format(format!(
                        "CSV row {}: affiliatesData is not JSON: {e}",
                        n + 2
                    ))
                })?
            } else if cell.is_empty() {
                Value::Null
            } else {
                Value::String(cell.to_owned())
            };
            map.insert(header.to_owned(), value);
        }
        out.push(map);
    }
    Ok(out)
}

/// The registry key and normalised record of one raw record, or the problem.
pub fn keyed(kind: LookupKind, raw: &Map<String, Value>) -> Result<(String, Value), String> {
    let data = normalize(kind, &Value::Object(raw.clone())).ok_or("not an object")?;
    match kind {
        LookupKind::Nin | LookupKind::Bvn => {
            let id = data["idNumber"].as_str().unwrap_or_default().to_owned();
            if !is_eleven_digits(&id) {
                return Err(format!("idNumber '{id}' is not 11 digits"));
            }
            Ok((id, data))
        }
        LookupKind::Cac => {
            let number = data["registrationNumber"]
                .as_str()
                .unwrap_or_default()
                .to_ascii_uppercase();
            let given_type = raw
                .iter()
                .find(|(k, _)| camel(k) == "companyType")
                .and_then(|(_, v)| v.as_str())
                .map(|t| t.trim().to_ascii_uppercase());
            let prefix = COMPANY_TYPES
                .iter()
                .find(|t| number.trim_start().starts_with(**t))
                .map(|t| (*t).to_owned());
            let Some(company_type) = given_type.or(prefix) else {
                return Err(format!(
                    "registrationNumber '{number}': no companyType (BN, RC or IT) given or prefixed"
                ));
            };
            if !COMPANY_TYPES.contains(&company_type.as_str()) {
                return Err(format!("companyType '{company_type}' is not BN, RC or IT"));
            }
            let digits = clean_rc_number(&number);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(format!("registrationNumber '{number}' has no digits"));
            }
            Ok((company_key(&company_type, &digits), data))
        }
    }
}

/// Imports records (all or none); answers how many were written (new or replaced).
pub async fn import(
    pool: &sqlx::AnyPool,
    kind: LookupKind,
    records: &[Map<String, Value>],
    source: &str,
) -> Result<usize, ImportError> {
    let mut rows = Vec::with_capacity(records.len());
    let mut problems = Vec::new();
    for (n, raw) in records.iter().enumerate() {
        match keyed(kind, raw) {
            Ok(row) => rows.push(row),
            Err(problem) => problems.push(format!("record {}: {problem}", n + 1)),
        }
    }
    if let Some(first) = problems.first() {
        return Err(ImportError::Invalid {
            count: problems.len(),
            first: first.clone(),
        });
    }
    let now = now_ms();
    let mut tx = crate::store::begin_write(pool).await?;
    for (key, data) in &rows {
        sqlx::query(
            "INSERT INTO identity_registry (kind, number, record, source, imported_at_ms) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (kind, number) DO UPDATE SET \
             record = excluded.record, source = excluded.source, \
             imported_at_ms = excluded.imported_at_ms",
        )
        .bind(kind.as_str())
        .bind(key)
        .bind(data.to_string())
        .bind(source)
        .bind(now)
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    Ok(rows.len())
}

/// Imports a file.
pub async fn import_file(
    pool: &sqlx::AnyPool,
    kind: LookupKind,
    path: &Path,
) -> Result<usize, ImportError> {
    let records = read_file(path)?;
    let source = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    import(pool, kind, &records, &source).await
}

/// How many records of `kind` the registry holds.
pub async fn count(pool: &sqlx::AnyPool, kind: LookupKind) -> Result<i64, StoreError> {
    let row = sqlx::query("SELECT COUNT(*) FROM identity_registry WHERE kind = $1")
        .bind(kind.as_str())
        .fetch_one(pool)
        .await?;
    Ok(row.get(0))
}

/// Loads `{dir}/{kind}.json` (or `.csv`) for every kind the registry has no record of yet: the
/// sample registry of a fresh embedded install. A missing directory loads nothing.
pub async fn seed(
    pool: &sqlx::AnyPool,
    dir: &Path,
) -> Result<Vec<(LookupKind, usize)>, ImportError> {
    let mut loaded = Vec::new();
    if dir.as_os_str().is_empty() || !dir.is_dir() {
        return Ok(loaded);
    }
    for kind in [LookupKind::Nin, LookupKind::Bvn, LookupKind::Cac] {
        if count(pool, kind).await? > 0 {
            continue;
        }
        for extension in ["json", "csv"] {
            let path = dir.join(format!("{}.{extension}", kind.as_str()));
            if path.is_file() {
                loaded.push((kind, import_file(pool, kind, &path).await?));
                break;
            }
        }
    }
    Ok(loaded)
}

/// The local provider.
#[derive(Clone, Debug)]
pub struct LocalRegistry {
    pool: sqlx::AnyPool,
}

impl LocalRegistry {
    pub fn new(pool: sqlx::AnyPool) -> Self {
        LocalRegistry { pool }
    }

    pub async fn get(&self, kind: LookupKind, key: &str) -> Result<Option<Value>, StoreError> {
        let row =
            sqlx::query("SELECT record FROM identity_registry WHERE kind = $1 AND number = $2")
                .bind(kind.as_str())
                .bind(key)
                .fetch_optional(&self.pool)
                .await?;
        row.map(|row| {
            let text: String = row.get(0);
            serde_json::from_str(&text)
                .map_err(|e| StoreError::Corrupt(format!("registry record: {e}")))
        })
        .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_registry_rows_are_keyed_by_number_and_company_type() {
        let rows = parse_csv(
            "registration_number,business_name,companyType,affiliatesData\n\
             RC1234567,Zenith Ltd,,\"[{\"\"surname\"\":\"\"Obi\"\"}]\"\n\
             7654321,Ada Stores,BN,\n",
        )
        .expect("csv parses");
        let (key, data) = keyed(LookupKind::Cac, &rows[0]).expect("prefixed type");
        assert_eq!(key, "RC-1234567");
        assert_eq!(data["affiliates"], 1);
        let (key, _) = keyed(LookupKind::Cac, &rows[1]).expect("explicit type");
        assert_eq!(key, "BN-7654321");
    }

    #[test]
    fn a_person_record_without_an_eleven_digit_number_is_refused() {
        let rows = parse_json(r#"[{"idNumber": "123"}]"#).expect("json");
        let problem = keyed(LookupKind::Nin, &rows[0]).expect_err("short number");
        assert!(problem.contains("11 digits"), "{problem}");
    }
}
