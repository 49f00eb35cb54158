// Package history keeps, for each topic, a short ring of samples of its
// figures — the sum over its partitions of the high watermark and the
// consumer frontier, and the backlog between them — taken every Every
// (10 s) over the last Window (15 minutes), in memory only, so that
// GET /v1/topics/{topic}/stats/history can answer rates and lag without
// an external database.
//
// Invariants: a ring never holds more than Window/Every samples; a topic
// deleted, or deleted and created again (another incarnation: the Raft
// index of its create), loses its samples, so a rate never compares the
// figures of two topics of one name; a rate across a figure that went
// backwards (a recovery shortfall) is left out, never negative; the ring
// of a topic created while the node samples starts at its creation with
// the zero figures it had then, so its first sample has rates too (a
// burst before it is not lost). Samples come from what describe shows,
// which never opens a partition log.
package history
