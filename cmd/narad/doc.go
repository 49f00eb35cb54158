// Command narad is Narad's single binary: it runs the broker (serve,
// server start) and is the operator's client for the /v1 HTTP API (topic,
// pub, sub, replay, bench, user, cluster, server report). It owns argument
// parsing, human units and output, and the saved client contexts (ctx);
// server configuration lives in internal/config and the wire contract in
// client.
//
// One file per command group, split by idea as <group>_<idea>.go when it
// outgrows one (bench_*.go); main.go holds the root and the plumbing every
// command shares (I/O, environment, error reporting). Durations are read
// and printed with internal/duration, the syntax the server's settings and
// the API's wait take too. Record headers given with pub --header are
// held to internal/header's rules, the broker's own, so the CLI refuses
// what the API refuses.
//
// Progress lines go to stderr only when stdout and stderr are both
// terminals, and a question is asked only when stdin is one (a terminal
// driver answers, which /dev/null does not).
//
// What scripts may rely on: exit codes 0 ok, 1 error, 3 not found, 4
// authentication or permission, 128+signal (130 on Ctrl-C) for a command
// stopped by a signal (exit.go, listed in "narad --help"); -o json prints
// the API's own JSON (stream commands one object per line); every client
// command waits for a starting or briefly unavailable node for at most
// --retry-for, saying so once on stderr (waiter.go). Shell completion asks
// the server once, quickly, and offers nothing rather than fail.
//
// bench never consumes from a topic it did not create: without TOPIC it
// works in a scratch topic of its own, which it deletes however it ends;
// with TOPIC it only produces, and only into a topic that holds no records
// unless told --allow-nonempty.
package main
