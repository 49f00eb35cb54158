// Package config owns the broker's configuration: the one Config struct, its
// compiled defaults, and the layering that builds it at start. Layers apply
// in order, later wins:
//
//	compiled defaults → JSON file (--config) → NARAD_* environment → flags
//
// Only the flags the operator actually set are passed in, so an unset flag
// never masks the environment. Secrets (NARAD_CLUSTER_SECRET,
// NARAD_ADMIN_PASSWORD) come from the environment only: a config file is
// often committed or copied around, the environment is not.
//
// Every setting is described once, in the table in settings.go; the file
// keys, the environment names, the parsing and the help text all come from
// that table. The package also validates the result (Validate), offers the
// developer preset (ApplyDev) and builds the process logger (NewLogger).
package config
