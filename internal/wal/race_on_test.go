//go:build race

package wal

// raceEnabled: the race detector changes allocation counts, so allocation
// assertions only hold in a normal build.
const raceEnabled = true
