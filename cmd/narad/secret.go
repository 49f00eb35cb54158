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

// warnArgvPassword says once, on stderr, that a password typed as
// --password/-p is in the process's arguments, which every local user can
// read (ps, /proc) and the shell keeps in its history. The flag still
// works, as docs/security.md documents it; the warning points to the
// ways that keep it out of argv. note, when given, comes first: user add
// and passwd say whose password -p is, since "user add bob -p x" reads
// as if x were bob's.
func (a *app) warnArgvPassword(note string) {
	if a.password == "" || a.argvPasswordWarned {
		return
	}
	a.argvPasswordWarned = true
	fmt.Fprintf(a.stderr, "narad: warning: %sa password given with --password/-p is visible to other local users (ps) and stays in shell history; "+
		"use NARAD_PASS or a saved context (narad ctx add NAME --password-stdin) instead\n", note)
}

// passwordNote is warnArgvPassword's note for a command that reads a new
// password: -p is what (the password you sign in with), not newOne.
func passwordNote(what, newOne string) string {
	return fmt.Sprintf("--password/-p is %s, not %s (that is read from the prompt or --password-stdin); and ", what, newOne)
}

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
