package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
)

// app is everything a command may touch outside its arguments. Tests build
// one with buffers and a fake environment, so no test depends on the
// machine running it.
type app struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	// tty is true when stdout is a terminal: only then is progress shown,
	// so piped output stays clean.
	tty bool
	// stdinTTY is true when stdin is a terminal: a password is then
	// prompted for rather than silently waited for.
	stdinTTY  bool
	lookupEnv func(string) (string, bool)
	home      func() (string, error)
	now       func() time.Time // the clock, for "2s ago"

	// Global client flags, as typed; see target.go for how they resolve.
	server, user, password string
	contextName            string // --context: a saved context by name
	caFile                 string // --ca-file
}

func main() {
	a := &app{
		stdin:     os.Stdin,
		stdout:    os.Stdout,
		stderr:    os.Stderr,
		tty:       isTerminal(os.Stdout),
		stdinTTY:  isTerminal(os.Stdin),
		lookupEnv: os.LookupEnv,
		home:      os.UserHomeDir,
		now:       time.Now,
	}
	os.Exit(a.run(context.Background(), os.Args[1:]))
}

// run executes one command line and returns the exit code. Every error is
// printed once, as "narad: <message>", and exits 1.
func (a *app) run(ctx context.Context, args []string) int {
	root := a.rootCmd()
	root.SetArgs(args)
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	if err := root.ExecuteContext(ctx); err != nil {
		if errors.Is(err, errBenchInterrupted) {
			return exitInterrupted // its partial report is printed already
		}
		fmt.Fprintf(a.stderr, "narad: %v\n", a.explain(err))
		return 1
	}
	return 0
}

// explain turns "could not connect" into advice: it is the most common
// first error and the raw one names neither a cause nor a fix.
func (a *app) explain(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		// Resolution succeeded once already, or nothing would have dialled.
		t, _ := a.resolveTarget()
		return fmt.Errorf("cannot reach a broker at %s: %v\n(start one with \"narad server start --dev\", or point --server, NARAD_ADDR or a context at one)",
			t.server, op.Err)
	}
	return err
}

func (a *app) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "narad",
		Short: "Narad: a queue-first message broker",
		Long: `Narad is a queue-first message broker.

Run a broker with "narad server start --dev" (one machine, no auth) or
"narad serve" (production; configured by flags, NARAD_* variables and an
optional --config file). Everything else talks to a broker over HTTP.
Each of server, user and password comes from its flag, else NARAD_ADDR,
NARAD_USER, NARAD_PASS, else the saved context (--context, or the one
chosen with "narad ctx select"), else http://127.0.0.1:7942 without auth.`,
		SilenceErrors: true, // run prints errors itself, in one format
		SilenceUsage:  true, // a failed request is not a usage mistake
		Version:       version,
	}
	root.SetVersionTemplate(versionLine() + "\n")
	pf := root.PersistentFlags()
	pf.StringVarP(&a.server, "server", "s", "", "broker URL (env NARAD_ADDR, default "+defaultServer+")")
	pf.StringVarP(&a.user, "user", "u", "", "user name (env NARAD_USER)")
	pf.StringVarP(&a.password, "password", "p", "", "password (env NARAD_PASS)")
	pf.StringVar(&a.contextName, "context", "", `saved context to use instead of the selected one (see "narad ctx")`)
	pf.StringVar(&a.caFile, "ca-file", "", "CA certificate (PEM) to verify an https:// broker with (env NARAD_CA_FILE; default: the system's roots)")

	root.AddCommand(
		a.serveCmd(),
		a.serverCmd(),
		a.topicCmd(),
		a.pubCmd(),
		a.subCmd(),
		a.replayCmd(),
		a.benchCmd(),
		a.userCmd(),
		a.clusterCmd(),
		a.ctxCmd(),
		a.versionCmd(),
	)
	return root
}

// withSignals returns a context cancelled by SIGINT or SIGTERM, so a broker
// shuts down gracefully and a long-running client command stops cleanly.
func withSignals(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}

// isTerminal reports whether f is a character device (a terminal) rather
// than a pipe or a file.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
