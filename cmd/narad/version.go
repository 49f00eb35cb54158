package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// version is set by a release build: go build -ldflags "-X main.version=1.2.3".
// Left empty, the version comes from the build info Go records (see
// buildVersion), so a source build says what it was built from.
var version = ""

// revision is the commit of a build Go could not read it from: the image
// is built without .git, and its Dockerfile stamps REVISION here
// (-X main.revision=...). The commit Go records, when there is one, wins.
var revision = ""

// readBuildInfo is debug.ReadBuildInfo; a variable so tests can give the
// information a real build carries (the test binary has none).
var readBuildInfo = debug.ReadBuildInfo

// buildInfo is what "narad version" reports.
type buildInfo struct {
	Version    string `json:"version"`
	Commit     string `json:"commit,omitempty"`
	CommitTime string `json:"commit_time,omitempty"`
	Modified   bool   `json:"modified"`
	Go         string `json:"go"`
}

// buildVersion is the release version when one was stamped; else the
// module version Go records ("v1.2.3" for go install …@v1.2.3, a
// pseudo-version such as v0.0.0-20260102030405-abcdef123456 for a build
// in a git checkout) with the commit and whether the tree had local
// changes; "devel" when Go recorded nothing (go run, -buildvcs=false).
func buildVersion() buildInfo {
	b := buildInfo{Version: version, Go: runtime.Version()}
	if bi, ok := readBuildInfo(); ok {
		if b.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			b.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Commit = s.Value
			case "vcs.time":
				b.CommitTime = s.Value
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
	}
	if b.Commit == "" {
		b.Commit = revision
	}
	if b.Version == "" {
		b.Version = "devel"
	}
	return b
}

// versionLine is "narad v0.3.0 (commit 0123456789ab, modified, go1.26.0)".
func versionLine() string {
	b := buildVersion()
	var details []string
	if b.Commit != "" {
		details = append(details, "commit "+b.Commit[:min(len(b.Commit), 12)])
	}
	if b.CommitTime != "" {
		details = append(details, b.CommitTime)
	}
	if b.Modified {
		details = append(details, "modified")
	}
	details = append(details, b.Go)
	return fmt.Sprintf("narad %s (%s)", b.Version, strings.Join(details, ", "))
}

func (a *app) versionCmd() *cobra.Command {
	var out *outputFlags
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, the commit it was built from, and the Go version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := out.format()
			if err != nil {
				return err
			}
			if format == formatJSON {
				return printJSON(a.stdout, buildVersion())
			}
			_, err = fmt.Fprintln(a.stdout, versionLine())
			return err
		},
	}
	out = addOutputFlags(cmd)
	return cmd
}
