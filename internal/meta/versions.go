package meta

import (
	"encoding/binary"

	bolt "go.etcd.io/bbolt"
)

// Versions holds each domain's version: the Raft index of the last command
// that changed the domain (0: never changed). Because Raft indexes only grow,
// a version moving means "something in this domain changed", and the maximum
// over domains moves whenever any of them does.
type Versions struct {
	Topics uint64 `json:"topics"`
	// Assignments moves whenever a topic's placement list changes: created,
	// grown, re-placed or removed with its topic.
	Assignments uint64 `json:"assignments"`
	Schemas     uint64 `json:"schemas"`
	Users       uint64 `json:"users"`
	// Members moves on changes that affect routing: a member added, its
	// addresses, its alive/dead state.
	Members uint64 `json:"members"`
	// Heartbeats moves on member changes that do not affect routing:
	// heartbeat timestamps and drain flags. LatestDomain ignores it.
	Heartbeats uint64 `json:"heartbeats"`
}

// LatestDomain is the maximum over topics, assignments, schemas, users and
// routing members — what the fan-out reconciler compares to skip an idle
// tick. Heartbeats and drain flags do not count.
func (v Versions) LatestDomain() uint64 {
	return max(v.Topics, v.Assignments, v.Schemas, v.Users, v.Members)
}

// domain names a version counter.
type domain uint8

const (
	domTopics domain = iota
	domAssignments
	domSchemas
	domUsers
	domMembers
	domHeartbeats
	numDomains
)

// versionKeys are the counters' keys in the meta bucket, by domain.
var versionKeys = [numDomains][]byte{
	domTopics:      []byte("version.topics"),
	domAssignments: []byte("version.assignments"),
	domSchemas:     []byte("version.schemas"),
	domUsers:       []byte("version.users"),
	domMembers:     []byte("version.members"),
	domHeartbeats:  []byte("version.heartbeats"),
}

func (v *Versions) field(d domain) *uint64 {
	switch d {
	case domTopics:
		return &v.Topics
	case domAssignments:
		return &v.Assignments
	case domSchemas:
		return &v.Schemas
	case domUsers:
		return &v.Users
	case domMembers:
		return &v.Members
	case domHeartbeats:
		return &v.Heartbeats
	}
	panic("meta: unknown domain")
}

// loadVersions reads the counters; absent keys read as 0.
func loadVersions(tx *bolt.Tx) Versions {
	var v Versions
	b := tx.Bucket(bucketMeta)
	for d := domain(0); d < numDomains; d++ {
		*v.field(d) = getUint64(b, versionKeys[d])
	}
	return v
}

// storeVersions writes the counters that differ from old, in the caller's
// transaction, so they commit atomically with the change they describe.
func storeVersions(tx *bolt.Tx, old, cur Versions) error {
	b := tx.Bucket(bucketMeta)
	for d := domain(0); d < numDomains; d++ {
		if *cur.field(d) != *old.field(d) {
			if err := putUint64(b, versionKeys[d], *cur.field(d)); err != nil {
				return err
			}
		}
	}
	return nil
}

func getUint64(b *bolt.Bucket, key []byte) uint64 {
	raw := b.Get(key)
	if len(raw) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(raw)
}

func putUint64(b *bolt.Bucket, key []byte, v uint64) error {
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], v)
	return b.Put(key, buf[:])
}
