package config

import "path/filepath"

// ApplyDev turns cfg into the single-machine developer preset: loopback only
// (so turning authentication off exposes nothing), data under the user's
// home so it survives across working directories, and readable text logs.
func ApplyDev(cfg *Config, home string) {
	cfg.Dev = true
	cfg.HTTP.Addr = "127.0.0.1:7942"
	cfg.Cluster.Addr = "127.0.0.1:7943"
	cfg.Security.Enabled = false
	cfg.DataDir = filepath.Join(home, ".narad", "data")
	cfg.Log.Format = "text"
}
