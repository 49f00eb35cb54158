// Package server wires one Narad node together and owns its lifecycle: the
// boot order of 06-cluster.md (metastore, then storage and broker, then the
// startup reconcile, then readiness) and graceful shutdown (stop accepting,
// drain HTTP within the grace period, stop dispatch, close logs cleanly so
// hwm boundaries are written, close the metastore). Nothing else lives here.
package server
