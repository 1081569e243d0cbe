#!/usr/bin/env bash
# Creates (or checks) the topics a Vigil consumer group needs, with rpk. Run by the one-shot
# `topics` service of deploy/docker-compose.yml; usable against any Kafka-compatible cluster:
#
#   RPK_BROKERS=broker:9092 PARTITIONS=12 bash deploy/redpanda/create-topics.sh
#
# (RPK_ADMIN_HOSTS=broker:9644 as well on Redpanda, to turn off automatic topic creation.)
#
# The rules it enforces (Vigil refuses to start if the first is broken):
#   - decisions, cases, dead-letter and changelog topics have exactly as many partitions as the
#     input topic: Vigil writes the outputs of input partition p to partition p of each of them;
#   - the changelog (per-user velocity state) and control (rule-pack and list changes) topics are
#     compacted;
#   - the control topic has one partition (one total order of changes for every instance).
# Safe to run again: existing topics are left alone and only checked. The partition count cannot
# be changed by re-running with another PARTITIONS; see deploy/README.md ("Running a cluster").
set -euo pipefail

PARTITIONS="${PARTITIONS:-6}"
REPLICAS="${REPLICAS:-1}"
# rpk reads RPK_BROKERS itself; exported so every call below uses it.
export RPK_BROKERS="${RPK_BROKERS:-redpanda:9092}"

INPUT="${TOPIC_INPUT:-vigil.transactions}"
DECISIONS="${TOPIC_DECISIONS:-vigil.decisions}"
CASES="${TOPIC_CASES:-vigil.cases}"
DEAD_LETTER="${TOPIC_DEAD_LETTER:-vigil.dead-letter}"
CHANGELOG="${TOPIC_CHANGELOG:-vigil.state}"
CONTROL="${TOPIC_CONTROL:-vigil.control}"

echo "brokers: $RPK_BROKERS; partitions: $PARTITIONS; replicas: $REPLICAS"
for attempt in $(seq 1 60); do
    if rpk cluster info >/dev/null 2>&1; then
        break
    fi
    if [ "$attempt" -eq 60 ]; then
        echo "brokers at $RPK_BROKERS do not answer" >&2
        exit 1
    fi
    sleep 2
done

# Redpanda in dev mode creates unknown topics on first use, with the default partition count: a
# typo in a topic setting would then produce to a new one-partition topic instead of failing.
# Needs Redpanda's admin API (RPK_ADMIN_HOSTS); not fatal elsewhere (Apache Kafka, managed
# clusters), where the broker setting auto.create.topics.enable is the operator's.
if rpk cluster config set auto_create_topics_enabled false >/dev/null 2>&1; then
    echo "auto_create_topics_enabled = false"
else
    echo "note: automatic topic creation left as it is (no Redpanda admin API at RPK_ADMIN_HOSTS)"
fi

# partitions NAME: the topic's partition count.
partitions() {
    rpk topic list | awk -v t="$1" '$1 == t { print $2 }'
}

# create NAME PARTITIONS [CONFIG...]: creates the topic unless it exists.
create() {
    local name="$1" count="$2"
    shift 2
    local args=()
    for config in "$@"; do
        args+=(-c "$config")
    done
    if [ -n "$(partitions "$name")" ]; then
        echo "exists: $name"
    else
        rpk topic create "$name" -p "$count" -r "$REPLICAS" "${args[@]}"
    fi
}

# cleanup_policy NAME: the topic's cleanup.policy.
cleanup_policy() {
    rpk topic describe "$1" -c | awk '$1 == "cleanup.policy" { print $2 }'
}

create "$INPUT" "$PARTITIONS" retention.ms=604800000
create "$DECISIONS" "$PARTITIONS"
create "$CASES" "$PARTITIONS"
create "$DEAD_LETTER" "$PARTITIONS" retention.ms=2592000000
create "$CHANGELOG" "$PARTITIONS" cleanup.policy=compact
create "$CONTROL" 1 cleanup.policy=compact

# Check what exists, whoever created it: the input topic's count is the reference.
failed=0
input_partitions="$(partitions "$INPUT")"
for topic in "$DECISIONS" "$CASES" "$DEAD_LETTER" "$CHANGELOG"; do
    count="$(partitions "$topic")"
    if [ "$count" != "$input_partitions" ]; then
        echo "$topic has $count partitions, $INPUT has $input_partitions: they must be equal" >&2
        failed=1
    fi
done
count="$(partitions "$CONTROL")"
if [ "$count" != "1" ]; then
    echo "$CONTROL has $count partitions: it must have 1" >&2
    failed=1
fi
for topic in "$CHANGELOG" "$CONTROL"; do
    policy="$(cleanup_policy "$topic")"
    if [ "$policy" != "compact" ]; then
        echo "$topic has cleanup.policy=$policy: it must be compact" >&2
        failed=1
    fi
done
if [ "$failed" -ne 0 ]; then
    exit 1
fi
rpk topic list
echo "topics ready"
