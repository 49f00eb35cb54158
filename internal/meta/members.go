package meta

import (
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// applyUpsertMember stores a member record (keeping a recorded DiskID). Which counter moves depends on
// what changed: addresses and alive/dead route traffic (Members, counted in
// LatestDomainVersion); a heartbeat timestamp or the drain flag alone does
// not (Heartbeats), so heartbeats every 5 s do not wake the fan-out
// reconciler's full pass.
func applyUpsertMember(a *applyTx, payload json.RawMessage) error {
	var c UpsertMemberCmd
	if err := decodePayload(OpUpsertMember, payload, &c); err != nil {
		return err
	}
	m := c.Member
	if m.ID == "" {
		return invalidf("member without an id")
	}
	switch m.State {
	case "":
		m.State = MemberAlive
	case MemberAlive, MemberDead:
	default:
		return fmt.Errorf("meta: member %q: %w: state %q", m.ID, ErrInvalid, m.State)
	}
	old, existed, err := a.member(m.ID)
	if err != nil {
		return err
	}
	if existed && old.DiskID != "" {
		// A recorded disk changes only by ReplaceDisk, which also takes
		// the node out of every in-sync set: an upsert (a heartbeat, a
		// dead marking) can neither change nor clear it.
		m.DiskID = old.DiskID
	}
	if existed && old == m {
		return nil
	}
	if err := a.putMember(m); err != nil {
		return err
	}
	if !existed || !old.routingEqual(m) {
		a.bump(domMembers)
	} else {
		a.bump(domHeartbeats)
	}
	return nil
}

// Member returns the member record with the given ID, from the
// version-keyed member cache (membercache.go).
func (s *Store) Member(id string) (Member, bool) {
	c, err := s.fsm.members()
	if err != nil {
		s.log.Error("metastore: read member", "id", id, "err", err)
		return Member{}, false
	}
	m, ok := c.byID[id]
	return m, ok
}

// Members returns every member record, sorted by ID.
func (s *Store) Members() []Member {
	var out []Member
	err := s.fsm.view(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMembers).ForEach(func(k, raw []byte) error {
			var m Member
			if err := json.Unmarshal(raw, &m); err != nil {
				return fmt.Errorf("member %q: %w", k, err)
			}
			out = append(out, m)
			return nil
		})
	})
	if err != nil {
		s.log.Error("metastore: read members", "err", err)
		return nil
	}
	return out
}
