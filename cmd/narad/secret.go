package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"
)

// passwordFromStdinHelp is the shared --password-stdin flag text.
const passwordFromStdinHelp = "read the password from standard input without prompting (for scripts)"

// readSecret reads a password as one line of standard input. It is the only
// way a new password enters the CLI, so it never sits in shell history or
// a process listing the way a flag value would. On a terminal the user is
// asked first (on stderr, so stdout stays clean) unless quiet is set, and
// the typing is not echoed.
func (a *app) readSecret(prompt string, quiet bool) (string, error) {
	if f, ok := a.stdin.(*os.File); ok && a.stdinTTY && term.IsTerminal(int(f.Fd())) {
		if !quiet {
			fmt.Fprintf(a.stderr, "%s: ", prompt)
		}
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(a.stderr)
		if err != nil {
			return "", fmt.Errorf("reading the password from the terminal: %w", err)
		}
		if len(b) == 0 {
			return "", errors.New("the password is empty")
		}
		return string(b), nil
	}
	if a.stdinTTY && !quiet {
		fmt.Fprintf(a.stderr, "%s: ", prompt)
	}
	line, err := bufio.NewReader(a.stdin).ReadString('\n')
	if err != nil && (!errors.Is(err, io.EOF) || line == "") {
		if errors.Is(err, io.EOF) {
			return "", errors.New("no password on standard input (pipe one in, or type it)")
		}
		return "", fmt.Errorf("reading the password from standard input: %w", err)
	}
	// Only the line ending goes: spaces may be part of the password.
	pw := strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	if pw == "" {
		return "", errors.New("the password is empty")
	}
	return pw, nil
}
