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
func NewLoggerTo(w io.Writer, cfg Config) *slog.Logger {
	opts := &slog.HandlerOptions{Level: parseLevel(cfg.Log.Level)}
	if cfg.Log.Format == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
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
