package meta

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"regexp"

	"github.com/hashicorp/go-hclog"
)

// newRaftLogger builds the hclog logger handed to hashicorp/raft, its
// transport and snapshot store. Raft logs every election and heartbeat miss
// at INFO/DEBUG; we keep WARN and above by default. Lines go to out if given,
// else into our slog logger at the matching level, so a node has one log.
func newRaftLogger(out io.Writer, level string, log *slog.Logger) hclog.Logger {
	lvl := hclog.LevelFromString(level)
	if lvl == hclog.NoLevel {
		lvl = hclog.Warn
	}
	opts := &hclog.LoggerOptions{Name: "raft", Level: lvl, Output: out}
	if out == nil {
		opts.Output = &slogWriter{log: log}
		opts.DisableTime = true // slog stamps its own time
	}
	return hclog.New(opts)
}

// slogWriter receives one formatted hclog entry per write. hclog calls
// LevelWrite when the output implements hclog.LevelWriter, which carries the
// entry's level.
type slogWriter struct {
	log *slog.Logger
}

func (w *slogWriter) Write(p []byte) (int, error) { return w.LevelWrite(hclog.Info, p) }

func (w *slogWriter) LevelWrite(level hclog.Level, p []byte) (int, error) {
	sl := slog.LevelInfo
	switch {
	case level >= hclog.Error:
		sl = slog.LevelError
	case level == hclog.Warn:
		sl = slog.LevelWarn
	case level <= hclog.Debug:
		sl = slog.LevelDebug
	}
	msg := levelTag.ReplaceAllString(string(bytes.TrimSpace(p)), "")
	if sl == slog.LevelWarn && firstElection.MatchString(msg) {
		sl = slog.LevelInfo
	}
	w.log.Log(context.Background(), sl, msg, "component", "raft")
	return len(p), nil
}

// levelTag is hclog's "[WARN]  " prefix: the record has the level already.
var levelTag = regexp.MustCompile(`^\[[A-Z]+\]\s+`)

// firstElection is Raft's warning that it starts an election with no
// leader ever seen (last-leader-id empty): the normal start of a single
// node, of a new cluster and of a restarted node, not a failure. The same
// line after a leader was known (a leader lost) stays a warning.
var firstElection = regexp.MustCompile(`heartbeat timeout reached, starting election.*last-leader-id=(""|)(\s|$)`)
