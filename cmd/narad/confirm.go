package main

import (
	"bufio"
	"errors"
	"fmt"
	"strings"
)

// confirm asks question on a terminal and returns nil only for "y" or
// "yes". Anywhere else (a script, a pipe, </dev/null: stdinTTY is false)
// it asks nobody and refuses with refusal, which names the --yes that a
// script passes instead: a destructive command never runs because a pipe
// happened to supply a "y". cancelled is the error of a declined question.
func (a *app) confirm(question, refusal, cancelled string) error {
	if !a.stdinTTY {
		return errors.New(refusal)
	}
	fmt.Fprintf(a.stderr, "%s [y/N] ", question)
	line, _ := bufio.NewReader(a.stdin).ReadString('\n')
	if ans := strings.ToLower(strings.TrimSpace(line)); ans != "y" && ans != "yes" {
		return errors.New(cancelled)
	}
	return nil
}
