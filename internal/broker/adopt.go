package broker

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/storage"
)

// AdoptOrphans re-registers, as topics owned by this node, the topic
// directories on disk that the metastore does not know: the operator's
// deliberate recovery from a lost metastore (recovery.orphan_data=adopt,
// package datadir). Each gets the partition count its directory shows and
// the default settings, no owner (so only admins may manage it), and
// every partition on this node; its records, consumer frontier and hwm
// are what the directory holds. Fan-out links and schemas are not on disk
// and are not recovered.
//
// It returns the adopted names; any topic it could not register (this
// node does not lead the metastore, a name that is no longer valid) is in
// the error, and the caller must then skip the orphan sweep so that data
// stays where it is.
func (a *admin) AdoptOrphans(ctx context.Context) ([]string, error) {
	dirs, err := a.parts.TopicDirs()
	if err != nil {
		return nil, err
	}
	var adopted []string
	var errs []error
	for _, name := range dirs {
		if _, ok := a.meta.Topic(name); ok {
			continue
		}
		n, err := partitionsOnDisk(filepath.Join(a.parts.Root(), name))
		if err != nil || n == 0 {
			errs = append(errs, fmt.Errorf("topic %q: no partition directories to adopt (%v)", name, err))
			continue
		}
		t, err := a.PrepareTopic(CreateTopicRequest{Name: name, Partitions: n}, "")
		if err != nil {
			errs = append(errs, fmt.Errorf("topic %q: %w", name, err))
			continue
		}
		as := make([]meta.Assignment, n)
		for p := range as {
			as[p] = meta.Assignment{Topic: name, Partition: p, Owner: a.cfg.NodeID}
		}
		if err := a.meta.CreateTopic(ctx, t, as, nil); err != nil {
			errs = append(errs, fmt.Errorf("topic %q: %w", name, err))
			continue
		}
		a.cfg.Logger.Warn("adopted a topic from its data on disk (recovery.orphan_data=adopt): default settings, no owner, every partition here",
			"topic", name, "partitions", n)
		adopted = append(adopted, name)
	}
	return adopted, errors.Join(errs...)
}

// partitionsOnDisk is one more than the highest pNNNNN directory under
// dir: a partition with no directory is simply empty.
func partitionsOnDisk(dir string) (int, error) {
	parts, err := storage.PartitionDirs(nil, dir)
	if err != nil || len(parts) == 0 {
		return 0, err
	}
	return parts[len(parts)-1] + 1, nil
}
