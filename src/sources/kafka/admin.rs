//! `vigil kafka topics`: creates the topics a deployment needs, with the partition counts and
//! cleanup policies the source checks at start (outputs and changelog as many partitions as the
//! input; changelog and control compacted; control one partition).

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::types::RDKafkaErrorCode;

use super::config::KafkaConfig;
use super::{client_config, KafkaSourceError};

/// What happened to one topic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TopicOutcome {
    Created,
    AlreadyExists,
}

/// Creates the input, output, changelog and control topics of `config`.
pub async fn create_topics(
    config: &KafkaConfig,
    partitions: i32,
    replication: i32,
) -> Result<Vec<(String, TopicOutcome)>, KafkaSourceError> {
    let admin: AdminClient<DefaultClientContext> = client_config(config).create()?;
    let fixed = || TopicReplication::Fixed(replication);
    let mut topics = Vec::new();
    for name in [
        &config.input_topic,
        &config.decisions_topic,
        &config.cases_topic,
        &config.dead_letter_topic,
    ] {
        topics.push(NewTopic::new(name, partitions, fixed()));
    }
    topics.push(
        NewTopic::new(&config.changelog_topic, partitions, fixed())
            .set("cleanup.policy", "compact"),
    );
    topics.push(NewTopic::new(&config.control_topic, 1, fixed()).set("cleanup.policy", "compact"));
    let results = admin
        .create_topics(topics.iter(), &AdminOptions::new())
        .await?;
    let mut outcomes = Vec::new();
    for result in results {
        match result {
            Ok(name) => outcomes.push((name, TopicOutcome::Created)),
            Err((name, RDKafkaErrorCode::TopicAlreadyExists)) => {
                outcomes.push((name, TopicOutcome::AlreadyExists))
            }
            Err((name, code)) => {
                return Err(KafkaSourceError::Admin(format!(
                    "cannot create topic {name}: {code}"
                )))
            }
        }
    }
    Ok(outcomes)
}
