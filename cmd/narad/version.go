package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
)

// version is set at build time: go build -ldflags "-X main.version=1.2.3".
var version = "dev"

func versionLine() string {
	return fmt.Sprintf("narad %s (%s)", version, runtime.Version())
}

func (a *app) versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(a.stdout, versionLine())
			return err
		},
	}
}
