// Command narad is Narad's single binary: it runs the broker (serve,
// server start) and is the operator's client for the /v1 HTTP API (topic,
// pub, sub, replay, bench, user, cluster, server report). It owns argument
// parsing, human units and output, and the saved client contexts (ctx);
// server configuration lives in internal/config and the wire contract in
// client.
//
// One file per command group; main.go holds the root and the plumbing every
// command shares (I/O, environment, error reporting).
package main
