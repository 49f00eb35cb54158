package wal

// Stats counts the WAL's group commits since Open. Records/Syncs is how many
// records one fdatasync carried on average; Appends/Syncs how many waiting
// callers it released.
type Stats struct {
	Syncs   uint64 // batches made durable, one write and one fdatasync each
	Records uint64 // records made durable
	Appends uint64 // Append calls made durable
}

// Stats returns the counters; each only grows. Failed groups are not
// counted (Failures counts them).
func (w *WAL) Stats() Stats {
	return Stats{Syncs: w.syncs.Load(), Records: w.records.Load(), Appends: w.appends.Load()}
}
