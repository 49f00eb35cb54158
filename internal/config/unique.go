package config

import (
	"context"
	"log/slog"
)

// uniqueKeys is a slog handler that writes each top-level key of a record
// once, the innermost value winning: a record's own attribute over its
// logger's, a later With over an earlier one, the last of a repeated key.
// slog's handlers write every attribute they are given, so
// log.With("component", "meta") handing its records to a library adapter
// that adds "component", "raft" would write the key twice, which JSON
// readers resolve differently (the first, the last, or an error).
//
// It keeps the attributes of With itself and hands the inner handler
// whole records. After WithGroup the keys are no longer top-level, and
// the rest goes to the inner handler as usual.
type uniqueKeys struct {
	inner slog.Handler
	attrs []slog.Attr // from With, each key once
}

func (h *uniqueKeys) Enabled(ctx context.Context, l slog.Level) bool { return h.inner.Enabled(ctx, l) }

func (h *uniqueKeys) WithAttrs(as []slog.Attr) slog.Handler {
	return &uniqueKeys{inner: h.inner, attrs: merge(h.attrs, as)}
}

func (h *uniqueKeys) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return h.inner.WithAttrs(h.attrs).WithGroup(name)
}

func (h *uniqueKeys) Handle(ctx context.Context, r slog.Record) error {
	own := make([]slog.Attr, 0, r.NumAttrs())
	r.Attrs(func(a slog.Attr) bool {
		own = append(own, a)
		return true
	})
	out := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	out.AddAttrs(merge(h.attrs, own)...)
	return h.inner.Handle(ctx, out)
}

// merge is base then more, a key of more replacing base's in place, a key
// repeated within more keeping its last value.
func merge(base, more []slog.Attr) []slog.Attr {
	out := make([]slog.Attr, 0, len(base)+len(more))
	at := make(map[string]int, len(base)+len(more))
	for _, list := range [][]slog.Attr{base, more} {
		for _, a := range list {
			if a.Key == "" && a.Value.Kind() == slog.KindGroup {
				out = append(out, a) // an inlined group: its keys are its own
				continue
			}
			if i, ok := at[a.Key]; ok {
				out[i] = a
				continue
			}
			at[a.Key] = len(out)
			out = append(out, a)
		}
	}
	return out
}
