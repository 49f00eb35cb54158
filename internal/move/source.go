package move

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/narad-io/narad/internal/refusal"
	"github.com/narad-io/narad/internal/storage"
)

// Source serves the source's side of copy sessions from this node, over
// node RPC (its methods are the move half of rpc.Handler): it freezes a
// partition for a session and thaws it only with the leader's word, lists
// the partition directory and serves its files. Refusals are typed
// (package refusal); node RPC, the edge, gives each its status and code.
type Source struct {
	self    string
	meta    Meta
	data    Partitions
	freezes *Freezes
}

// NewSource serves copies of this node's partitions, freezing them in
// freezes (the table the broker admits commits through). It loads the
// freezes written down in partition directories, so it must be built
// before the node takes commits. A directory it cannot list or a marker
// it cannot check fails it: a freeze missed would let a stale copy take
// commits that a later shed deletes.
func NewSource(self string, ms Meta, data Partitions, freezes *Freezes) (*Source, error) {
	s := &Source{self: self, meta: ms, data: data, freezes: freezes}
	dirs, err := data.PartitionDirs()
	if err != nil {
		return nil, fmt.Errorf("move: listing partition directories for their freezes: %w", err)
	}
	for topic, parts := range dirs {
		for _, p := range parts {
			if dir, err := data.Dir(topic, p); err == nil {
				if err := freezes.load(topic, p, dir); err != nil {
					return nil, err
				}
			}
		}
	}
	return s, nil
}

func (s *Source) owned(topic string, p int) bool {
	owner, ok := s.meta.Owner(topic, p)
	return ok && owner == s.self
}

func notOwned(topic string, p int) error {
	return refusal.New(refusal.ErrNotOwner, time.Second, "partition %d of %q is not owned by this node", p, topic)
}

// MoveFreeze refuses commits into topic/p for at least ttl on behalf of
// holder (a session); calling it again renews. It answers the high
// watermark, fixed while the freeze holds; the consumer frontier is
// written first, so the copy carries it. ttl 0 thaws holder's freeze —
// a session that gave up before its flip — only if the leader confirms
// this node still owns the partition: after a flip the old copy stays
// frozen whatever anyone asks.
func (s *Source) MoveFreeze(ctx context.Context, topic string, p int, ttl time.Duration, holder string) (uint64, error) {
	if ttl <= 0 {
		return 0, s.thaw(ctx, topic, p, holder)
	}
	if !s.owned(topic, p) {
		return 0, notOwned(topic, p)
	}
	dir, err := s.data.Dir(topic, p)
	if err != nil {
		return 0, err
	}
	if err := s.freezes.freeze(topic, p, dir, ttl, holder); err != nil {
		return 0, err
	}
	if err := s.data.PersistFrontier(topic, p); err != nil {
		return 0, err
	}
	l, err := s.data.Get(topic, p)
	if err != nil {
		return 0, err
	}
	return l.HWM(), nil
}

func (s *Source) thaw(ctx context.Context, topic string, p int, holder string) error {
	owner, _, err := s.meta.ConfirmOwner(ctx, topic, p)
	if err != nil {
		return refusal.New(refusal.ErrUnavailable, time.Second, "thaw %s/%d: %v", topic, p, err)
	}
	if owner != s.self {
		return refusal.New(refusal.ErrConflict, 0, "thaw %s/%d: %q owns it now; the freeze stays", topic, p, owner)
	}
	dir, err := s.data.Dir(topic, p)
	if err != nil {
		return err
	}
	_, err = s.freezes.thaw(topic, p, dir, holder)
	return err
}

// MoveFiles lists topic/p's directory for a copy (storage.Log.Files: the
// active segment up to its published bytes), without the freeze marker,
// and answers the high watermark.
func (s *Source) MoveFiles(_ context.Context, topic string, p int) ([]storage.PartitionFile, uint64, error) {
	if !s.owned(topic, p) {
		return nil, 0, notOwned(topic, p)
	}
	l, err := s.data.Get(topic, p) // opens (and creates) the directory if needed
	if err != nil {
		return nil, 0, err
	}
	files, err := l.Files()
	if err != nil {
		return nil, 0, err
	}
	out := files[:0]
	for _, f := range files {
		if f.Name != movingMarker { // this node's freeze, not the partition's data
			out = append(out, f)
		}
	}
	return out, l.HWM(), nil
}

// MoveRead reads up to n bytes at off of one file of topic/p's directory.
// name must be a plain file name: nothing a caller sends reaches outside
// the directory.
func (s *Source) MoveRead(_ context.Context, topic string, p int, name string, off, n int64) ([]byte, error) {
	if !storage.IsFileName(name) {
		return nil, refusal.New(refusal.ErrInvalid, 0, "move read: %q is not a file name", name)
	}
	if !s.owned(topic, p) {
		return nil, notOwned(topic, p)
	}
	dir, err := s.data.Dir(topic, p)
	if err != nil {
		return nil, err
	}
	b, err := storage.ReadFileAt(s.data.Options().FS, dir, name, off, n)
	if errors.Is(err, os.ErrNotExist) {
		return nil, refusal.New(refusal.ErrNotFound, 0, "move read: %s/%d has no file %q", topic, p, name)
	}
	return b, err
}
