package hosted

import "github.com/narad-io/narad/internal/storage"

// What a partition move asks of the hosted partitions (move.Partitions,
// with Dir, Get, Options and Forget): the directories held here, and the
// queue state written right before a copy is taken.

// PersistFrontier writes topic/p's consumer frontier and delivery counts
// now, if its queue is loaded: a copy taken after it carries both (the
// counts file is advisory: a failed write of it is logged, not returned).
func (s *Set) PersistFrontier(name string, p int) error {
	if l := s.Peek(name, p); l != nil {
		// Lazy records first, so the frontier is not held back to the
		// flushed high watermark (Queue.Persist) in the copy.
		if err := l.Flush(); err != nil {
			return err
		}
	}
	if q := s.PeekQueue(name, p); q != nil {
		if err := q.Persist(); err != nil {
			return err
		}
		q.PersistCounts(true)
	}
	return nil
}

// PartitionDirs lists the partition directories this node holds, by topic.
// A listing that fails is an error, not a shorter list: the move source
// loads the freezes written in these directories from it.
func (s *Set) PartitionDirs() (map[string][]int, error) {
	out := map[string][]int{}
	topics, err := s.TopicDirs()
	if err != nil {
		return nil, err
	}
	for _, t := range topics {
		td, err := s.TopicDir(t)
		if err != nil {
			continue // not a topic directory name
		}
		parts, err := storage.PartitionDirs(s.fs, td)
		if err != nil {
			return nil, err
		}
		if len(parts) > 0 {
			out[t] = parts
		}
	}
	return out, nil
}
