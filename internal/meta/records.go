package meta

import (
	"encoding/binary"
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Layout of fsm.db. One bucket per domain; schemas is created now (empty)
// so that a registry filling it adds commands, not a migration.
//
//	topics       name → 8-byte big-endian version ‖ Topic JSON
//	assignments  topic name → []Assignment JSON, index = partition
//	members      member id → Member JSON
//	users        user name → User JSON with its version and ID (no "id": LegacyUserID)
//	schemas      reserved
//	meta         applied_index, format, version.<domain> → uint64 big-endian
var (
	bucketTopics      = []byte("topics")
	bucketAssignments = []byte("assignments")
	bucketMembers     = []byte("members")
	bucketUsers       = []byte("users")
	bucketSchemas     = []byte("schemas")
	bucketMeta        = []byte("meta")

	allBuckets = [][]byte{bucketTopics, bucketAssignments, bucketMembers,
		bucketUsers, bucketSchemas, bucketMeta}

	keyAppliedIndex = []byte("applied_index")
	keyFormat       = []byte("format")
)

// layoutFormat is written once into a fresh database; a later layout change
// bumps it and migrates.
const layoutFormat = 1

// ensureBuckets creates missing buckets, which also upgrades a database
// restored from a snapshot taken before a bucket existed.
func ensureBuckets(tx *bolt.Tx) error {
	for _, name := range allBuckets {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return fmt.Errorf("create bucket %s: %w", name, err)
		}
	}
	m := tx.Bucket(bucketMeta)
	if m.Get(keyFormat) == nil {
		return putUint64(m, keyFormat, layoutFormat)
	}
	return nil
}

func appliedIndex(tx *bolt.Tx) uint64 { return getUint64(tx.Bucket(bucketMeta), keyAppliedIndex) }

func decodeTopic(name, raw []byte) (Topic, error) {
	if len(raw) < 8 {
		return Topic{}, fmt.Errorf("topic %q: record of %d bytes", name, len(raw))
	}
	var t Topic
	if err := json.Unmarshal(raw[8:], &t); err != nil {
		return Topic{}, fmt.Errorf("topic %q: %w", name, err)
	}
	t.Version = binary.BigEndian.Uint64(raw[:8])
	return t, nil
}

func encodeTopic(t Topic) ([]byte, error) {
	js, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 8, 8+len(js))
	binary.BigEndian.PutUint64(buf, t.Version)
	return append(buf, js...), nil
}

// readTopic reads one topic straight from the database (no cache).
func readTopic(tx *bolt.Tx, name string) (Topic, bool, error) {
	raw := tx.Bucket(bucketTopics).Get([]byte(name))
	if raw == nil {
		return Topic{}, false, nil
	}
	t, err := decodeTopic([]byte(name), raw)
	return t, err == nil, err
}

func readAssignments(tx *bolt.Tx, topic string) ([]Assignment, error) {
	raw := tx.Bucket(bucketAssignments).Get([]byte(topic))
	if raw == nil {
		return nil, nil
	}
	var as []Assignment
	if err := json.Unmarshal(raw, &as); err != nil {
		return nil, fmt.Errorf("assignments of %q: %w", topic, err)
	}
	return as, nil
}

func readMember(tx *bolt.Tx, id string) (Member, bool, error) {
	raw := tx.Bucket(bucketMembers).Get([]byte(id))
	if raw == nil {
		return Member{}, false, nil
	}
	var m Member
	if err := json.Unmarshal(raw, &m); err != nil {
		return Member{}, false, fmt.Errorf("member %q: %w", id, err)
	}
	return m, true, nil
}

// applyTx is the write side of one command: the bbolt transaction, the
// command's Raft index, and the versions as the command leaves them. A
// handler reads and writes through it and bumps the domains it changed.
type applyTx struct {
	tx    *bolt.Tx
	index uint64
	v     Versions
	dirty bool
	// touched names the topics whose record or assignments the command
	// wrote: the topic cache re-reads only those (cache.go).
	touched map[string]bool
}

func (a *applyTx) touch(topic string) {
	if a.touched == nil {
		a.touched = map[string]bool{}
	}
	a.touched[topic] = true
}

func (a *applyTx) bump(d domain) {
	*a.v.field(d) = a.index
	a.dirty = true
}

func (a *applyTx) topic(name string) (Topic, bool, error) { return readTopic(a.tx, name) }

// putTopic stamps the record with this command's index and stores it.
func (a *applyTx) putTopic(t Topic) error {
	t.Version = a.index
	raw, err := encodeTopic(t)
	if err != nil {
		return err
	}
	a.dirty = true
	a.touch(t.Name)
	return a.tx.Bucket(bucketTopics).Put([]byte(t.Name), raw)
}

func (a *applyTx) deleteTopic(name string) error {
	a.dirty = true
	a.touch(name)
	return a.tx.Bucket(bucketTopics).Delete([]byte(name))
}

func (a *applyTx) assignments(topic string) ([]Assignment, error) {
	return readAssignments(a.tx, topic)
}

func (a *applyTx) putAssignments(topic string, as []Assignment) error {
	raw, err := json.Marshal(as)
	if err != nil {
		return err
	}
	a.dirty = true
	a.touch(topic)
	return a.tx.Bucket(bucketAssignments).Put([]byte(topic), raw)
}

func (a *applyTx) deleteAssignments(topic string) error {
	a.dirty = true
	a.touch(topic)
	return a.tx.Bucket(bucketAssignments).Delete([]byte(topic))
}

func (a *applyTx) member(id string) (Member, bool, error) { return readMember(a.tx, id) }

func (a *applyTx) putMember(m Member) error {
	raw, err := json.Marshal(m)
	if err != nil {
		return err
	}
	a.dirty = true
	return a.tx.Bucket(bucketMembers).Put([]byte(m.ID), raw)
}
