package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/narad-io/narad/client"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// app is everything a command may touch outside its arguments. Tests build
// one with buffers and a fake environment, so no test depends on the
// machine running it.
type app struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	// tty is true when stdout and stderr are both terminals: only then is
	// progress shown (on stderr), so that neither piped output nor a
	// redirected stderr (a log file) collects progress lines.
	tty bool
	// stdinTTY is true when stdin is a terminal: a password is then
	// prompted for rather than silently waited for.
	stdinTTY  bool
	lookupEnv func(string) (string, bool)
	home      func() (string, error)
	now       func() time.Time // the clock, for "2s ago"

	// Global client flags, as typed; see target.go for how they resolve.
	server, user, password string
	contextName            string         // --context: a saved context by name
	caFile                 string         // --ca-file
	retryFor               *time.Duration // --retry-for, when typed
	// argvPasswordWarned: the --password warning (secret.go) is said once.
	argvPasswordWarned bool
}

func main() {
	os.Exit(newApp(os.Stdin, os.Stdout, os.Stderr).run(context.Background(), os.Args[1:]))
}

// newApp is the app of a process with these standard files.
func newApp(stdin, stdout, stderr *os.File) *app {
	return &app{
		stdin:     stdin,
		stdout:    stdout,
		stderr:    stderr,
		tty:       isTerminal(stdout) && isTerminal(stderr),
		stdinTTY:  isTerminal(stdin),
		lookupEnv: os.LookupEnv,
		home:      os.UserHomeDir,
		now:       time.Now,
	}
}

// run executes one command line and returns the exit code (exitCode).
// Every error is printed once, as "narad: <message>"; a command stopped by
// a signal prints nothing more.
func (a *app) run(ctx context.Context, args []string) int {
	root := a.rootCmd()
	root.SetArgs(args)
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	err := root.ExecuteContext(ctx)
	code := exitCode(err)
	var sigErr *signalError
	// A command stopped by a signal says nothing more: what it printed
	// stands (bench has printed its partial report).
	if err != nil && !errors.As(err, &sigErr) && !errors.Is(err, errBenchInterrupted) {
		fmt.Fprintf(a.stderr, "narad: %v\n", a.explain(err))
	}
	return code
}

// explain turns "could not connect" into advice: it is the most common
// first error and the raw one names neither a cause nor a fix.
func (a *app) explain(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		// Resolution succeeded once already, or nothing would have dialled.
		t, _ := a.resolveTarget()
		waited := ""
		var re *client.RetryError
		if errors.As(err, &re) {
			waited = fmt.Sprintf(" (waited %s; --retry-for to wait longer)", formatMs(re.Elapsed.Round(100*time.Millisecond).Milliseconds()))
		}
		return fmt.Errorf("cannot reach a broker at %s: %v%s\n(start one with \"narad server start --dev\", or point --server, NARAD_ADDR or a context at one)",
			t.server, op.Err, waited)
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
chosen with "narad ctx select"), else http://127.0.0.1:7942 without auth.
A node that is starting or briefly unavailable is waited for, up to
--retry-for (NARAD_RETRY_FOR, default 30s), with one line on stderr.

Every command that prints takes -o table|wide|json (--json is -o json);
"narad completion bash|zsh|fish" prints a shell completion script that
completes topics, children, users and contexts.

` + exitCodesHelp,
		SilenceErrors: true, // run prints errors itself, in one format
		SilenceUsage:  true, // a failed request is not a usage mistake
		Version:       buildVersion().Version,
	}
	root.SetVersionTemplate(versionLine() + "\n")
	root.AddCommand(
		a.serveCmd(),
		a.serverCmd(),
		a.clientFlags(a.topicCmd()),
		a.clientFlags(a.dlqCmd()),
		a.clientFlags(a.pubCmd()),
		a.clientFlags(a.subCmd()),
		a.clientFlags(a.replayCmd()),
		a.clientFlags(a.offsetsCmd()),
		a.clientFlags(a.peekCmd()),
		a.clientFlags(withTopicCompletion(a.benchCmd(), a)),
		a.clientFlags(a.userCmd()),
		a.clientFlags(a.clusterCmd()),
		a.ctxCmd(),
		a.versionCmd(),
	)
	return root
}

// withTopicCompletion completes cmd's first argument with topic names
// (for a command built in a file that does not set it).
func withTopicCompletion(cmd *cobra.Command, a *app) *cobra.Command {
	if cmd.ValidArgsFunction == nil {
		cmd.ValidArgsFunction = a.completeTopics
	}
	return cmd
}

// isTerminal reports whether f is a terminal. Being a character device
// is not enough: /dev/null is one, and "narad topic purge X </dev/null"
// must not be taken for a person at a keyboard. term.IsTerminal asks the
// terminal driver (an ioctl), which only a terminal answers.
func isTerminal(f *os.File) bool {
	return term.IsTerminal(int(f.Fd()))
}
