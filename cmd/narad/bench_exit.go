package main

import (
	"context"
	"fmt"
)

// errBenchInterrupted ends a bench cut short by Ctrl-C: run exits 130, the
// convention for SIGINT, after the partial report. It wraps
// context.Canceled, so a general "interrupted" rule recognises it too.
var errBenchInterrupted = fmt.Errorf("interrupted: %w", context.Canceled)

// exitInterrupted is the exit status of a command stopped by SIGINT.
const exitInterrupted = 130
