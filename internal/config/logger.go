package config

import (
	"io"
	"log/slog"
	"os"
)

// NewLogger builds the process logger on standard error from cfg.Log.
func NewLogger(cfg Config) *slog.Logger {
	return NewLoggerTo(os.Stderr, cfg)
}

// NewLoggerTo is NewLogger writing to w, for tests and embedding.
//
// Every record has each key once (uniqueKeys: a component's logger carries
// component=<its name>, and a record from a library it wraps names its own
// component, which wins), and a duration is written as Go's duration
// string ("10s", "1.5ms"), never as a count of nanoseconds a reader must
// divide.
func NewLoggerTo(w io.Writer, cfg Config) *slog.Logger {
	opts := &slog.HandlerOptions{Level: parseLevel(cfg.Log.Level), ReplaceAttr: durationString}
	var h slog.Handler = slog.NewJSONHandler(w, opts)
	if cfg.Log.Format == "text" {
		h = slog.NewTextHandler(w, opts)
	}
	return slog.New(&uniqueKeys{inner: h})
}

// durationString writes time.Duration values as strings.
func durationString(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		return slog.String(a.Key, a.Value.Duration().String())
	}
	return a
}

// parseLevel maps the validated level names; anything else (a Config built
// in code without Validate) falls back to info rather than failing.
func parseLevel(level string) slog.Level {
	switch level {
	case "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}
