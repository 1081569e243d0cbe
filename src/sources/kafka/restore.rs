//! Reading partitions back when the consumer group assigns one: the changelog (user state) and
//! the tails of the output topics (what was already written past the committed offset).
//!
//! Both reads use a group-less consumer that is assigned one partition at a time and reads a
//! fixed offset range `[from, until)`, where `until` is the high watermark taken before the read.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::{Headers, Message};
use rdkafka::{ClientConfig, Offset, TopicPartitionList};

use super::KafkaSourceError;
use crate::sinks::kafka::header;

/// A consumer for ranged reads (no group, no commits).
pub struct Reader {
    consumer: BaseConsumer,
    timeout: Duration,
}

impl Reader {
    pub fn new(base: &ClientConfig, timeout: Duration) -> Result<Reader, KafkaSourceError> {
        let mut config = base.clone();
        config
            .set("group.id", "vigil-reader")
            .set("enable.auto.commit", "false")
            .set("enable.auto.offset.store", "false")
            .set("enable.partition.eof", "false");
        Ok(Reader {
            consumer: config.create()?,
            timeout,
        })
    }

    pub fn watermarks(&self, topic: &str, partition: i32) -> Result<(i64, i64), KafkaSourceError> {
        Ok(self
            .consumer
            .fetch_watermarks(topic, partition, self.timeout)?)
    }

    /// Calls `each(offset, key, value, source_offset_header)` for every record in
    /// `[from, until)`.
    pub fn read(
        &self,
        topic: &str,
        partition: i32,
        from: i64,
        until: i64,
        mut each: impl FnMut(i64, Option<&[u8]>, Option<&[u8]>, Option<i64>),
    ) -> Result<(), KafkaSourceError> {
        if from >= until {
            return Ok(());
        }
        let mut assignment = TopicPartitionList::new();
        assignment.add_partition_offset(topic, partition, Offset::Offset(from))?;
        self.consumer.assign(&assignment)?;
        let deadline = Instant::now() + self.timeout;
        let mut next = from;
        while next < until {
            if Instant::now() > deadline {
                return Err(KafkaSourceError::Restore(format!(
                    "reading {topic}/{partition} from {from} to {until} took longer than {:?} (at {next})",
                    self.timeout
                )));
            }
            let Some(result) = self.consumer.poll(Duration::from_millis(200)) else {
                continue;
            };
            let message = result?;
            next = message.offset() + 1;
            if message.offset() >= until {
                break;
            }
            let source = message.headers().and_then(|headers| {
                headers
                    .iter()
                    .find(|h| h.key == header::SOURCE_OFFSET)
                    .and_then(|h| h.value)
                    .and_then(|v| std::str::from_utf8(v).ok())
                    .and_then(|v| v.parse::<i64>().ok())
            });
            each(message.offset(), message.key(), message.payload(), source);
        }
        self.consumer.unassign()?;
        Ok(())
    }

    /// The latest value of every key of a changelog partition (`None`: deleted).
    pub fn latest_values(
        &self,
        topic: &str,
        partition: i32,
    ) -> Result<HashMap<Vec<u8>, Option<Vec<u8>>>, KafkaSourceError> {
        let (low, high) = self.watermarks(topic, partition)?;
        let mut latest = HashMap::new();
        self.read(topic, partition, low, high, |_, key, value, _| {
            if let Some(key) = key {
                latest.insert(key.to_vec(), value.map(<[u8]>::to_vec));
            }
        })?;
        Ok(latest)
    }

    /// Source offsets at or after `committed` whose outputs are already in `topic`/`partition`.
    ///
    /// Vigil writes the outputs of input partition `p` to partition `p` of each output topic in
    /// input order, so source offsets rise along the partition: the tail is read backwards in
    /// growing chunks until a record older than `committed` (or the start) is reached.
    pub fn emitted_since(
        &self,
        topic: &str,
        partition: i32,
        committed: i64,
    ) -> Result<HashSet<i64>, KafkaSourceError> {
        let (low, high) = self.watermarks(topic, partition)?;
        let mut emitted = HashSet::new();
        let mut end = high;
        let mut step = 512_i64;
        while end > low {
            let start = (end - step).max(low);
            let mut reached_older = false;
            self.read(
                topic,
                partition,
                start,
                end,
                |_, _, _, source| match source {
                    Some(offset) if offset >= committed => {
                        emitted.insert(offset);
                    }
                    Some(_) => reached_older = true,
                    None => {}
                },
            )?;
            if reached_older {
                break;
            }
            end = start;
            step = step.saturating_mul(2);
        }
        Ok(emitted)
    }
}

/// The changelog key of a tenant's user: `<businessId>/<uniqueId>`.
pub fn changelog_key(tenant: i64, user: &str) -> String {
    format!("{tenant}/{user}")
}

pub fn parse_changelog_key(key: &[u8]) -> Option<(i64, &str)> {
    let text = std::str::from_utf8(key).ok()?;
    let (tenant, user) = text.split_once('/')?;
    Some((tenant.parse().ok()?, user))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changelog_keys_round_trip_even_when_the_user_id_has_slashes() {
        let key = changelog_key(42, "user/with/slashes");
        assert_eq!(
            parse_changelog_key(key.as_bytes()),
            Some((42, "user/with/slashes"))
        );
        assert_eq!(parse_changelog_key(b"not-a-number/x"), None);
        assert_eq!(parse_changelog_key(b"noslash"), None);
    }
}
