package broker

import (
	"context"

	"github.com/narad-io/narad/internal/hosted"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/refusal"
	"github.com/narad-io/narad/internal/storage"
)

// Window bounds of the topic field dedupe_window_ms.
const (
	minDedupeWindowMs = 1_000
	maxDedupeWindowMs = 86_400_000
)

// validDedupeWindow checks the topic field dedupe_window_ms.
func validDedupeWindow(v int64) error {
	if v != 0 && (v < minDedupeWindowMs || v > maxDedupeWindowMs) {
		return refusal.New(refusal.ErrInvalid, 0, "dedupe_window_ms must be 0 (off) or %d..%d, got %d", minDedupeWindowMs, maxDedupeWindowMs, v)
	}
	return nil
}

// dedupe commits recs into t's partition p through commit under the
// topic's dedupe window (hosted.Set.Dedupe), and counts the duplicates
// left out.
func (b *Broker) dedupe(ctx context.Context, t meta.Topic, p int, l *storage.Log, recs []storage.Record, commit hosted.CommitFunc) error {
	dups, err := b.parts.Dedupe(ctx, t.Name, p, t.DedupeWindowMs, b.cfg.Now().UnixMilli(), l, recs, commit)
	if dups > 0 {
		b.m.Deduplicated.WithLabelValues(t.Name).Add(float64(dups))
	}
	return err
}
