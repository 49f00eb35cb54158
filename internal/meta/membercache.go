package meta

import (
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// memberCache is every member record decoded at one pair of versions
// (Members, Heartbeats): every change to a member record moves one of the
// two, so the pair names the bucket's content exactly. Produce dispatch
// asks for a partition owner's liveness and node-RPC address once per
// destination per cycle; a bbolt read transaction plus a JSON decode each
// time was 5% of a cluster node's CPU under single-record produce load.
// The cache is never modified: a change makes it stale and the next
// reader builds a fresh one (heartbeats: every few seconds).
type memberCache struct {
	vMem, vHb uint64
	byID      map[string]Member
}

// members returns the member cache for the current versions, building it
// on first use after a change. A cache read at newer versions than the
// state published so far (a commit not yet published) is answered from
// once and replaced by the next reader.
func (f *fsm) members() (*memberCache, error) {
	v := f.state.Load().v
	if c := f.memberCache.Load(); c != nil && c.vMem == v.Members && c.vHb == v.Heartbeats {
		return c, nil
	}
	c := &memberCache{byID: map[string]Member{}}
	err := f.view(func(tx *bolt.Tx) error {
		tv := loadVersions(tx)
		c.vMem, c.vHb = tv.Members, tv.Heartbeats
		return tx.Bucket(bucketMembers).ForEach(func(k, raw []byte) error {
			var m Member
			if err := json.Unmarshal(raw, &m); err != nil {
				return fmt.Errorf("member %q: %w", k, err)
			}
			c.byID[string(k)] = m
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	f.memberCache.Store(c)
	return c, nil
}
