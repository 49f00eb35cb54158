package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/narad-io/narad/internal/config"
	"github.com/narad-io/narad/internal/server"
	"github.com/spf13/cobra"
)

// serverRun runs the node until ctx is cancelled. It is a variable so cmd
// tests can observe the configuration serve builds without starting a node.
var serverRun = server.Run

// flagNames gives a few settings shorter flag names than the generated
// "section-key" spelling, where the section adds nothing for the operator.
var flagNames = map[string]string{
	"cluster.peers":           "peers",
	"cluster.initial_members": "initial-members",
	"cluster.advertise":       "advertise",
	"http.pprof_addr":         "pprof-addr",
}

// defaultText describes defaults that are not a fixed value.
var defaultText = map[string]string{
	"node_id":           "the host name",
	"http.pprof_addr":   "off",
	"cluster.advertise": "derived from the cluster address",
}

// settingFlag derives a flag name from a setting key:
// "http.read_timeout" → "http-read-timeout", "data_dir" → "data-dir".
func settingFlag(key string) string {
	if name, ok := flagNames[key]; ok {
		return name
	}
	return strings.NewReplacer(".", "-", "_", "-").Replace(key)
}

// serverFlags registers one flag per non-secret setting, typed like the
// setting (a bool flag takes no value: "--security-enabled"). Values go
// to config.Load as typed, so a flag means exactly what the same value
// means in the environment or the file; a malformed one is refused while
// flags are parsed, naming the flag.
type serverFlags struct {
	configFile string
	values     map[string]*settingValue // setting key → flag value
}

func (f *serverFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&f.configFile, "config", "", "JSON configuration file")
	f.values = map[string]*settingValue{}
	for _, s := range config.Settings() {
		if s.Secret {
			continue // environment only, on purpose
		}
		def := s.Default
		if d, ok := defaultText[s.Key]; ok {
			def = d
		} else if def == "" {
			def = "none"
		}
		v := &settingValue{key: s.Key, kind: s.Kind}
		f.values[s.Key] = v
		flag := fs.VarPF(v, settingFlag(s.Key), "", fmt.Sprintf("%s (env %s, default %s)", s.Usage, s.Env, def))
		if s.Kind == config.KindBool {
			flag.NoOptDefVal = "true" // "--security-enabled" alone turns it on
		}
	}
}

// settingValue is one setting's flag: the text as typed, checked by the
// setting's own parser.
type settingValue struct {
	key, kind string
	text      string
}

func (v *settingValue) Set(s string) error {
	if err := config.CheckSetting(v.key, s); err != nil {
		return err
	}
	v.text = s
	return nil
}

func (v *settingValue) String() string { return v.text }

// Type is the setting's kind as help shows it ("bool" flags show none).
func (v *settingValue) Type() string {
	if v.kind == config.KindList {
		return "list"
	}
	return v.kind
}

// set returns only the flags the user typed, keyed by setting, so unset
// flags never hide the environment or the file.
func (f *serverFlags) set(cmd *cobra.Command) map[string]string {
	out := map[string]string{}
	for key, v := range f.values {
		if cmd.Flags().Changed(settingFlag(key)) {
			out[key] = v.text
		}
	}
	return out
}

const serveLong = `Run a broker node until SIGINT or SIGTERM.

Configuration layers, later wins: compiled defaults, the --config JSON file,
NARAD_* environment variables, then flags. Secrets come from the environment
only: NARAD_CLUSTER_SECRET and NARAD_ADMIN_PASSWORD (when unset and security
is on, a random admin password is generated and printed at start).`

func (a *app) serveCmd() *cobra.Command {
	var f serverFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run a broker node (production entry point)",
		Long:  serveLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runServer(cmd, &f, false)
		},
	}
	f.register(cmd)
	return cmd
}

func (a *app) serverCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Run a broker node; report on the topics of a running one",
	}
	var f serverFlags
	var dev bool
	start := &cobra.Command{
		Use:   "start",
		Short: "Run a broker node; --dev for a local one without authentication",
		Long: serveLong + `

--dev is for one machine: it listens on loopback only, turns authentication
off, keeps data in ~/.narad/data and logs text. Explicit settings still win.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runServer(cmd, &f, dev)
		},
	}
	f.register(start)
	start.Flags().BoolVar(&dev, "dev", false, "developer mode: loopback, no auth, data in ~/.narad/data")
	cmd.AddCommand(start, a.clientFlags(a.serverReportCmd()))
	return cmd
}

func (a *app) runServer(cmd *cobra.Command, f *serverFlags, dev bool) error {
	args := config.LoadArgs{File: f.configFile, Flags: f.set(cmd), LookupEnv: a.lookupEnv, Dev: dev}
	if dev {
		home, err := a.home()
		if err != nil {
			return fmt.Errorf("--dev needs a home directory: %w", err)
		}
		args.Home = home
	}
	cfg, err := config.Load(args)
	if err != nil {
		return err
	}
	tuneMemory(a.lookupEnv, cgroupMemoryMax)
	ctx, stop := withSignals(cmd.Context())
	defer stop()
	err = serverRun(ctx, cfg)
	if errors.Is(err, context.Canceled) && cmd.Context().Err() == nil {
		return nil // stopped by a signal: a clean shutdown
	}
	return err
}
