package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/narad-io/narad/client"
)

// Exit codes. Scripts branch on them, so they are part of the CLI's
// contract and listed in "narad --help" (exitCodesHelp).
const (
	exitOK       = 0
	exitError    = 1
	exitNotFound = 3 // the topic, child, user, member or context does not exist (HTTP 404)
	exitAuth     = 4 // missing or wrong credentials (401), or not allowed (403)
	// A command stopped by a signal exits 128 + the signal's number, as a
	// shell reports a process killed by it: 130 for SIGINT (Ctrl-C), 143
	// for SIGTERM.
	exitSignalBase = 128
)

const exitCodesHelp = `Exit codes:
  0    success
  1    error
  3    not found: the topic, child, user, member or context does not exist
  4    authentication failed (401) or not allowed (403)
  130  interrupted (SIGINT, Ctrl-C); 143 for SIGTERM`

// signalError is how a command ends when a signal stopped it.
type signalError struct{ sig syscall.Signal }

func (e *signalError) Error() string { return "interrupted by " + e.sig.String() }

// notFoundError is a local "does not exist" (a context, say), so it exits
// like a 404 does.
type notFoundError struct{ msg string }

func (e *notFoundError) Error() string { return e.msg }

func notFound(format string, args ...any) error {
	return &notFoundError{msg: fmt.Sprintf(format, args...)}
}

// exitCode maps the error a command returned to the process's exit code.
func exitCode(err error) int {
	var sigErr *signalError
	var nf *notFoundError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &sigErr):
		return exitSignalBase + int(sigErr.sig)
	case errors.Is(err, errBenchInterrupted):
		return exitInterrupted
	case errors.As(err, &nf):
		return exitNotFound
	}
	switch client.StatusOf(err) {
	case http.StatusNotFound:
		return exitNotFound
	case http.StatusUnauthorized, http.StatusForbidden:
		return exitAuth
	}
	return exitError
}

// withSignals returns a context cancelled by SIGINT or SIGTERM, so a broker
// shuts down gracefully and a long-running client command stops cleanly:
// it prints what it has and returns interrupted(ctx), which exits 130 (or
// 143). Every long-running command — sub, replay, pub --count, bench —
// goes through it.
func withSignals(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			sig, _ := s.(syscall.Signal)
			cancel(&signalError{sig: sig})
		case <-done:
		}
	}()
	// Idempotent, as signal.NotifyContext's stop is: bench stops the
	// handler at the first Ctrl-C (so a second one kills it) and again on
	// return.
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			signal.Stop(ch)
			close(done)
			cancel(context.Canceled)
		})
	}
}

// interrupted is the error a command stopped by a signal returns (see
// withSignals), or nil when no signal ended ctx. A long-running command
// calls it once it has stopped and printed what it had:
//
//	if err := interrupted(ctx); err != nil {
//		return err // exit 130 on Ctrl-C
//	}
func interrupted(ctx context.Context) error {
	var sigErr *signalError
	if errors.As(context.Cause(ctx), &sigErr) {
		return sigErr
	}
	return nil
}
