package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// startCPUProfile profiles the bench process itself. On one machine the
// load generator and the server share the cores, so a figure is only
// understood with both sides' CPU per message: the server's from its
// pprof address, the client's from here.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "--cpuprofile: %v\n", err)
		}
	}, nil
}
