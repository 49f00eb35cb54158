package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/narad-io/narad/internal/config"
)

// The configuration reference, docs/configuration.md, is generated from
// the settings table (config.Settings) together with the flag names and
// default descriptions serve registers, which live here: the table in
// that file between the markers below is configReference's output, and
// TestConfigurationDoc fails when it differs. Regenerate it with
//
//	go generate ./cmd/narad/
//
//go:generate go test -count=1 -run ^TestConfigurationDoc$ . -args -update

// Markers around the generated part of docs/configuration.md.
const (
	configDocBegin = "<!-- BEGIN GENERATED: settings table (go generate ./cmd/narad/) -->"
	configDocEnd   = "<!-- END GENERATED: settings table -->"
)

// configReference renders every setting as one Markdown table row, in
// the table's order.
func configReference() string {
	var b strings.Builder
	b.WriteString("| File key | Environment | Flag | Type | Default | Meaning |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, s := range config.Settings() {
		flag := "`--" + settingFlag(s.Key) + "`"
		def := s.Default
		switch d, ok := defaultText[s.Key]; {
		case s.Secret:
			flag, def = "none: environment only", "none"
		case ok:
			def = d
		case def == "":
			def = "none"
		default:
			def = "`" + def + "`" + readable(s)
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | %s | %s | %s | %s |\n",
			s.Key, s.Env, flag, s.Kind, def, strings.ReplaceAll(s.Usage, "|", `\|`))
	}
	return b.String()
}

// readable adds the default in larger units where the table's own
// spelling (bytes, milliseconds) is hard to read.
func readable(s config.Setting) string {
	n, err := strconv.ParseInt(s.Default, 10, 64)
	if err != nil || n == 0 {
		return ""
	}
	switch {
	case s.Kind == config.KindDuration:
		return " (" + formatMs(n) + ")"
	case strings.HasSuffix(s.Key, "_bytes") && n%(1<<20) == 0:
		return fmt.Sprintf(" (%d MiB)", n>>20)
	}
	return ""
}
