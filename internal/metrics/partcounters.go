package metrics

import (
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// PartitionCounters is a counter vector labelled (topic, partition) whose
// children are bound once and kept: every produce and consume counts
// records by partition, and WithLabelValues hashes both labels, formats
// the partition number and takes the vector's lock on every call.
//
// Bound: one entry per (topic, partition) that has counted something on
// this node, and a topic's entries go with its series (ForgetTopic and
// the PruneTopics sweep call DeletePartialMatch, which drops them too), so
// the cache never outgrows the partitions that exist. A child dropped from
// the vector is never counted again through the cache: a topic deleted
// and created again binds new children, and starts from zero.
type PartitionCounters struct {
	*prometheus.CounterVec

	mu    sync.RWMutex
	bound map[partitionKey]prometheus.Counter
}

type partitionKey struct {
	topic     string
	partition int
}

func newPartitionCounters(v *prometheus.CounterVec) *PartitionCounters {
	return &PartitionCounters{CounterVec: v, bound: make(map[partitionKey]prometheus.Counter)}
}

// Add adds n to the series of topic's partition p.
func (c *PartitionCounters) Add(topic string, p int, n float64) {
	k := partitionKey{topic, p}
	c.mu.RLock()
	ctr := c.bound[k]
	c.mu.RUnlock()
	if ctr == nil {
		c.mu.Lock()
		if ctr = c.bound[k]; ctr == nil {
			// Bound under the write lock, so a DeletePartialMatch cannot
			// fall between binding and caching and leave a detached child
			// in the cache.
			ctr = c.WithLabelValues(topic, strconv.Itoa(p))
			c.bound[k] = ctr
		}
		c.mu.Unlock()
	}
	ctr.Add(n)
}

// DeletePartialMatch deletes the matching series, as the vector's own
// does, and forgets their bound children.
func (c *PartitionCounters) DeletePartialMatch(labels prometheus.Labels) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.bound {
		if matches(k, labels) {
			delete(c.bound, k)
		}
	}
	return c.CounterVec.DeletePartialMatch(labels)
}

func matches(k partitionKey, labels prometheus.Labels) bool {
	for name, v := range labels {
		switch name {
		case "topic":
			if k.topic != v {
				return false
			}
		case "partition":
			if strconv.Itoa(k.partition) != v {
				return false
			}
		default:
			return false // a label these series do not have: DeletePartialMatch matches none
		}
	}
	return true
}
