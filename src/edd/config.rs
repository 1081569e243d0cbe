//! `[edd]`: the EDD pipelines. A pipeline is a slug and an ordered list of steps; each step is a
//! `task` (completed or failed by whoever does it) or an `approval` (approved or failed). Writing
//! any `[[edd.pipelines]]` replaces the built-in set, so list every pipeline you want.

use serde::{Deserialize, Serialize};

/// What a step needs to pass.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum StepKind {
    /// Done work: `complete` or `fail`.
    #[default]
    Task,
    /// A decision: `approve` or `fail`.
    Approval,
}

impl StepKind {
    pub fn as_str(self) -> &'static str {
        match self {
            StepKind::Task => "task",
            StepKind::Approval => "approval",
        }
    }

    pub fn parse(value: &str) -> Option<StepKind> {
        match value {
            "task" => Some(StepKind::Task),
            "approval" => Some(StepKind::Approval),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepConfig {
    /// Lower-case letters, digits and dashes; unique in the pipeline.
    pub key: String,
    pub name: String,
    #[serde(default)]
    pub kind: StepKind,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PipelineConfig {
    /// What requests name as `pipelineSlug`: lower-case letters, digits and dashes.
    pub slug: String,
    #[serde(default)]
    pub name: String,
    pub steps: Vec<StepConfig>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EddConfig {
    pub pipelines: Vec<PipelineConfig>,
}

fn step(key: &str, name: &str, kind: StepKind) -> StepConfig {
    StepConfig {
        key: key.to_owned(),
        name: name.to_owned(),
        kind,
    }
}

impl Default for EddConfig {
    fn default() -> Self {
        EddConfig {
            pipelines: vec![
                PipelineConfig {
                    slug: "standard".to_owned(),
                    name: "Standard enhanced due diligence".to_owned(),
                    steps: vec![
                        step(
                            "identity-verification",
                            "Identity verification",
                            StepKind::Task,
                        ),
                        step(
                            "screening",
                            "Sanctions, PEP and adverse-media screening",
                            StepKind::Task,
                        ),
                        step("source-of-funds", "Source-of-funds review", StepKind::Task),
                        step(
                            "account-officer-approval",
                            "Account-officer approval",
                            StepKind::Approval,
                        ),
                    ],
                },
                PipelineConfig {
                    slug: "pep".to_owned(),
                    name: "Politically exposed person".to_owned(),
                    steps: vec![
                        step(
                            "identity-verification",
                            "Identity verification",
                            StepKind::Task,
                        ),
                        step(
                            "screening",
                            "Sanctions, PEP and adverse-media screening",
                            StepKind::Task,
                        ),
                        step(
                            "source-of-wealth",
                            "Source-of-wealth review",
                            StepKind::Task,
                        ),
                        step("source-of-funds", "Source-of-funds review", StepKind::Task),
                        step(
                            "senior-management-approval",
                            "Senior-management approval",
                            StepKind::Approval,
                        ),
                        step(
                            "account-officer-approval",
                            "Account-officer approval",
                            StepKind::Approval,
                        ),
                    ],
                },
            ],
        }
    }
}

fn is_slug(value: &str) -> bool {
    !value.is_empty()
        && value.len() <= 64
        && value
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !value.starts_with('-')
}

impl EddConfig {
    pub fn pipeline(&self, slug: &str) -> Option<&PipelineConfig> {
        self.pipelines.iter().find(|p| p.slug == slug)
    }

    pub fn slugs(&self) -> Vec<&str> {
        self.pipelines.iter().map(|p| p.slug.as_str()).collect()
    }

    /// Problems as (config key, problem), for config validation.
    pub fn problems(&self) -> Vec<(String, String)> {
        let mut problems = Vec::new();
        if self.pipelines.is_empty() {
            problems.push((
                "edd.pipelines".into(),
                "at least one pipeline is needed".into(),
            ));
        }
        for (i, pipeline) in self.pipelines.iter().enumerate() {
            let key = format!("edd.pipelines[{i}]");
            if !is_slug(&pipeline.slug) {
                problems.push((
                    format!("{key}.slug"),
                    "must be lower-case letters, digits and dashes (at most 64)".into(),
                ));
            }
            if self.pipelines[..i].iter().any(|p| p.slug == pipeline.slug) {
                problems.push((
                    format!("{key}.slug"),
                    format!("'{}' is used twice", pipeline.slug),
                ));
            }
            if pipeline.steps.is_empty() {
                problems.push((format!("{key}.steps"), "at least one step is needed".into()));
            }
            for (j, step) in pipeline.steps.iter().enumerate() {
                if !is_slug(&step.key) {
                    problems.push((
                        format!("{key}.steps[{j}].key"),
                        "must be lower-case letters, digits and dashes (at most 64)".into(),
                    ));
                }
                if pipeline.steps[..j].iter().any(|s| s.key == step.key) {
                    problems.push((
                        format!("{key}.steps[{j}].key"),
                        format!("'{}' is used twice", step.key),
                    ));
                }
                if step.name.trim().is_empty() {
                    problems.push((format!("{key}.steps[{j}].name"), "must not be empty".into()));
                }
            }
        }
        problems
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_configuration_ships_a_valid_standard_pipeline() {
        let config = EddConfig::default();
        assert!(config.problems().is_empty(), "{:?}", config.problems());
        let standard = config.pipeline("standard").expect("standard pipeline");
        let keys: Vec<&str> = standard.steps.iter().map(|s| s.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "identity-verification",
                "screening",
                "source-of-funds",
                "account-officer-approval"
            ]
        );
        assert_eq!(standard.steps[3].kind, StepKind::Approval);
    }

    #[test]
    fn duplicate_slugs_bad_keys_and_empty_pipelines_are_refused() {
        let mut config = EddConfig::default();
        config.pipelines[1].slug = "standard".into();
        config.pipelines[0].steps[1].key = "Screening".into();
        config.pipelines.push(PipelineConfig {
            slug: "empty".into(),
            name: String::new(),
            steps: Vec::new(),
        });
        let keys: Vec<String> = config.problems().into_iter().map(|(k, _)| k).collect();
        assert!(
            keys.contains(&"edd.pipelines[1].slug".to_owned()),
            "{keys:?}"
        );
        assert!(keys.contains(&"edd.pipelines[0].steps[1].key".to_owned()));
        assert!(keys.contains(&"edd.pipelines[2].steps".to_owned()));
    }
}
