package meta

import (
	"slices"
	"sort"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// topicCache is a decoded, immutable copy of the topics and assignments
// domains at one pair of versions. It is never modified: a change publishes
// a new fsmState without it, and the next reader builds a fresh one. The
// hot path (Topic, Owner) is therefore one atomic load plus a map lookup
// while nothing changes.
//
// Records handed out share their slices and maps (Schema, Children,
// AttachOffsets, Tags, AWSAttributes) with the cache: callers must treat
// them as read-only.
type topicCache struct {
	sorted []Topic        // by name
	index  map[string]int // name → position in sorted
	assign [][]Assignment // parallel to sorted; index = partition
	vTop   uint64         // versions this cache was built at
	vAsg   uint64
}

var emptyCache = &topicCache{index: map[string]int{}}

// cache returns the topic cache for the current state, building it on first
// use after a change.
func (f *fsm) cache() *topicCache {
	st := f.state.Load()
	if c := st.cache; c != nil {
		return c
	}
	c, err := f.buildCache()
	if err != nil {
		// A decode failure means a damaged fsm.db; answer from nothing
		// rather than half a state, and do not install it.
		f.log.Error("metastore: build topic cache", "err", err)
		return emptyCache
	}
	// Install only if the state we started from is still current and the
	// cache was read at its versions. Apply commits before it publishes a
	// new state, so a cache read at older versions than st cannot occur; a
	// newer one (a commit not yet published) is used once but not kept.
	if c.vTop == st.v.Topics && c.vAsg == st.v.Assignments {
		ns := *st
		ns.cache = c
		f.state.CompareAndSwap(st, &ns)
	}
	return c
}

// cacheChange is one topic as a command left it (exists false: deleted).
type cacheChange struct {
	name   string
	exists bool
	t      Topic
	as     []Assignment
}

// readChanges reads the touched topics inside the applying transaction.
func readChanges(tx *bolt.Tx, touched map[string]bool) ([]cacheChange, error) {
	out := make([]cacheChange, 0, len(touched))
	for name := range touched {
		t, ok, err := readTopic(tx, name)
		if err != nil {
			return nil, err
		}
		c := cacheChange{name: name, exists: ok, t: t}
		if ok {
			if c.as, err = readAssignments(tx, name); err != nil {
				return nil, err
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// patch derives the cache after a change from the one before it: only the
// topics the command touched were re-read; every other record is shared.
// (Rebuilding meant decoding every topic on every change, which made
// creating n topics O(n²) decodes: 5,000 topics took minutes.)
func (c *topicCache) patch(changes []cacheChange, vTop, vAsg uint64) *topicCache {
	n := &topicCache{sorted: slices.Clone(c.sorted), assign: slices.Clone(c.assign), vTop: vTop, vAsg: vAsg}
	for _, ch := range changes {
		i, found := slices.BinarySearchFunc(n.sorted, ch.name, func(t Topic, name string) int {
			return strings.Compare(t.Name, name)
		})
		switch {
		case ch.exists && found:
			n.sorted[i], n.assign[i] = ch.t, ch.as
		case ch.exists:
			n.sorted = slices.Insert(n.sorted, i, ch.t)
			n.assign = slices.Insert(n.assign, i, ch.as)
		case found:
			n.sorted = slices.Delete(n.sorted, i, i+1)
			n.assign = slices.Delete(n.assign, i, i+1)
		}
	}
	n.index = make(map[string]int, len(n.sorted))
	for i, t := range n.sorted {
		n.index[t.Name] = i
	}
	return n
}

func (f *fsm) buildCache() (*topicCache, error) {
	c := &topicCache{}
	err := f.view(func(tx *bolt.Tx) error {
		v := loadVersions(tx)
		c.vTop, c.vAsg = v.Topics, v.Assignments
		b := tx.Bucket(bucketTopics)
		c.index = make(map[string]int)
		// bbolt iterates keys in byte order, which is the sort order.
		return b.ForEach(func(k, raw []byte) error {
			t, err := decodeTopic(k, raw)
			if err != nil {
				return err
			}
			as, err := readAssignments(tx, t.Name)
			if err != nil {
				return err
			}
			c.index[t.Name] = len(c.sorted)
			c.sorted = append(c.sorted, t)
			c.assign = append(c.assign, as)
			return nil
		})
	})
	return c, err
}

// Topic returns the named topic from the version-keyed cache. Slices in the
// record are shared and must not be modified.
func (s *Store) Topic(name string) (Topic, bool) {
	c := s.fsm.cache()
	i, ok := c.index[name]
	if !ok {
		return Topic{}, false
	}
	return c.sorted[i], true
}

// CurrentIncarnation returns the incarnation of the named topic this
// replica holds as current (0 for a topic created before incarnations);
// false when the topic is absent. It is Topic narrowed to what a caller
// below meta (dispatch's discarder) may know.
func (s *Store) CurrentIncarnation(name string) (uint64, bool) {
	t, ok := s.Topic(name)
	return t.Incarnation, ok
}

// Topics returns every topic sorted by name. The slice is the caller's; the
// records' own slices are shared, as with Topic.
func (s *Store) Topics() []Topic {
	return slices.Clone(s.fsm.cache().sorted)
}

// ListTopics returns up to limit topics whose names sort after `after`
// (keyset pagination), and the token for the next page: the last name
// returned, or "" when no topic follows. limit ≤ 0 means 100.
func (s *Store) ListTopics(after string, limit int) (page []Topic, next string) {
	if limit <= 0 {
		limit = 100
	}
	all := s.fsm.cache().sorted
	i := sort.Search(len(all), func(i int) bool { return all[i].Name > after })
	for ; i < len(all) && len(page) < limit; i++ {
		if all[i].Remote == nil { // a remote child's link record is not a topic
			page = append(page, all[i])
		}
	}
	if i < len(all) && len(page) > 0 {
		next = page[len(page)-1].Name
	}
	return page, next
}

// Assignments returns the topic's placements, index = partition; an entry
// with an empty Owner is not placed yet. Nil if the topic does not exist.
func (s *Store) Assignments(topic string) []Assignment {
	c := s.fsm.cache()
	i, ok := c.index[topic]
	if !ok {
		return nil
	}
	return slices.Clone(c.assign[i])
}

// Placement returns one partition's placement without copying the
// topic's whole list (the replicated commit path reads it per write);
// false if the topic or partition does not exist. Its slices are the
// cache's: read them, never change them.
func (s *Store) Placement(topic string, partition int) (Assignment, bool) {
	c := s.fsm.cache()
	i, ok := c.index[topic]
	if !ok || partition < 0 || partition >= len(c.assign[i]) {
		return Assignment{}, false
	}
	return c.assign[i][partition], true
}

// Owner returns the node serving topic/partition; false if the topic or
// partition does not exist or the partition is not placed yet.
func (s *Store) Owner(topic string, partition int) (string, bool) {
	c := s.fsm.cache()
	i, ok := c.index[topic]
	if !ok || partition < 0 || partition >= len(c.assign[i]) {
		return "", false
	}
	o := c.assign[i][partition].Owner
	return o, o != ""
}
