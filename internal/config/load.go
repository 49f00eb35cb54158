package config

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"slices"
)

// LoadArgs says where each layer comes from.
type LoadArgs struct {
	// File is the JSON config file; empty means none.
	File string
	// Flags holds only the flags the user set, keyed by setting key
	// ("http.addr", "data_dir", "cluster.peers", …) with the text typed.
	// Secrets are refused here just as in the file.
	Flags map[string]string
	// LookupEnv reads the environment; nil means os.LookupEnv. Tests pass a
	// map so they never depend on the machine's environment.
	LookupEnv func(string) (string, bool)
	// Dev applies ApplyDev to the defaults before the other layers, so a
	// file, the environment or a flag can still override the preset.
	Dev bool
	// Home is the user's home directory for Dev; it must be set when Dev is.
	Home string
}

// Load builds the configuration from defaults, file, environment and flags,
// in that order, then fills the admin password if needed and validates.
func Load(args LoadArgs) (Config, error) {
	cfg := Default()
	host := cfg.NodeID
	cfg.NodeID = "" // so the layers below show whether anyone set it
	if args.Dev {
		if args.Home == "" {
			return Config{}, errors.New("dev mode needs a home directory for its data")
		}
		ApplyDev(&cfg, args.Home)
	}
	if args.File != "" {
		if err := applyFile(&cfg, args.File); err != nil {
			return Config{}, err
		}
	}
	lookupEnv := args.LookupEnv
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	if err := applyEnv(&cfg, lookupEnv); err != nil {
		return Config{}, err
	}
	if err := applyFlags(&cfg, args.Flags); err != nil {
		return Config{}, err
	}
	if cfg.NodeID == "" {
		cfg.NodeID, cfg.NodeIDDefaulted = host, true
	}
	if cfg.Security.Enabled && cfg.Security.AdminPassword == "" {
		// A fixed default password would be the same on every install;
		// a random one is safe and the server prints it once.
		cfg.Security.AdminPassword = rand.Text()
		cfg.Security.AdminPasswordGenerated = true
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

func applyEnv(c *Config, lookupEnv func(string) (string, bool)) error {
	for _, s := range settings {
		text, ok := lookupEnv(s.env)
		if !ok {
			continue
		}
		if err := s.set(c, text); err != nil {
			return fmt.Errorf("environment %s: %w", s.env, err)
		}
	}
	return nil
}

func applyFlags(c *Config, flags map[string]string) error {
	keys := make([]string, 0, len(flags))
	for k := range flags {
		keys = append(keys, k)
	}
	slices.Sort(keys) // deterministic: the first bad flag is always the same one
	for _, key := range keys {
		s, ok := lookup(key)
		if !ok {
			return fmt.Errorf("flag for unknown setting %q", key)
		}
		if s.secret {
			return fmt.Errorf("%s is a secret and is read from the environment only (%s), not from a flag", key, s.env)
		}
		if err := s.set(c, flags[key]); err != nil {
			return fmt.Errorf("flag %s: %w", key, err)
		}
	}
	return nil
}
