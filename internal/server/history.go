package server

import (
	"context"
	"time"

	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/history"
	"github.com/narad-io/narad/internal/meta"
)

// maxSampledTopics bounds the stats history's memory (a ring is under
// 4 KiB) and each tick's describes; topics past it, by name, get only the
// live sample and the ones their stats/history asks record.
const maxSampledTopics = 1000

// historySource is the stats history's reading of every topic: describe,
// which never opens a partition log (in a cluster it asks the owners, as
// any describe does).
func historySource(ms *meta.Store, b *broker.Broker) func(context.Context) []history.Reading {
	return func(ctx context.Context) []history.Reading {
		ts := ms.Topics()
		if len(ts) > maxSampledTopics {
			ts = ts[:maxSampledTopics]
		}
		out := make([]history.Reading, 0, len(ts))
		for _, t := range ts {
			if ctx.Err() != nil {
				break
			}
			v, err := b.DescribeTopic(t.Name)
			if err != nil {
				continue
			}
			out = append(out, history.ReadingOf(v, time.Now()))
		}
		return out
	}
}
