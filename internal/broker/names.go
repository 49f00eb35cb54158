package broker

import "github.com/narad-io/narad/internal/topic"

// The name and key rules live in topic, where the fan-out engine and the
// HTTP layer share them; these are the broker's names for them.

// MaxTopicNameLen is the longest topic name (docs/http-api.md).
const MaxTopicNameLen = topic.MaxNameLen

// ValidateTopicName is topic.ValidateName.
func ValidateTopicName(name string) error { return topic.ValidateName(name) }

// KeyPartition is topic.KeyPartition: produce and fan-out share it.
func KeyPartition(key []byte, partitions int) int { return topic.KeyPartition(key, partitions) }
